"""The API contract `earthverse submit` relies on, exercised with gradio_client against the running app:
`submit` (one file) and `status` (a receipt) answer {"receipt", "status", "message"}."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from gradio_client import Client, handle_file

from evaluator.traces.io import read_submission
from evaluator.traces.schema import Submission
from space.identity import IdentityResolver
from tests.space_browser import local_settings, renamed, running_app, write_jsonl

KEYS = {"receipt", "status", "message"}
CONCURRENT = 20


@pytest.fixture(scope="module")
def small(imported_runs: Path) -> Submission:
    return read_submission(imported_runs / "geommagent" / "submission.jsonl")


@pytest.fixture(scope="module")
def app(built_release: Path, tmp_path_factory):
    settings = local_settings(built_release, tmp_path_factory.mktemp("store"), daily_limit=100)
    with running_app(settings) as running:
        yield running


def wait_published(client: Client, receipt: str, timeout_s: float = 60) -> dict[str, str]:
    deadline = time.monotonic() + timeout_s
    while True:
        answer = client.predict(receipt, api_name="/status")
        if answer["status"] in ("published", "rejected") or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


def test_submit_and_status_answer_the_contract(app, small: Submission, tmp_path: Path) -> None:
    client = Client(app.url, verbose=False)
    path = write_jsonl(tmp_path / "contract.jsonl", renamed(small, "contract", "Contract System"))
    answer = client.predict(handle_file(str(path)), api_name="/submit")
    assert set(answer) == KEYS and answer["status"] == "queued" and len(answer["receipt"]) == 64
    final = wait_published(client, answer["receipt"])
    assert set(final) == KEYS and final["status"] == "published" and final["receipt"] == answer["receipt"]
    unknown = client.predict("0" * 64, api_name="/status")
    assert unknown == {"receipt": "0" * 64, "status": "unknown", "message": "No submission has this receipt."}


def test_a_malformed_submission_is_rejected_and_its_status_says_why(app, tmp_path: Path) -> None:
    client = Client(app.url, verbose=False)
    path = tmp_path / "broken.jsonl"
    path.write_text('{"metadata": {"system_name": "x"}}\n', encoding="utf-8")
    answer = client.predict(handle_file(str(path)), api_name="/submit")
    assert answer["status"] == "rejected" and answer["message"].startswith("broken.jsonl:1: not a valid")
    assert client.predict(answer["receipt"], api_name="/status") == answer


def test_twenty_concurrent_submissions_are_all_stored_scored_and_shown(
    app, small: Submission, tmp_path: Path
) -> None:
    paths = [
        write_jsonl(tmp_path / f"c{i}.jsonl", renamed(small, f"concurrent-{i}", f"Concurrent {i}"))
        for i in range(CONCURRENT)
    ]

    def submit(path: Path) -> dict[str, str]:
        return Client(app.url, verbose=False).predict(handle_file(str(path)), api_name="/submit")

    with ThreadPoolExecutor(CONCURRENT) as pool:
        answers = list(pool.map(submit, paths))
    assert {answer["status"] for answer in answers} == {"queued"}
    receipts = {answer["receipt"] for answer in answers}
    assert len(receipts) == CONCURRENT
    client = Client(app.url, verbose=False)
    assert {wait_published(client, receipt)["status"] for receipt in receipts} == {"published"}
    store = app.services.store
    stored = [record for record in store.submissions() if record.receipt in receipts]
    assert len(stored) == CONCURRENT
    rows, _ = app.services.board()
    names = [row.system for row in rows if row.system.startswith("Concurrent ")]
    assert sorted(names) == sorted(f"Concurrent {i}" for i in range(CONCURRENT))


def test_stored_submissions_are_not_downloadable(app, small: Submission, tmp_path: Path) -> None:
    client = Client(app.url, verbose=False)
    path = write_jsonl(tmp_path / "secret.jsonl", renamed(small, "secret", "Secret System"))
    receipt = client.predict(handle_file(str(path)), api_name="/submit")["receipt"]
    stored = app.services.store.root / "submissions" / f"{receipt}.jsonl"
    assert stored.is_file()
    for url in (f"{app.url}gradio_api/file={stored}", f"{app.url}file={stored}"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=10)
        assert refused.value.code in (403, 404)


def test_anonymous_calls_are_rejected_and_tokens_identify_the_caller(
    built_release: Path, tmp_path: Path, small: Submission
) -> None:
    accounts = {"hf_alice": {"name": "alice"}}
    identity = IdentityResolver(None, lambda token: accounts[token])
    settings = local_settings(built_release, tmp_path / "store", local_user=None)
    path = write_jsonl(tmp_path / "anon.jsonl", renamed(small, "anon", "Anon System"))
    with running_app(settings, identity=identity) as running:
        anonymous = Client(running.url, verbose=False).predict(handle_file(str(path)), api_name="/submit")
        assert anonymous["status"] == "rejected" and anonymous["message"].startswith("Sign in")
        signed = Client(running.url, token="hf_alice", verbose=False)
        answer = signed.predict(handle_file(str(path)), api_name="/submit")
        assert answer["status"] == "queued", answer
        assert running.services.store.submission_record(answer["receipt"]).user == "alice"


def test_stopping_and_restarting_the_app_on_the_same_store_shows_the_same_leaderboard(
    built_release: Path, tmp_path: Path, small: Submission
) -> None:
    settings = local_settings(built_release, tmp_path / "store")
    path = write_jsonl(tmp_path / "kept.jsonl", renamed(small, "kept", "Kept System"))
    with running_app(settings) as first:
        client = Client(first.url, verbose=False)
        receipt = client.predict(handle_file(str(path)), api_name="/submit")["receipt"]
        assert wait_published(client, receipt)["status"] == "published"
        before = [row.model_dump() for row in first.services.board()[0]]
    with running_app(settings) as second:
        client = Client(second.url, verbose=False)
        assert client.predict(receipt, api_name="/status")["status"] == "published"
        assert [row.model_dump() for row in second.services.board()[0]] == before
        again = client.predict(handle_file(str(path)), api_name="/submit")
        assert again["receipt"] == receipt and again["message"].startswith("Already received")
