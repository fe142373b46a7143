"""`earthverse score` and `earthverse leaderboard` end to end on imported recorded runs."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys

import pytest

from evaluator.cli import main
from evaluator.scoring.scores_io import read_scores, write_scores
from evaluator.traces.io import read_submission, write_submission
from loaders.release import open_release
from tests.openai_standin import HttpError, OpenAIStandin

SYSTEMS = ("gpt-4o", "qwen3-4b")


@pytest.fixture(scope="module")
def two_systems(tmp_path_factory, imported_runs):
    imported = imported_runs
    chosen = tmp_path_factory.mktemp("chosen")
    for system in SYSTEMS:
        shutil.copytree(imported / system, chosen / system)
    return chosen


@pytest.fixture(scope="module")
def scores_file(two_systems, built_release, tmp_path_factory):
    out = tmp_path_factory.mktemp("scores") / "scores.jsonl"
    assert (
        main(["score", "--release", str(built_release), "--traces", str(two_systems), "--out", str(out)]) == 0
    )
    return out


def test_score_writes_one_score_per_task_and_system(scores_file, built_release):
    scores = read_scores(scores_file)
    assert len(scores) == 2 * 405
    assert {score.system_id for score in scores} == set(SYSTEMS)
    assert all(score.judge_status == "not_requested" for score in scores)
    assert {score.dataset_version for score in scores} == {open_release(built_release).version}


def test_scores_are_the_same_in_every_process(two_systems, built_release, tmp_path):
    """Nothing in scoring follows the hash seed (set order): these two seeds once aligned a unit of
    gpt-4o's CSX-182_Q2 by different rules."""
    runs = []
    for seed in ("0", "1"):
        out, log = tmp_path / f"seed-{seed}.jsonl", tmp_path / f"seed-{seed}.log"
        command = [sys.executable, "-m", "evaluator.cli", "score", "--release", str(built_release)]
        command += ["--traces", str(two_systems / "gpt-4o"), "--out", str(out)]
        with log.open("wb") as stderr:  # both at once: each process is mostly start-up
            process = subprocess.Popen(command, env={**os.environ, "PYTHONHASHSEED": seed}, stderr=stderr)
        runs.append((out, log, process))
    for _, log, process in runs:
        assert process.wait(timeout=300) == 0, log.read_text()
    first, second = (out.read_bytes() for out, _, _ in runs)
    assert first == second and first.count(b"\n") == 405


def _of_version(submission, version: str):
    """The same runs, as if made on the release of `version`."""
    return submission.model_copy(
        update={
            "metadata": submission.metadata.model_copy(update={"dataset_version": version}),
            "traces": [trace.model_copy(update={"dataset_version": version}) for trace in submission.traces],
        }
    )


def test_a_submission_of_another_release_version_is_refused_unless_allowed(
    two_systems, built_release, tmp_path, capsys, caplog
):
    version = open_release(built_release).version
    traces = tmp_path / "traces"
    shutil.copytree(two_systems, traces)
    qwen = read_submission(traces / "qwen3-4b" / "submission.jsonl")
    write_submission(traces / "qwen3-4b" / "submission.jsonl", _of_version(qwen, "ev-0123456789abcdef"))
    out = tmp_path / "scores.jsonl"
    arguments = ["score", "--release", str(built_release), "--traces", str(traces), "--out", str(out)]

    assert main(arguments) == 2
    assert capsys.readouterr().err == (
        "earthverse score: error: --traces: 'qwen3-4b' ran on dataset version 'ev-0123456789abcdef', "
        f"not on this release's {version!r}; score against the release they ran on, or pass "
        "--allow-other-version; nothing scored\n"
    )
    assert not out.exists()

    assert main([*arguments, "--allow-other-version"]) == 0
    assert "'qwen3-4b' ran on dataset version 'ev-0123456789abcdef'" in caplog.text
    scores = read_scores(out)
    assert {score.system_id for score in scores} == set(SYSTEMS)
    assert {score.dataset_version for score in scores} == {version}


def test_a_submission_without_a_version_or_whose_traces_disagree_with_it_is_unreadable(
    two_systems, built_release, tmp_path, capsys
):
    submission = read_submission(two_systems / "gpt-4o" / "submission.jsonl")
    header = {"metadata": submission.metadata.model_dump(mode="json")}
    first, *rest = [trace.model_dump_json() for trace in submission.traces[:3]]
    other = submission.traces[0].model_copy(update={"dataset_version": "ev-0123456789abcdef"})
    cases = {
        "unversioned": (
            {"metadata": {**header["metadata"], "dataset_version": ""}},
            [first, *rest],
            ":1: not a valid SubmissionHeader: metadata.dataset_version: String should have at least 1 "
            "character",
        ),
        "mixed": (
            header,
            [other.model_dump_json(), *rest],
            ": not a valid submission: (top level): traces of another dataset version than the metadata's "
            f"{submission.metadata.dataset_version!r}: {other.task_id} ('ev-0123456789abcdef')",
        ),
    }
    for name, (metadata, lines, message) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join([json.dumps(metadata), *lines]) + "\n", encoding="utf-8")
        arguments = [
            "score",
            "--release",
            str(built_release),
            "--traces",
            str(path),
            "--out",
            str(tmp_path / "s"),
        ]
        assert main([*arguments, "--allow-other-version"]) == 2
        assert f"{path}{message}" in capsys.readouterr().err
        assert not (tmp_path / "s").exists()


def test_leaderboard_as_csv_and_json(scores_file, built_release, capsys):
    capsys.readouterr()
    assert (
        main(
            ["leaderboard", "--release", str(built_release), "--scores", str(scores_file), "--format", "csv"]
        )
        == 0
    )
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["system_id"] for row in rows] == ["gpt-4o", "qwen3-4b"]
    assert rows[0]["rank"] == "1" and rows[0]["judge_model"] == "none" and rows[0]["core"] == ""
    out = scores_file.parent / "board.json"
    arguments = [
        "leaderboard",
        "--release",
        str(built_release),
        "--scores",
        str(scores_file),
        "--format",
        "json",
    ]
    assert main([*arguments, "--out", str(out)]) == 0
    systems = json.loads(out.read_text())
    assert [(system["rank"], system["system_id"]) for system in systems] == [
        (int(row["rank"]), row["system_id"]) for row in rows
    ]
    assert all(system["tasks"] == 405 and system["basis"] == "unit_accuracy" for system in systems)
    assert systems[0]["unit_accuracy"] >= systems[1]["unit_accuracy"]


def test_leaderboard_table_goes_to_out_when_asked(scores_file, built_release, tmp_path, capsys):
    out = tmp_path / "board.txt"
    arguments = ["leaderboard", "--release", str(built_release), "--scores", str(scores_file)]

    assert main([*arguments, "--out", str(out)]) == 0

    table = out.read_text()
    assert "EarthVerse leaderboard" in table and "tasks_run" in table
    assert table.index("GPT-4o") < table.index("Qwen3-4B")
    assert capsys.readouterr().out == f"leaderboard: {out}\n"


def test_a_score_file_covering_some_tasks_ranks_the_rest_as_zero(
    scores_file, built_release, tmp_path, capsys
):
    everything = read_scores(scores_file)
    run = [score for score in everything if score.system_id == "gpt-4o" and score.status == "scored"]
    partial = tmp_path / "scores.jsonl"
    write_scores(partial, run)
    capsys.readouterr()

    code = main(
        ["leaderboard", "--release", str(built_release), "--scores", str(partial), "--format", "json"]
    )

    captured = capsys.readouterr()
    assert code == 0
    assert f"gpt-4o: {405 - len(run)} of 405 tasks have no score; they count as zero" in captured.err
    (system,) = json.loads(captured.out)
    whole = [score.u for score in everything if score.system_id == "gpt-4o"]
    assert system["tasks"] == 405 and system["tasks_run"] == len(run)
    assert system["unit_accuracy"] == pytest.approx(sum(whole) / len(whole), abs=0.01)


def test_an_unreadable_submission_refuses_the_whole_scoring_and_keeps_the_old_output(
    two_systems, built_release, tmp_path, capsys
):
    broken = tmp_path / "traces"
    shutil.copytree(two_systems, broken)
    (broken / "qwen3-4b" / "submission.jsonl").write_text('{"metadata": {"system_name": 1}}\nnot json\n')
    out = tmp_path / "scores.jsonl"
    out.write_text("earlier scores\n")

    code = main(["score", "--release", str(built_release), "--traces", str(broken), "--out", str(out)])

    assert code == 2
    err = capsys.readouterr().err
    assert "1 submission(s) unreadable" in err and "qwen3-4b/submission.jsonl:1" in err
    assert out.read_text() == "earlier scores\n"


def test_two_submissions_of_one_system_are_refused(two_systems, built_release, tmp_path, capsys):
    doubled = tmp_path / "traces"
    shutil.copytree(two_systems, doubled)
    shutil.copytree(two_systems / "gpt-4o", doubled / "gpt-4o-again")

    code = main(
        ["score", "--release", str(built_release), "--traces", str(doubled), "--out", str(tmp_path / "s")]
    )

    assert code == 2
    assert "gpt-4o-again" in capsys.readouterr().err and not (tmp_path / "s").exists()


def test_a_submission_for_another_release_is_refused(two_systems, built_release, tmp_path, capsys):
    submission = read_submission(two_systems / "gpt-4o" / "submission.jsonl")
    foreign = [
        trace.model_copy(update={"task_id": "CSX-999_Q1", "event_id": "CSX-999"})
        for trace in submission.traces[:1]
    ]
    path = tmp_path / "other.jsonl"
    write_submission(path, submission.model_copy(update={"traces": foreign}))

    code = main(
        ["score", "--release", str(built_release), "--traces", str(path), "--out", str(tmp_path / "s")]
    )

    assert code == 2
    assert "no trace of gpt-4o is a task of" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_leaderboard_refuses_scores_of_another_release_version(scores_file, built_release, tmp_path, capsys):
    scores = read_scores(scores_file)
    other = tmp_path / "other.jsonl"
    write_scores(
        other, [scores[0].model_copy(update={"dataset_version": "ev-0123456789abcdef"}), *scores[1:]]
    )

    assert main(["leaderboard", "--release", str(built_release), "--scores", str(other)]) == 2
    assert capsys.readouterr().err == (
        f"earthverse leaderboard: error: --scores {other}: scored against dataset version "
        f"'ev-0123456789abcdef', not this release's {open_release(built_release).version!r}; score the "
        "submissions again against it\n"
    )


def test_missing_traces_and_scores_are_clear_errors(built_release, tmp_path, capsys):
    code = main(["score", "--release", str(built_release), "--traces", str(tmp_path / "x"), "--out", "y"])
    assert code == 2 and "no such file or folder" in capsys.readouterr().err
    code = main(["leaderboard", "--release", str(built_release), "--scores", str(tmp_path / "none.jsonl")])
    assert code == 2 and "no such scores file" in capsys.readouterr().err
    (tmp_path / "empty.jsonl").write_text("")
    code = main(["leaderboard", "--release", str(built_release), "--scores", str(tmp_path / "empty.jsonl")])
    assert code == 2 and "holds no task score" in capsys.readouterr().err
    (tmp_path / "object.jsonl").write_text('{"task_id": "CSX-001_Q1"}\n')
    code = main(["leaderboard", "--release", str(built_release), "--scores", str(tmp_path / "object.jsonl")])
    error = capsys.readouterr().err
    assert code == 2 and "object.jsonl:1: not a task score: system_id: Field required" in error


def test_score_exits_3_when_the_judge_gives_no_verdict(
    two_systems, built_release, tmp_path, capsys, monkeypatch
):
    submission = read_submission(two_systems / "gpt-4o" / "submission.jsonl")
    one = tmp_path / "one.jsonl"
    write_submission(one, submission.model_copy(update={"traces": submission.traces[:1]}))
    monkeypatch.setenv("EARTHVERSE_TEST_JUDGE_KEY", "test-key")
    out = tmp_path / "scores.jsonl"

    with OpenAIStandin([HttpError(401, "invalid api key")]) as api:
        code = main(
            ["score", "--release", str(built_release), "--traces", str(one), "--out", str(out),
             "--judge", "openai/standin-judge", "--api-base", api.url,
             "--api-key-env", "EARTHVERSE_TEST_JUDGE_KEY", "--judge-cache", str(tmp_path / "verdicts")]
        )  # fmt: skip

    assert code == 3
    assert "the judge gave no verdict for 1 task(s)" in capsys.readouterr().err
    run = [score for score in read_scores(out) if score.status == "scored"]
    assert [(score.task_id, score.judge_status) for score in run] == [
        (submission.traces[0].task_id, "unavailable")
    ]
