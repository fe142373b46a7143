"""`earthverse run` over real tasks of the built release: replayed runs, task selection, local scores,
resume after kill -9 (every task exactly once), and the refusals that keep a run folder consistent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from evaluator.agents.base import AgentView, FinalAnswerAction, InfrastructureFailure, ToolCall
from evaluator.agents.registry import agent_from_option
from evaluator.cli import main
from evaluator.cli.base import INCOMPLETE
from evaluator.harness.runner import Runner, RunOptions, select_tasks
from evaluator.scoring.pipeline import Scorer
from evaluator.scoring.scores_io import read_scores
from evaluator.traces.io import read_submission, read_trace, write_trace
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import FinalAnswer
from loaders.package import EventPackage
from loaders.release import open_ground_truth, open_release

PROJECT = Path(__file__).resolve().parents[1]
SYSTEM = "gpt-4o"
TASKS = ("CSX-321_Q1", "CSX-008_Q2", "CSX-013_Q2")


class SlowAgent:
    """A user agent (python:tests.test_cli_run:SlowAgent): lists the package, waits, then answers."""

    system_id = "slow-agent"

    def __init__(self) -> None:
        self.turns = 0

    async def step(self, view: AgentView) -> ToolCall | FinalAnswerAction:
        self.turns += 1
        if self.turns == 1:
            return ToolCall(tool="list_package_files", arguments={"subdir": "."})
        time.sleep(float(os.environ.get("SLOW_AGENT_SECONDS", "0")))
        return FinalAnswerAction(arguments={"answer": {"turns": self.turns}})


class DownAgent:
    """A user agent whose own backend is down (python:tests.test_cli_run:DownAgent)."""

    async def step(self, view: AgentView) -> ToolCall | FinalAnswerAction:
        raise InfrastructureFailure("my backend is down")


@pytest.fixture(scope="module")
def trajectories(source_release: Any) -> Path:
    return source_release.trajectories_dir / SYSTEM


def run_cli(*arguments: str) -> int:
    return main(["run", "--no-progress", *arguments])


def test_a_replayed_run_writes_traces_a_submission_and_local_scores(
    built_release: Path, trajectories: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs" / "replay"

    code = run_cli(
        "--agent", f"replay:{trajectories}", "--release", str(built_release),
        "--tasks", ",".join(TASKS), "--concurrency", "2", "--out", str(out),
    )  # fmt: skip

    assert code == 0
    submission = read_submission(out / "submission.jsonl")
    assert submission.metadata.system_id == f"replay-{SYSTEM}"
    assert sorted(trace.task_id for trace in submission.traces) == sorted(TASKS)
    release = open_release(built_release)
    assert submission.metadata.dataset_version == release.version
    scorer = Scorer(release, open_ground_truth(built_release))
    scores = {score.task_id: score for score in read_scores(out / "scores.jsonl")}
    for trace in submission.traces:
        recorded = read_recorded_trace(trajectories / f"{trace.task_id}.json")
        task = release.task(trace.task_id)
        assert trace.run_status == "ok" and trace.package_sha256 and len(trace.package_sha256) == 64
        assert scores[trace.task_id].u == scorer.score_trace("x", task, recorded).u
    printed = capsys.readouterr().out
    assert f"traces: {out / 'traces'}" in printed and "unit_accuracy" in printed


def test_a_task_the_replay_source_lacks_is_a_solver_failure(
    built_release: Path, trajectories: Path, tmp_path: Path
) -> None:
    missing = next(task.task_id for task in open_release(built_release).tasks
                   if not (trajectories / f"{task.task_id}.json").exists())  # fmt: skip
    out = tmp_path / "run"

    run_cli("--agent", f"replay:{trajectories}", "--release", str(built_release), "--tasks", missing,
            "--out", str(out), "--no-score")  # fmt: skip

    trace = read_trace(out / "traces" / f"{missing}.json")
    assert trace.run_status == "solver_failure"
    assert trace.termination_reason == "solver_failure: the replay source holds no run of this task"


def test_resume_after_kill_9_runs_every_task_exactly_once(built_release: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [
        sys.executable, "-c", "import sys; from evaluator.cli import main; sys.exit(main(sys.argv[1:]))",
        "run", "--no-progress", "--no-score", "--agent", "python:tests.test_cli_run:SlowAgent",
        "--release", str(built_release), "--tasks", ",".join(TASKS), "--concurrency", "1", "--out", str(out),
    ]  # fmt: skip
    environment = {**os.environ, "SLOW_AGENT_SECONDS": "1.5", "PYTHONPATH": str(PROJECT)}
    process = subprocess.Popen(
        command, cwd=PROJECT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    traces = out / "traces"
    while process.poll() is None and len(list(traces.glob("*.json"))) < 1:
        time.sleep(0.05)
    assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    before = {path.name: path.read_bytes() for path in traces.glob("*.json")}
    assert 1 <= len(before) < len(TASKS)
    assert not (out / "submission.jsonl").exists()

    code = run_cli("--agent", "python:tests.test_cli_run:SlowAgent", "--release", str(built_release),
                   "--tasks", ",".join(TASKS), "--out", str(out), "--resume", "--no-score")  # fmt: skip

    assert code == 0
    for name, content in before.items():
        assert (traces / name).read_bytes() == content  # finished tasks are not run again
    submission = read_submission(out / "submission.jsonl")
    assert sorted(trace.task_id for trace in submission.traces) == sorted(TASKS)
    assert {trace.run_status for trace in submission.traces} == {"ok"}


def test_resume_reruns_infrastructure_failures_and_keeps_solver_failures(
    built_release: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    agent = "python:tests.test_cli_run:SlowAgent"
    arguments = (
        "--agent",
        agent,
        "--release",
        str(built_release),
        "--tasks",
        ",".join(TASKS),
        "--out",
        str(out),
    )
    run_cli(*arguments, "--no-score")
    infra, solver, _ = (out / "traces" / f"{task}.json" for task in TASKS)
    missing = FinalAnswer(raw_text="", status="missing")
    update = {"run_status": "infrastructure_failure", "final_answer": missing, "termination_reason": "x"}
    write_trace(infra, read_trace(infra).model_copy(update=update))
    write_trace(solver, read_trace(solver).model_copy(update={**update, "run_status": "solver_failure"}))

    run_cli(*arguments, "--resume", "--no-score")

    assert read_trace(infra).run_status == "ok"
    assert read_trace(solver).run_status == "solver_failure"


def test_a_task_whose_package_cannot_be_read_is_an_infrastructure_failure_and_the_run_goes_on(
    built_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = open_release(built_release)
    broken_event = release.task(TASKS[1]).event_id
    read_package = release.package

    def package(event_id: str) -> EventPackage:
        if event_id == broken_event:
            raise OSError(f"{event_id}: package folder unreadable")
        return read_package(event_id)

    monkeypatch.setattr(release, "package", package)
    options = RunOptions(out=tmp_path / "run", progress=False)
    runner = Runner(release, agent_from_option("scripted"), "scripted", options)

    summary = runner.run([release.task(task_id) for task_id in TASKS])

    traces = {trace.task_id: trace for trace in read_submission(summary.submission).traces}
    broken = traces[TASKS[1]]
    assert broken.run_status == "infrastructure_failure"
    assert broken.termination_reason == (
        f"infrastructure_failure: OSError: {broken_event}: package folder unreadable"
    )
    assert broken.totals.rounds == 0 and broken.totals.cost_usd is None and not broken.steps
    assert {traces[task].run_status for task in (TASKS[0], TASKS[2])} == {"ok"}
    assert summary.statuses == {"ok": 2, "infrastructure_failure": 1}


def test_a_run_with_infrastructure_failures_exits_3_and_says_to_resume(
    built_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli("--agent", "python:tests.test_cli_run:DownAgent", "--release", str(built_release),
                   "--tasks", TASKS[0], "--out", str(tmp_path / "run"), "--no-score")  # fmt: skip

    assert code == INCOMPLETE == 3
    assert "1 task(s) hit an infrastructure failure: rerun with --resume" in capsys.readouterr().err


def test_resume_refuses_another_task_selection(
    built_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = (
        "--agent",
        "scripted",
        "--release",
        str(built_release),
        "--out",
        str(tmp_path / "run"),
        "--no-score",
    )
    assert run_cli(*arguments, "--tasks", TASKS[0]) == 0

    assert run_cli(*arguments, "--tasks", TASKS[1], "--resume") == 2
    assert (
        f"--tasks selected 1 task(s), {TASKS[0]} … {TASKS[0]}, now 1 task(s), {TASKS[1]} … {TASKS[1]}"
        in capsys.readouterr().err
    )
    assert run_cli(*arguments, "--tasks", TASKS[0], "--resume", "--review") == 2
    assert "review was False, now True" in capsys.readouterr().err


def test_a_finished_run_folder_is_not_overwritten_without_resume(
    built_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    arguments = ("--agent", "scripted", "--release", str(built_release), "--tasks", TASKS[0], "--no-score")
    assert run_cli(*arguments, "--out", str(out)) == 0

    assert run_cli(*arguments, "--out", str(out)) == 2
    assert "already holds a run; pass --resume" in capsys.readouterr().err
    assert run_cli(*arguments, "--out", str(out), "--resume", "--system-id", "other") == 2
    assert (
        "cannot resume a different run: system_id was 'scripted-baseline', now 'other'"
        in capsys.readouterr().err
    )
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert run_cli(*arguments, "--out", str(foreign)) == 2


def test_tasks_are_selected_by_ids_or_by_filters(built_release: Path) -> None:
    release = open_release(built_release)

    floods = select_tasks(release, "hazard_family=flood,difficulty=L3")

    assert floods and all(
        "flood" in task.hazard_family and task.difficulty.startswith("L3") for task in floods
    )
    assert [task.task_id for task in select_tasks(release, "CSX-008_Q2,CSX-321_Q1")] == [
        "CSX-008_Q2",
        "CSX-321_Q1",
    ]
    assert len(select_tasks(release, "all")) == 405
    by_tag = select_tasks(release, "dimensions=causal_chain")
    assert by_tag and all("causal_chain" in task.dimensions for task in by_tag)
    with pytest.raises(ValueError, match=r"unknown task field.*colour; task fields: .*hazard_family"):
        select_tasks(release, "colour=red")
    with pytest.raises(ValueError, match="not both"):
        select_tasks(release, "CSX-008_Q2,difficulty=L3")
    with pytest.raises(ValueError, match="has no task 'CSX-999_Q9'; task ids look like CSX-001_Q1"):
        select_tasks(release, "CSX-999_Q9")
    with pytest.raises(
        ValueError, match="has no task 'CSX-001'; CSX-001 has CSX-001_Q1, CSX-001_Q2, CSX-001_Q3"
    ):
        select_tasks(release, "CSX-001")


def test_bad_options_are_one_line_errors(
    built_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "run")

    assert run_cli("--agent", "nonsense:x", "--release", str(built_release), "--out", out) == 2
    assert "unknown kind 'nonsense'; known: litellm, replay, scripted, python" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # argparse's own refusal, also status 2
        run_cli("--agent", "scripted", "--release", str(built_release), "--out", out, "--concurrency", "0")
    assert refused.value.code == 2
    assert "argument --concurrency: must be above 0, got 0" in capsys.readouterr().err
