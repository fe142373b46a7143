"""`earthverse agreement --release R --trajectories <dir> [--out agreement.json]`: our deterministic U
against the paper judge's unit accuracy, run by run over the recorded runs."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataset.source import recorded_runs_dir
from evaluator.cli.base import Command, CommandError, add_trajectories_argument, number_above
from evaluator.scoring.agreement import AgreementReport, Figures, agreement, read_recorded_runs
from loaders.atomic import write_text_atomic
from loaders.release import open_ground_truth, open_release


@dataclass(frozen=True)
class ReleaseTask:
    """What the agreement needs of a task: its public prompt and type, and its hidden ground truth."""

    task_id: str
    task_type: str
    question: str
    ground_truth: dict[str, Any]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--release", required=True, help="a built release folder (with its hidden ground truth)"
    )
    add_trajectories_argument(parser)
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    parser.add_argument(
        "--worst",
        type=number_above(int, 0, or_equal=True),
        default=20,
        help="how many most-disagreeing runs to list",
    )


def run(arguments: argparse.Namespace) -> int:
    release, hidden = open_release(arguments.release), open_ground_truth(arguments.release)
    tasks = [
        ReleaseTask(
            task.task_id,
            task.task_type,
            task.question,
            hidden[task.task_id].ground_truth.model_dump(exclude_unset=True),
        )
        for task in release.tasks
    ]
    runs = read_recorded_runs(recorded_runs_dir(arguments.trajectories))
    if not runs:
        raise CommandError(
            f"--trajectories {arguments.trajectories}: no recorded runs (<system>/<task_id>.json)"
        )
    report = agreement(tasks, runs, worst=arguments.worst)
    print(render(report))
    if arguments.out:
        write_text_atomic(arguments.out, [json.dumps(as_json(report), indent=2), "\n"])
    return 0


def as_json(report: AgreementReport) -> dict[str, Any]:
    """The overall figures at the top level (n, pearson, spearman, mae, ...), then the rest of the
    report. PRIVATE: the worst runs carry their units, ground-truth values included."""
    return {**report.overall.model_dump(), **report.model_dump(mode="json", exclude={"overall"})}


def render(report: AgreementReport) -> str:
    """The figures overall and per task type, then the most-disagreeing runs."""
    lines = [_line("overall", report.overall)]
    lines += [_line(f"  {name}", figures) for name, figures in sorted(report.by_task_type.items())]
    lines.append(_line("reference: paper unit accuracy vs its H", report.paper_holistic))
    lines.append(f"\nthe {len(report.worst)} runs that disagree most (ours - paper):")
    lines += [
        f"  {run.task_id}  {run.system_id:<24} ours {_number(run.ours)}  paper {run.paper:5.1f}"
        for run in report.worst
    ]
    return "\n".join(lines)


def _line(name: str, figures: Figures) -> str:
    return (
        f"{name:<42} n={figures.n:5d}  pearson={_number(figures.pearson, 3)}  "
        f"spearman={_number(figures.spearman, 3)}  mae={_number(figures.mae)}"
    )


def _number(value: float | None, digits: int = 1) -> str:
    return "   -" if value is None else f"{value:.{digits}f}"


COMMAND = Command(
    help="Compare deterministic answer-unit scores with the paper judge's unit accuracy on recorded runs.",
    add_arguments=add_arguments,
    run=run,
)
