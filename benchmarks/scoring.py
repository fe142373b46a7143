"""Measure deterministic rescoring (`Scorer.score` with no judge) of one 405-task submission, and
beside it, as the peer floor, reading and validating that same submission from disk. The first
scoring also works out each task's units and each package's file list (once per release); the
median is of the scorings after it, as a server rescoring submission after submission sees.

Target (issue 3): at most 2 s per 405-task submission. The submission is built from the recorded runs:
the first recorded run of every task that has one, and for the others a recorded run relabelled to
that task (its answer then scores low, which costs the scorer the same work).
Run: python benchmarks/scoring.py [--runs 5] [--release .cache/test-build]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from dataset.source import default_archive, open_source
from evaluator.scoring.judge import NoJudge
from evaluator.scoring.pipeline import Scorer
from evaluator.traces.io import read_submission, write_submission
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import Submission, SubmissionMetadata, SystemIdentity, Trace
from loaders.release import Release, open_ground_truth, open_release

PROJECT = Path(__file__).resolve().parents[1]
TARGET_S = 2.0
SYSTEM = SystemIdentity(system_id="bench", system_name="Benchmark", model="gpt-4o", harness="recorded")


def full_submission(release: Release, runs_dir: Path) -> Submission:
    """A run of every task of `release` on its version, made of recorded runs (see the module docstring)."""
    release_tasks = [task.task_id for task in release.tasks]
    recorded: dict[str, Trace] = {}
    for path in sorted(runs_dir.glob("*/CSX-*.json")):
        recorded.setdefault(path.stem, read_recorded_trace(path))
    donors = list(recorded.values())
    traces = []
    for index, task_id in enumerate(release_tasks):
        trace = recorded.get(task_id) or donors[index % len(donors)]
        traces.append(
            trace.model_copy(update={"task_id": task_id, "event_id": task_id[:7], "system": SYSTEM})
        )
    metadata = SubmissionMetadata(
        system_name="Benchmark",
        system_id="bench",
        model="gpt-4o",
        harness="recorded",
        organisation="EarthVerse",
        contact="-",
        dataset_version=release.version,
    )
    return Submission(metadata=metadata, traces=traces)


def _timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=5)
    options.add_argument("--release", type=Path, default=PROJECT / ".cache" / "test-build")
    arguments = options.parse_args()
    release, hidden = open_release(arguments.release), open_ground_truth(arguments.release)
    submission = full_submission(release, open_source(default_archive()).trajectories_dir)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "submission.jsonl"
        write_submission(path, submission)
        scorer = Scorer(release, hidden)
        cold = _timed(lambda: scorer.score(submission, NoJudge()))
        scoring = [_timed(lambda: scorer.score(submission, NoJudge())) for _ in range(arguments.runs)]
        reading = [_timed(lambda: read_submission(path)) for _ in range(arguments.runs)]
    median = statistics.median(scoring)
    print(
        json.dumps(
            {
                "tasks": len(submission.traces),
                "first_scoring_with_release_setup_s": round(cold, 3),
                "rescoring_median_s": round(median, 3),
                "rescoring_runs_s": [round(value, 3) for value in scoring],
                "peer_read_submission_median_s": round(statistics.median(reading), 3),
                "rescoring_over_reading": round(median / statistics.median(reading), 2),
                "target_met": median <= TARGET_S,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
