"""`earthverse leaderboard --release R --scores scores.jsonl [--format table|csv|json] [--out FILE]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluator.cli.base import Command, CommandError
from evaluator.cli.tables import print_leaderboard, render_leaderboard
from evaluator.scoring.metrics import summarize
from evaluator.scoring.pipeline import not_run
from evaluator.scoring.scores import SystemScore, TaskScore
from evaluator.scoring.scores_io import by_system, read_scores
from loaders.atomic import write_text_atomic
from loaders.models import Task
from loaders.release import open_release


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--release", required=True, help="the release the scores are of (for task metadata)")
    parser.add_argument(
        "--scores",
        type=Path,
        required=True,
        help="scores.jsonl of `earthverse score` or `run` (a task without a score counts as zero)",
    )
    parser.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="terminal table, CSV or JSON"
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="write the leaderboard here instead of printing"
    )


def run(arguments: argparse.Namespace) -> int:
    release = open_release(arguments.release)
    scores = read_scores(arguments.scores)
    if not scores:
        raise CommandError(f"--scores {arguments.scores}: holds no task score")
    _refuse_other_versions(scores, release.version, arguments.scores)
    systems = [_system_row(system_scores, release.tasks) for system_scores in by_system(scores).values()]
    if arguments.out:
        write_text_atomic(arguments.out, [render_leaderboard(systems, arguments.format)])
        print(f"leaderboard: {arguments.out}")
    elif arguments.format == "table":
        print_leaderboard(systems)
    else:
        print(render_leaderboard(systems, arguments.format), end="")
    return 0


def _refuse_other_versions(scores: list[TaskScore], version: str, path: Path) -> None:
    """Scores computed against another release version (other tasks or packages) are not ranked against
    this one; scores that record no version (written before scores did) are taken as they are."""
    recorded = {score.dataset_version for score in scores if score.dataset_version is not None}
    other = sorted(recorded - {version})
    if other:
        raise CommandError(
            f"--scores {path}: scored against dataset version {', '.join(map(repr, other))}, not this "
            f"release's {version!r}; score the submissions again against it"
        )


def _system_row(scores: list[TaskScore], tasks: list[Task]) -> SystemScore:
    """A system's row over every task of the release: a task without a score counts as zero."""
    system_id = scores[0].system_id
    scored = {score.task_id for score in scores}
    missing = [task for task in tasks if task.task_id not in scored]
    if missing:
        print(
            f"{system_id}: {len(missing)} of {len(tasks)} tasks have no score; they count as zero",
            file=sys.stderr,
        )
    filled = [*scores, *(not_run(system_id, task, "no score for this task") for task in missing)]
    return summarize(filled, tasks, scores[0].system_name)


COMMAND = Command(
    help="Rank systems from task scores (terminal table, CSV or JSON).", add_arguments=add_arguments, run=run
)
