"""`earthverse build --source <archive or folder> --out <dir> [--jobs N]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from dataset.build import build_release
from dataset.gt_runner import DEFAULT_TIMEOUT_S
from evaluator.cli.base import Command, positive_float, positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source", type=Path, required=True, help="the source release: .tar.xz archive or folder"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder to write the canonical release into")
    parser.add_argument(
        "--jobs", type=positive_int, default=2, help="parallel workers for the package audit and GT programs"
    )
    parser.add_argument(
        "--timeout", type=positive_float, default=DEFAULT_TIMEOUT_S, help="seconds per GT program"
    )
    parser.add_argument("--force", action="store_true", help="rebuild even when the output is up to date")
    parser.add_argument(
        "--cache-dir", type=Path, default=None, help="where archives are unpacked (default .cache/)"
    )


def run(arguments: argparse.Namespace) -> int:
    result = build_release(
        arguments.source,
        arguments.out,
        jobs=arguments.jobs,
        timeout_s=arguments.timeout,
        force=arguments.force,
        cache_dir=arguments.cache_dir,
    )
    totals = result.report.totals
    state = "up to date" if result.up_to_date else f"built in {result.seconds:.1f} s"
    print(
        f"{result.out}: {state}; {totals.tasks} tasks, {totals.events} events; ground truth "
        f"regenerated {totals.regenerated}, mismatch {totals.mismatch}, failed {totals.failed}; "
        f"release-ready {totals.release_ready}. Report: {result.out / 'release_report.md'}"
    )
    return 0


COMMAND = Command(
    help="Build the canonical release, its gate report and the Hub folders.",
    add_arguments=add_arguments,
    run=run,
)
