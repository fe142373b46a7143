"""The controller on real tasks of the built release: replayed and scripted agents, the phases and budgets,
schema repairs, the review phase, agent failures, and the package hash every trace carries."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaluator.agents.base import AgentView, FinalAnswerAction, ToolCall
from evaluator.agents.replay import ReplayAgent
from evaluator.agents.scripted import ScriptedAgent
from evaluator.harness.budgets import Budgets
from evaluator.harness.controller import Controller, RunTarget
from evaluator.harness.package_hash import package_sha256
from evaluator.scoring.pipeline import Scorer
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import SystemIdentity, Trace
from loaders.release import Release, open_ground_truth, open_release

SYSTEM = SystemIdentity(system_id="controller-test", system_name="controller test")
TASK_ID = "CSX-321_Q1"
RECORDED = ("gpt-4o", TASK_ID)
ANSWER = {
    "answer": {"value": 1},
    "confidence": 0.5,
    "evidence": [],
    "research_summary": [],
    "limitations": [],
}


@pytest.fixture(scope="module")
def release(built_release: Path) -> Release:
    return open_release(built_release)


@pytest.fixture(scope="module")
def recorded(source_release: Any) -> Trace:
    system, task_id = RECORDED
    return read_recorded_trace(source_release.trajectories_dir / system / f"{task_id}.json")


def run(release: Release, agent: Any, controller: Controller | None = None, task_id: str = TASK_ID) -> Trace:
    task = release.task(task_id)
    target = RunTarget(task, release.package(task.event_id), SYSTEM, release.version, "0" * 64)
    return asyncio.run((controller or Controller()).run(agent, target))


class Scripted:
    """An agent that plays a list of actions (or callables of the view), then answers ANSWER."""

    def __init__(self, *actions: ToolCall | FinalAnswerAction | Callable[[AgentView], Any]) -> None:
        self.actions = list(actions)
        self.views: list[AgentView] = []

    def step(self, view: AgentView) -> Any:
        self.views.append(view)
        if not self.actions:
            return FinalAnswerAction(arguments=ANSWER)
        action = self.actions.pop(0)
        return action(view) if callable(action) else action


LIST = ToolCall(tool="list_package_files", arguments={"subdir": "."})


def test_a_replayed_run_gives_the_recorded_answer_and_score(
    release: Release, recorded: Trace, built_release: Path
) -> None:
    trace = run(release, ReplayAgent(recorded))

    assert trace.run_status == "ok"
    assert [step.arguments for step in trace.steps] == [step.arguments for step in recorded.steps]
    assert trace.final_answer.parsed == recorded.final_answer.parsed
    scorer = Scorer(release, open_ground_truth(built_release))
    task = release.task(TASK_ID)
    assert scorer.score_trace("x", task, trace).u == scorer.score_trace("x", task, recorded).u
    assert (trace.dataset_version, trace.package_sha256) == (release.version, "0" * 64)


def test_steps_record_observations_timing_and_touched_files(release: Release, recorded: Trace) -> None:
    trace = run(release, ReplayAgent(recorded))

    read = next(step for step in trace.steps if step.action == "read_text_file")
    assert read.ok and read.observation.text.startswith("{")
    assert read.evidence_files == [
        read.arguments["path"].split(f"/{read.arguments['path'].split('/')[3]}/")[-1]
    ]
    assert read.started_at is not None and read.ended_at is not None and read.ended_at >= read.started_at
    assert trace.totals.tool_calls == len(trace.steps) and trace.totals.file_reads >= 1


def test_the_scripted_baseline_lists_reads_and_fills_the_question_template(release: Release) -> None:
    trace = run(release, ScriptedAgent(), task_id="CSX-001_Q1")

    assert trace.run_status == "ok"
    actions = [step.action for step in trace.steps]
    assert actions[0] == "list_package_files" and len(actions) == 4
    answer = trace.final_answer.parsed
    assert answer["answer_type"] == "expert_source_arbitration"
    assert set(answer["selected_calculation"]) >= {"peak_daily_tmax_c", "hot_hour_mean_rh_percent"}
    assert answer["selected_source"].startswith("data/")
    assert run(release, ScriptedAgent(), task_id="CSX-001_Q1").final_answer == trace.final_answer


def test_an_unknown_tool_is_an_error_observation_naming_the_tools(release: Release) -> None:
    agent = Scripted(ToolCall(tool="browser.open", arguments={"url": "x"}))

    trace = run(release, agent)

    assert not trace.steps[0].ok and "unknown tool 'browser.open'" in (trace.steps[0].error or "")
    assert "read_text_file" in agent.views[1].last.text and trace.totals.tool_errors == 1


def test_the_turn_limit_moves_to_finalization_and_refuses_tools(release: Release) -> None:
    agent = Scripted(LIST, LIST, LIST)

    trace = run(release, agent, Controller(Budgets(max_turns=2)))

    assert (trace.run_status, trace.termination_reason) == ("ok", "round_limit")
    finalize = agent.views[2]
    assert finalize.phase == "finalize" and "Research is over" in (finalize.notice or "")
    assert [tool["function"]["name"] for tool in finalize.tools] == ["final_answer"]
    assert trace.steps[2].error == "not run: research is over; only final_answer is accepted now"


def test_no_answer_in_finalization_is_a_solver_failure(release: Release) -> None:
    trace = run(release, Scripted(*[LIST] * 10), Controller(Budgets(max_turns=1, finalization_turns=2)))

    assert trace.run_status == "solver_failure"
    assert trace.termination_reason == "no_final_answer (round_limit, then round_limit in finalization)"
    assert trace.final_answer.status == "missing" and len(trace.steps) == 3


def test_the_research_time_limit_is_enforced_by_the_clock(release: Release) -> None:
    clock = [0.0]

    def slow_list(view: AgentView) -> ToolCall:
        clock[0] += 850.0
        return LIST

    trace = run(release, Scripted(slow_list, slow_list), Controller(now=lambda: clock[0]))

    assert (trace.run_status, trace.termination_reason) == ("ok", "research_time_limit")
    assert len(trace.steps) == 2  # at 1700 s research (1680 s) is over; the answer comes in finalization


def test_a_stalled_agent_is_cut_off_at_the_research_deadline(release: Release) -> None:
    async def stall(view: AgentView) -> ToolCall:
        await asyncio.sleep(60)
        return LIST

    class Stalls(Scripted):
        def step(self, view: AgentView) -> Any:
            return stall(view) if view.phase == "research" else FinalAnswerAction(arguments=ANSWER)

    budgets = Budgets(research_s=0.2, overall_s=5.0, finalization_s=1.0)
    trace = run(release, Stalls(), Controller(budgets))

    assert (trace.run_status, trace.termination_reason) == ("ok", "research_time_limit")


def test_two_repairs_are_allowed_then_the_run_fails(release: Release) -> None:
    bad = FinalAnswerAction(arguments={"confidence": 3})
    repaired = run(release, Scripted(bad, bad))
    exhausted = run(release, Scripted(bad, bad, bad))

    assert (repaired.run_status, repaired.final_answer.status, repaired.final_answer.repair_attempts) == (
        "ok",
        "repaired",
        2,
    )
    assert (exhausted.run_status, exhausted.termination_reason) == (
        "solver_failure",
        "schema_repairs_exhausted",
    )
    assert exhausted.final_answer.status == "missing"


def test_the_review_phase_can_revise_the_answer(release: Release) -> None:
    revised = {**ANSWER, "answer": {"value": 2}}
    agent = Scripted(FinalAnswerAction(arguments=ANSWER), LIST, FinalAnswerAction(arguments=revised))

    trace = run(release, agent, Controller(review=True))

    assert trace.final_answer.parsed == {"value": 2} and trace.extra["review"] == {"revised": True}
    review = agent.views[1]
    assert review.phase == "review" and review.draft_answer["answer"] == {"value": 1}


def test_a_failed_review_keeps_the_draft(release: Release) -> None:
    bad = FinalAnswerAction(arguments={"confidence": 9})
    agent = Scripted(FinalAnswerAction(arguments=ANSWER), bad, bad, bad)

    trace = run(release, agent, Controller(review=True))

    assert (trace.run_status, trace.final_answer.parsed) == ("ok", {"value": 1})
    assert trace.extra["review"]["kept_draft_because"] == "schema_repairs_exhausted"


def test_an_agent_that_raises_is_a_solver_failure_not_a_crash(release: Release) -> None:
    def broken(view: AgentView) -> ToolCall:
        raise KeyError("no such thing")

    wrong_type = run(release, Scripted(lambda view: {"tool": "list_package_files"}))
    raised = run(release, Scripted(broken))

    assert raised.run_status == "solver_failure"
    assert raised.termination_reason == "solver_failure: agent error: KeyError: 'no such thing'"
    assert (
        wrong_type.termination_reason
        == "solver_failure: agent returned dict, not a ToolCall or FinalAnswerAction"
    )


def test_a_string_answer_is_kept_as_the_models_text(release: Release) -> None:
    text = 'The answer: {"value": 3}'
    trace = run(release, Scripted(FinalAnswerAction(arguments={"answer": text})))

    assert (trace.final_answer.raw_text, trace.final_answer.raw_text_origin) == (text, "model")
    assert trace.final_answer.parsed == {"value": 3}


def test_the_package_hash_is_the_same_for_the_built_folder_and_the_hub_archive(
    release: Release, built_release: Path, tmp_path: Path
) -> None:
    hub = open_release(built_release / "hub" / "public", cache_dir=tmp_path)

    built = package_sha256(release.package("CSX-321"))

    assert built == package_sha256(hub.package("CSX-321"))
    assert built != package_sha256(release.package("CSX-318")) and len(built) == 64


def test_budgets_must_leave_room_for_finalization() -> None:
    with pytest.raises(ValueError, match=r"research_s \(1790\) \+ finalization_s \(120\) exceed overall_s"):
        Budgets(research_s=1790)
    assert Budgets() == Budgets(
        max_turns=48, research_s=1680, overall_s=1800, finalization_s=120, max_repairs=2
    )


def test_a_replayed_python_step_runs_the_recorded_program(release: Release, source_release: Any) -> None:
    recorded = read_recorded_trace(source_release.trajectories_dir / "gpt-4o" / "CSX-001_Q1.json")
    python = next(step for step in recorded.steps if step.action == "python_exec")

    trace = run(release, ReplayAgent(recorded), task_id="CSX-001_Q1")

    replayed = next(step for step in trace.steps if step.action == "python_exec")
    assert python.code is not None and replayed.arguments == {"code": python.code.text}
    assert replayed.code is not None and replayed.code.text == python.code.text
    assert replayed.returncode is not None  # it ran in the sandbox (this program was cut by the site cap)
    assert trace.totals.python_calls == 1
