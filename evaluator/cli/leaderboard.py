"""`earthverse leaderboard --release R --scores scores.jsonl [--format table|csv|json] [--out FILE]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from evaluator.cli.base import Command
from evaluator.cli.tables import print_leaderboard, render_leaderboard
from evaluator.scoring.metrics import summarize
from evaluator.scoring.scores_io import by_system, read_scores
from loaders.atomic import write_text_atomic
from loaders.release import open_release


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--release", required=True, help="the release the scores are of (for task metadata)")
    parser.add_argument(
        "--scores", type=Path, required=True, help="scores.jsonl written by `earthverse score`"
    )
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table")
    parser.add_argument("--out", type=Path, default=None, help="write CSV/JSON here instead of printing")


def run(arguments: argparse.Namespace) -> int:
    tasks = open_release(arguments.release).tasks
    systems = [
        summarize(scores, tasks, scores[0].system_name)
        for scores in by_system(read_scores(arguments.scores)).values()
    ]
    if arguments.format == "table":
        print_leaderboard(systems)
        return 0
    text = render_leaderboard(systems, arguments.format)
    if arguments.out:
        write_text_atomic(arguments.out, [text])
    else:
        print(text, end="")
    return 0


COMMAND = Command(
    help="Rank systems from task scores (terminal table, CSV or JSON).", add_arguments=add_arguments, run=run
)
