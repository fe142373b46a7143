"""The store's Hub mirror: a Space restarted on an empty disk restores every record from the results repo."""

from __future__ import annotations

import shutil
from pathlib import Path

from evaluator.traces.io import read_submission
from space.mirror import Mirror
from space.services import build_services
from tests.hub_standin import HubStandin, StandinRepo
from tests.space_browser import local_settings, write_jsonl

RESULTS_REPO = "earthverse/results"


def test_an_empty_store_is_restored_from_the_results_repo(
    built_release: Path, tmp_path: Path, imported_runs: Path
) -> None:
    original = local_settings(built_release, tmp_path / "store")
    services = build_services(original)
    submission = read_submission(imported_runs / "geommagent" / "submission.jsonl")
    path = write_jsonl(tmp_path / "s.jsonl", submission)
    receipt = services.intake.submit(path, path.name, "tester").receipt
    services.rescorer.wait_idle()
    before = [row.model_dump() for row in services.board()[0]]
    services.rescorer.stop()
    mirrored = tmp_path / "repo"
    shutil.copytree(original.store, mirrored)  # what the CommitScheduler uploaded
    with HubStandin({RESULTS_REPO: StandinRepo(mirrored, token="hf_space")}) as hub:
        fresh = local_settings(
            built_release,
            tmp_path / "fresh-disk",
            results_repo=RESULTS_REPO,
            hub_endpoint=hub.url,
            HF_TOKEN="hf_space",
        )
        Mirror.from_settings(fresh).restore()
    restored = build_services(fresh)
    try:
        assert restored.store.submission_record(receipt) is not None
        assert [row.model_dump() for row in restored.board()[0]] == before
        assert len(restored.store.log_entries()) == len(services.store.log_entries())
    finally:
        restored.rescorer.stop()
