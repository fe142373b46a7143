"""The `earthverse` command starts without importing what only some commands need: litellm (a model
client and price table, seconds to import) and scipy (agreement figures) load when a command uses them,
before its timed work starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def _printed(program: str) -> str:
    """What `program` prints, run in a fresh interpreter (this one has imported everything already)."""
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=PROJECT, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


def test_help_lists_every_command_without_importing_litellm_or_scipy() -> None:
    printed = _printed(
        "import sys\n"
        "from evaluator.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(name for name in ('litellm', 'scipy') if name in sys.modules))\n"
    )
    *usage, loaded = printed.strip().splitlines()
    assert loaded == "[]"
    listed = "\n".join(usage)
    assert all(name in listed for name in ("build", "import-trajectories", "score", "agreement", "demo"))


def test_a_litellm_agent_loads_litellm_offline_before_its_first_task() -> None:
    printed = _printed(
        "import os, sys\n"
        "from evaluator.agents.registry import AgentOptions, agent_from_option\n"
        "from evaluator.scoring.cost import price\n"
        "before = 'litellm' in sys.modules\n"
        "agent_from_option('litellm:openai/bench', AgentOptions(tool_mode='native'))\n"
        "print(before, 'litellm' in sys.modules, os.environ['LITELLM_LOCAL_MODEL_COST_MAP'])\n"
        "print(price(['openai/gpt-4o'], 1000, 100).source)\n"
    )
    assert printed.split() == ["False", "True", "True", "recomputed"]
