"""`earthverse demo [--out DIR]`: the scripted agent on the embedded DEMO package, offline, scored.

Needs no source release and no network: it writes the invented demo release, runs the scripted baseline
on its two tasks, scores them against the demo ground truth and prints where everything is.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from evaluator.agents.registry import agent_from_option
from evaluator.cli.base import Command, CommandError
from evaluator.cli.run import report, score_locally
from evaluator.demo.builder import build_demo_release
from evaluator.harness.runner import Runner, RunOptions
from loaders.release import open_release

AGENT = "scripted"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", type=Path, default=None, help="a new or empty folder for the demo (default: a temp folder)"
    )


def run(arguments: argparse.Namespace) -> int:
    out = arguments.out or Path(tempfile.mkdtemp(prefix="earthverse-demo-"))
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CommandError(f"--out {out}: not a new or empty folder; the demo writes release/ and run/ there")
    release_dir = build_demo_release(out / "release")
    release = open_release(release_dir)
    print(f"demo release (an invented DEMO package, not EarthVerse data): {release_dir}")
    options = RunOptions(out=out / "run", concurrency=2, progress=False)
    summary = Runner(release, agent_from_option(AGENT), AGENT, options).run(release.tasks)
    report(summary)
    score_locally(release, release.tasks, summary, None)
    return 0


COMMAND = Command(
    help="Run the scripted agent on the embedded DEMO package, offline, and score it.",
    add_arguments=add_arguments,
    run=run,
)
