"""The store's Hub mirror: a Space restarted on an empty disk restores every record from the results repo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from huggingface_hub import HfApi
from huggingface_hub.errors import HfHubHTTPError

from evaluator.traces.io import read_submission
from space.config import Settings
from space.mirror import Mirror
from space.services import build_services
from tests.hub_standin import HubStandin, StandinRepo
from tests.space_browser import local_settings, write_jsonl

RESULTS_REPO = "earthverse/results"


def _record_files(folder: Path) -> dict[str, bytes]:
    """The mirrored files under `folder` (no hidden ones), by repo path."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    }


def _assert_restored(fresh: Settings, receipt: str, board: list[dict], log_entries: int) -> None:
    """A Space over `fresh` holds the submission `receipt`, the same board and as many log entries."""
    restored = build_services(fresh)
    try:
        assert restored.store.submission_record(receipt) is not None
        assert [row.model_dump() for row in restored.board()[0]] == board
        assert len(restored.store.log_entries()) == log_entries
    finally:
        restored.close()


def _submitted_store(
    settings: Settings, imported_runs: Path, systems: list[str]
) -> tuple[list[str], list[dict], int]:
    """Submit the recorded runs of `systems` to a Space over `settings`; (receipts, board, log entries)."""
    services = build_services(settings)
    receipts = []
    for system in systems:
        submission = read_submission(imported_runs / system / "submission.jsonl")
        path = write_jsonl(settings.store.parent / f"{system}.jsonl", submission)
        receipts.append(services.intake.submit(path, path.name, "tester").receipt)
    services.rescorer.wait_idle()
    board = [row.model_dump() for row in services.board()[0]]
    services.close()
    return receipts, board, len(services.store.log_entries())


def test_an_empty_store_is_restored_from_the_results_repo(
    built_release: Path, tmp_path: Path, imported_runs: Path
) -> None:
    original = local_settings(built_release, tmp_path / "store")
    receipts, board, log_entries = _submitted_store(original, imported_runs, ["geommagent"])
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
    _assert_restored(fresh, receipts[0], board, log_entries)


def test_the_mirror_commits_the_store_to_a_new_private_repo_and_a_fresh_disk_restores_it(
    built_release: Path, tmp_path: Path, imported_runs: Path
) -> None:
    with HubStandin({}, root=tmp_path / "hub") as hub:
        hub_settings = {"results_repo": RESULTS_REPO, "hub_endpoint": hub.url, "HF_TOKEN": "hf_space"}
        running = local_settings(built_release, tmp_path / "disk" / "store", **hub_settings)
        receipts, board, log_entries = _submitted_store(
            running, imported_runs, ["geommagent", "geogpt-sft-4b"]
        )
        mirror = Mirror.from_settings(running)
        mirror.start()
        assert mirror.scheduler is not None
        try:
            mirror.scheduler.trigger().result()
        finally:
            mirror.scheduler.stop()
        repo = hub.repos[RESULTS_REPO]
        assert repo.token == "hf_space"  # created private, for the Space's token
        assert _record_files(repo.folder) == _record_files(running.store)
        assert len(_record_files(repo.folder)) > 2
        fresh = local_settings(built_release, tmp_path / "fresh-disk" / "store", **hub_settings)
        Mirror.from_settings(fresh).restore()
    for receipt in receipts:
        _assert_restored(fresh, receipt, board, log_entries)


def test_a_commit_writes_and_deletes_files_and_bumps_the_commit(tmp_path: Path) -> None:
    repo = StandinRepo(tmp_path / "repo", token="hf_space")
    repo.folder.mkdir()
    with HubStandin({RESULTS_REPO: repo}) as hub:
        api = HfApi(endpoint=hub.url, token="hf_space")
        assert api.create_repo(RESULTS_REPO, repo_type="dataset", exist_ok=True).repo_id == RESULTS_REPO
        start = repo.commit
        added = api.upload_file(
            path_or_fileobj=b'{"a": 1}',
            path_in_repo="records/a.json",
            repo_id=RESULTS_REPO,
            repo_type="dataset",
        )
        assert (repo.folder / "records" / "a.json").read_bytes() == b'{"a": 1}'
        assert added.oid == repo.commit != start
        api.delete_file("records/a.json", repo_id=RESULTS_REPO, repo_type="dataset")
        assert not (repo.folder / "records" / "a.json").exists()
        assert repo.commit not in (start, added.oid)
        with pytest.raises(HfHubHTTPError) as refused:
            api.create_repo(RESULTS_REPO, repo_type="dataset")
        assert refused.value.response.status_code == 409


@pytest.mark.parametrize("token", [False, "hf_someone_else"], ids=["no token", "wrong token"])
def test_a_write_to_a_private_repo_without_its_token_is_refused(tmp_path: Path, token: str | bool) -> None:
    repo = StandinRepo(tmp_path / "repo", token="hf_space")
    repo.folder.mkdir()
    commit = repo.commit
    with HubStandin({RESULTS_REPO: repo}) as hub:
        api = HfApi(endpoint=hub.url, token=token)
        with pytest.raises(HfHubHTTPError) as refused:
            api.upload_file(
                path_or_fileobj=b"{}", path_in_repo="a.json", repo_id=RESULTS_REPO, repo_type="dataset"
            )
    assert refused.value.response.status_code == 401
    assert list(repo.folder.iterdir()) == []
    assert repo.commit == commit
