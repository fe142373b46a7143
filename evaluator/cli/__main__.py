"""`python -m evaluator.cli`: the `earthverse` command without installing its script."""

import sys

from evaluator.cli import main

sys.exit(main())
