"""Speed of the leaderboard Space (issue 4), medians of several runs:

1. first render with 200 stored submissions (`--stored`): a cold start on a store of 200 rescored results
   (fresh Store, so nothing is cached), building every leaderboard table and figure server side.
   Target: at most 1 s.
2. a 405-task submission uploaded through the `submit` API (gradio_client against the running app)
   until it is rescored deterministically and visible on the leaderboard. Target: at most 5 s.

Run: python benchmarks/space.py [--runs 5] [--stored 200] [--release .cache/test-build]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))  # space/, tests/ and benchmarks/ are not installed packages

from gradio_client import Client, handle_file  # noqa: E402

from benchmarks.scoring import full_submission  # noqa: E402
from dataset.source import default_archive, open_source  # noqa: E402
from evaluator.traces.io import write_submission  # noqa: E402
from evaluator.traces.schema import Submission  # noqa: E402
from loaders.release import open_release  # noqa: E402
from space.records import SubmissionRecord  # noqa: E402
from space.rescoring import result_record  # noqa: E402
from space.services import build_services  # noqa: E402
from space.store import Store  # noqa: E402
from space.ui import render_views  # noqa: E402
from tests.space_browser import local_settings, renamed, running_app  # noqa: E402

STORED = 200
RENDER_TARGET_S = 1.0
VISIBLE_TARGET_S = 5.0


def fill_store(settings, submission: Submission, stored: int) -> None:
    """`stored` submissions with their results (one real rescoring, recorded under `stored` receipts)."""
    services = build_services(settings)
    scored = services.rescorer.scorer.score(submission)
    for number in range(stored):
        receipt = f"{number:064x}"
        metadata = submission.metadata.model_copy(update={"system_name": f"System {number}"})
        record = SubmissionRecord(
            receipt=receipt,
            user=f"user{number % 17}",
            received_at=datetime.now(UTC),
            filename="submission.jsonl",
            size_bytes=0,
            metadata=metadata,
            traces=len(submission.traces),
        )
        services.store.accept(record, submission)
        named = scored.model_copy(update={"system_name": metadata.system_name})
        services.store.add_result(
            result_record(receipt, "deterministic", named, services.rescorer.scorer, metadata)
        )
    services.close()


def first_render_seconds(settings, stored: int) -> float:
    services = build_services(settings)
    services.redactor.index()  # the start-up warm-up is done before a visitor arrives
    services.store = Store(settings.store)  # cold: no record read yet
    started = time.perf_counter()
    outputs = render_views(services)
    elapsed = time.perf_counter() - started

    assert outputs[1] == f"{stored + 25} of {stored + 25} systems", outputs[1]
    services.close()
    return elapsed


def upload_to_visible_seconds(url: str, services, path: Path, name: str) -> float:
    client = Client(url, verbose=False)
    started = time.perf_counter()
    answer = client.predict(handle_file(str(path)), api_name="/submit")
    while client.predict(answer["receipt"], api_name="/status")["status"] != "published":
        time.sleep(0.05)
    rows, _ = services.board()
    assert any(row.system == name for row in rows)
    return time.perf_counter() - started


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=5)
    options.add_argument("--stored", type=int, default=STORED, help="submissions in the store to render")
    options.add_argument("--release", type=Path, default=PROJECT / ".cache" / "test-build")
    arguments = options.parse_args()
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        release = open_release(arguments.release)
        submission = full_submission(release, open_source(default_archive()).trajectories_dir)

        settings = local_settings(arguments.release, scratch / "stored")
        fill_store(settings, submission, arguments.stored)
        renders = [first_render_seconds(settings, arguments.stored) for _ in range(arguments.runs)]

        live = local_settings(arguments.release, scratch / "live", daily_limit=1000)
        visible = []
        with running_app(live) as app:
            app.services.redactor.index()  # start-up warm-up done, as for any visitor after start
            for run in range(arguments.runs):
                name = f"Benchmark {run}"
                path = scratch / f"upload-{run}.jsonl"
                write_submission(path, renamed(submission, f"bench-{run}", name))
                visible.append(upload_to_visible_seconds(app.url, app.services, path, name))
    report(f"first render, {arguments.stored} stored submissions", renders, RENDER_TARGET_S)
    report(f"{len(submission.traces)}-task submission, upload to visible", visible, VISIBLE_TARGET_S)


def report(what: str, seconds: list[float], target: float) -> None:
    median = statistics.median(seconds)
    verdict = "meets" if median <= target else "MISSES"
    runs = ", ".join(f"{value:.2f}" for value in seconds)
    print(f"{what}: median {median:.2f} s ({runs}); target <= {target:.0f} s: {verdict}")


if __name__ == "__main__":
    main()
