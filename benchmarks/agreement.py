"""Agreement of our answer-unit score U with the paper's judged unit accuracy, over all recorded runs,
and the time it takes: the scoring (decomposition included) of all runs, median of several repeats,
and one 405-task submission (one recorded run per task).

Targets: Pearson >= 0.85 and MAE <= 10 against the paper; all runs well under 30 s; one
submission under 2 s.
Run: python benchmarks/agreement.py [--runs 3] [--archive PATH] [--worst 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from dataset.source import default_archive, open_source
from evaluator.cli.agreement import render
from evaluator.scoring.agreement import AgreementReport, RecordedRun, agreement, read_recorded_runs


def _timed(records: list, runs: list[RecordedRun], worst: int = 0) -> tuple[float, AgreementReport]:
    started = time.perf_counter()
    report = agreement(records, runs, worst)
    return time.perf_counter() - started, report


def _one_submission(records: list, runs: list[RecordedRun]) -> list[RecordedRun]:
    """One answer per task, as a full submission has: a recorded one where there is, else an empty one."""
    recorded = {run.task_id: run for run in runs}
    return [
        recorded.get(record.task_id)
        or RecordedRun(task_id=record.task_id, system_id="empty", final_answer={}, paper_unit_accuracy=0)
        for record in records
    ]


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=3)
    options.add_argument("--archive", type=Path, default=default_archive())
    options.add_argument("--worst", type=int, default=20)
    arguments = options.parse_args()
    release = open_source(arguments.archive)
    records = release.records
    runs = read_recorded_runs(release.trajectories_dir)
    timings, report = [], None
    for _ in range(arguments.runs):
        seconds, report = _timed(records, runs, arguments.worst)
        timings.append(seconds)
    submission_runs = _one_submission(records, runs)
    submission = statistics.median(_timed(records, submission_runs)[0] for _ in range(arguments.runs))
    assert report is not None
    print(render(report))
    print(f"\njudge-only runs (no scorable unit): {report.judge_only}")
    print(f"scoring all {len(runs)} runs: median {statistics.median(timings):.2f} s of {arguments.runs}")
    print(f"one {len(submission_runs)}-task submission: median {submission:.2f} s")


if __name__ == "__main__":
    main()
