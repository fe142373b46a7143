"""`earthverse submit` against a tiny local Gradio app that speaks the Space's contract (`/submit` takes
the file, `/status` takes a receipt; both answer {"receipt", "status", "message"})."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from evaluator.cli import main
from evaluator.traces.io import read_submission, write_submission
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import Submission, SubmissionMetadata

TOKEN_ENV = "EARTHVERSE_TEST_SPACE_TOKEN"
pytestmark = pytest.mark.filterwarnings("ignore::Warning:gradio.queueing")  # gradio's own pandas use


@dataclass
class Space:
    url: str
    uploads: list[str] = field(default_factory=list)
    polls: list[str] = field(default_factory=list)
    statuses: Iterator[str] = field(default_factory=lambda: iter(()))
    on_submit: str = "queued"


@pytest.fixture
def space(monkeypatch: pytest.MonkeyPatch) -> Iterator[Space]:
    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")
    import gradio as gr

    state = Space(url="")
    receipts = itertools.count(1)

    def submit(path: str) -> dict[str, str]:
        content = Path(path).read_text(encoding="utf-8")
        if '"metadata"' not in content.splitlines()[0]:
            raise gr.Error("not a submission")
        state.uploads.append(content)
        return {"receipt": f"R-{next(receipts)}", "status": state.on_submit, "message": "received"}

    def status(receipt: str) -> dict[str, str]:
        state.polls.append(receipt)
        return {"receipt": receipt, "status": next(state.statuses, "scored"), "message": f"{receipt} checked"}

    with gr.Blocks() as app:
        upload, receipt, reply = gr.File(type="filepath"), gr.Textbox(), gr.JSON()
        gr.Button("submit").click(submit, upload, reply, api_name="submit")
        gr.Button("status").click(status, receipt, reply, api_name="status")
    app.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True)
    state.url = app.local_url
    try:
        yield state
    finally:
        app.close()


@pytest.fixture
def run_folder(source_release: Any, tmp_path: Path) -> Path:
    trace = read_recorded_trace(source_release.trajectories_dir / "gpt-4o" / "CSX-321_Q1.json")
    metadata = SubmissionMetadata(
        system_name="GPT-4o", system_id="gpt-4o", model="gpt-4o", harness="paper", organisation="test",
        contact="test", dataset_version="test",
    )  # fmt: skip
    folder = tmp_path / "runs" / "r1"
    write_submission(folder / "submission.jsonl", Submission(metadata=metadata, traces=[trace]))
    return folder


def test_submit_uploads_the_submission_and_prints_receipt_and_status(
    space: Space, run_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["submit", str(run_folder), "--space", space.url]) == 0

    assert space.uploads == [(run_folder / "submission.jsonl").read_text(encoding="utf-8")]
    assert capsys.readouterr().out.splitlines() == ["receipt: R-1", "status: queued", "message: received"]


def test_wait_polls_the_status_until_it_is_final(
    space: Space, run_folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    space.statuses = iter(["queued", "queued"])
    monkeypatch.setenv(TOKEN_ENV, "hf_test")

    code = main(
        ["submit", str(run_folder / "submission.jsonl"), "--space", space.url, "--token-env", TOKEN_ENV,
         "--wait", "--poll-interval", "0"]
    )  # fmt: skip

    assert code == 0
    assert space.polls == ["R-1", "R-1", "R-1"]
    assert capsys.readouterr().out.splitlines()[-2:] == ["status: scored", "message: R-1 checked"]


def test_a_run_without_a_submission_is_refused_before_any_upload(
    space: Space, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["submit", str(tmp_path), "--space", space.url]) == 2
    assert "no submission.jsonl; finish the run first" in capsys.readouterr().err
    broken = tmp_path / "submission.jsonl"
    broken.write_text('{"metadata": {}}\n', encoding="utf-8")
    assert main(["submit", str(tmp_path), "--space", space.url]) == 2
    assert "not a valid SubmissionHeader" in capsys.readouterr().err
    assert space.uploads == []


def test_a_missing_token_variable_is_an_error(
    space: Space, run_folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)

    assert main(["submit", str(run_folder), "--space", space.url, "--token-env", TOKEN_ENV]) == 2
    assert f"the token variable {TOKEN_ENV} is not set" in capsys.readouterr().err


def test_an_unreachable_space_is_an_error(run_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", str(run_folder), "--space", "http://127.0.0.1:9/"]) == 2
    assert "cannot reach the Space http://127.0.0.1:9/" in capsys.readouterr().err


def test_a_run_with_infrastructure_failures_is_refused_unless_allowed(
    space: Space, run_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = run_folder / "submission.jsonl"
    submission = read_submission(file)
    failed = submission.traces[0].model_copy(
        update={"run_status": "infrastructure_failure", "termination_reason": "infrastructure_failure: 500"}
    )
    write_submission(file, submission.model_copy(update={"traces": [failed]}))

    assert main(["submit", str(run_folder), "--space", space.url]) == 2
    assert "1 task(s) ended in an infrastructure failure (CSX-321_Q1)" in capsys.readouterr().err
    assert space.uploads == []

    assert main(["submit", str(run_folder), "--space", space.url, "--allow-infrastructure-failures"]) == 0
    assert len(space.uploads) == 1


def test_a_refused_submission_or_a_wait_that_runs_out_exits_non_zero(
    space: Space, run_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    space.on_submit = "rejected"
    assert main(["submit", str(run_folder), "--space", space.url]) == 1
    assert "the Space refused the submission (rejected)" in capsys.readouterr().err

    space.on_submit = "queued"
    space.statuses = itertools.repeat("queued")
    code = main(
        [
            "submit",
            str(run_folder),
            "--space",
            space.url,
            "--wait",
            "--wait-timeout",
            "0.2",
            "--poll-interval",
            "0.05",
        ]
    )
    assert code == 1
    assert "still queued after 0.2 s" in capsys.readouterr().err
