"""`earthverse replay-tools --release R --trajectories <dir> --out report.json [--jobs N]`."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from dataset.source import recorded_runs_dir
from evaluator.cli.base import Command, CommandError, add_trajectories_argument, positive_int
from evaluator.tools.replay import fidelity, replay_tools, report_json
from loaders.atomic import write_text_atomic
from loaders.release import open_release


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--release", required=True, help="the built release folder (or Hub repo id)")
    add_trajectories_argument(parser)
    parser.add_argument("--out", type=Path, required=True, help="where to write the JSON report")
    parser.add_argument("--jobs", type=positive_int, default=2, help="worker processes replaying the runs")


def run(arguments: argparse.Namespace) -> int:
    trajectories = recorded_runs_dir(arguments.trajectories)
    if not trajectories.is_dir():
        raise CommandError(f"no trajectories folder at {arguments.trajectories}")
    started = time.perf_counter()
    report = replay_tools(open_release(arguments.release), trajectories, jobs=arguments.jobs)
    report.seconds = round(time.perf_counter() - started, 1)
    write_text_atomic(arguments.out, [report_json(report), "\n"])
    shares = fidelity(report)
    for name, figures in report.by_tool.items():
        print(f"{name}: {figures.identical}/{figures.compared} identical ({shares[name]:.1%})")
    print(f"{report.runs} runs replayed in {report.seconds} s. Report: {arguments.out}")
    return 0


COMMAND = Command(
    help="Replay the recorded calls of the deterministic tools and compare their outputs exactly.",
    add_arguments=add_arguments,
    run=run,
)
