"""The harness end to end through the real HTTP path, offline: litellm against a local OpenAI-compatible
server that plays the paper's recorded runs back, with faults injected on request."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluator.agents.litellm_agent import LiteLLMAgent
from evaluator.agents.registry import AgentOptions, agent_from_option
from evaluator.cli import main
from evaluator.harness.budgets import Budgets
from evaluator.harness.controller import Controller, RunTarget
from evaluator.harness.provider import Provider, ProviderSettings
from evaluator.provider_errors import Backoff
from evaluator.scoring.pipeline import Scorer
from evaluator.scoring.scores_io import read_scores
from evaluator.tools.final_answer import FinalAnswerArguments, final_answer_spec
from evaluator.tools.registry import default_registry
from evaluator.traces.io import read_submission
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import SystemIdentity, Trace
from loaders.release import Release, open_ground_truth, open_release
from tests.openai_standin import HttpError, OpenAIStandin, Reply, Stall
from tests.playback_server import Playback, broken_tool_call, schema_failing_answer

RUNS = (
    ("gpt-4o", "CSX-321_Q1"),
    ("gemini-3-1-flash-lite", "CSX-318_Q1"),
    ("claude-sonnet-4-6", "CSX-310_Q1"),
)
KEY_ENV = "EARTHVERSE_TEST_AGENT_KEY"
FAST = Backoff(initial_s=0.01, factor=2.0, max_s=0.05)
SYSTEM = SystemIdentity(system_id="playback", system_name="playback", model="openai/playback")


@dataclass
class Rig:
    release: Release
    scorer: Scorer
    recorded: dict[str, Trace]
    api: OpenAIStandin
    playback: Playback
    sleeps: list[float]

    def agent(self, native: bool = True, timeout_s: float = 10.0, max_attempts: int = 4) -> LiteLLMAgent:
        settings = ProviderSettings(
            model="openai/playback",
            api_base=self.api.url,
            api_key_env=KEY_ENV,
            timeout_s=timeout_s,
            max_attempts=max_attempts,
            backoff=FAST,
        )
        return LiteLLMAgent(Provider(settings, sleep=self._sleep), Budgets(), native)

    async def _sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    def run(self, task_id: str, agent: LiteLLMAgent, controller: Controller | None = None) -> Trace:
        task = self.release.task(task_id)
        target = RunTarget(task, self.release.package(task.event_id), SYSTEM, self.release.version, "sha")
        return asyncio.run((controller or Controller()).run(agent, target))

    def u(self, trace: Trace) -> float:
        return self.scorer.score_trace(SYSTEM.system_id, self.release.task(trace.task_id), trace).u


@pytest.fixture(scope="module")
def setting(built_release: Path, source_release: Any) -> tuple[Release, Scorer, dict[str, Trace]]:
    release = open_release(built_release)
    scorer = Scorer(release, open_ground_truth(built_release))
    runs = source_release.trajectories_dir
    recorded = {task: read_recorded_trace(runs / system / f"{task}.json") for system, task in RUNS}
    return release, scorer, recorded


@pytest.fixture
def rig(setting: tuple[Release, Scorer, dict[str, Trace]], monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    monkeypatch.setenv(KEY_ENV, "test-key")
    release, scorer, recorded = setting
    playback = Playback(recorded)
    with OpenAIStandin(responder=playback) as api:
        yield Rig(release, scorer, recorded, api, playback, [])


def _answer_of(trace: Trace) -> Any:
    return trace.final_answer.parsed if trace.final_answer.parsed is not None else trace.final_answer.raw_text


@pytest.mark.parametrize(("system", "task_id"), RUNS)
def test_a_played_back_run_reproduces_the_recorded_answer_and_score(
    rig: Rig, system: str, task_id: str
) -> None:
    recorded = rig.recorded[task_id]

    trace = rig.run(task_id, rig.agent(native=True))

    assert (trace.run_status, trace.termination_reason) == ("ok", "model_final")
    assert [step.action for step in trace.steps] == [step.action for step in recorded.steps]
    assert [step.arguments for step in trace.steps] == [step.arguments for step in recorded.steps]
    assert _answer_of(trace) == _answer_of(recorded)
    assert rig.u(trace) == rig.u(recorded)
    assert trace.totals.rounds == len(recorded.steps) + 1
    assert trace.totals.prompt_tokens and trace.totals.completion_tokens  # the server's usage, summed


def test_the_json_action_contract_reproduces_a_run_without_native_tools(rig: Rig) -> None:
    task_id = RUNS[0][1]

    trace = rig.run(task_id, rig.agent(native=False))

    assert trace.run_status == "ok"
    assert rig.u(trace) == rig.u(rig.recorded[task_id])
    assert all("tools" not in request.body for request in rig.api.chat_requests)
    assert "JSON object" in rig.api.chat_requests[0].messages[0]["content"]  # the contract is in the prompt


def test_rate_limits_and_server_errors_are_retried_and_recorded(rig: Rig) -> None:
    task_id = RUNS[0][1]
    rig.playback.inject(task_id, 1, HttpError.rate_limited(retry_after=3), HttpError.server_error(503))

    trace = rig.run(task_id, rig.agent())

    assert trace.run_status == "ok"
    assert rig.u(trace) == rig.u(rig.recorded[task_id])
    assert rig.sleeps == [3.0, 0.02]  # Retry-After honoured, then exponential backoff
    kinds = [event["kind"] for event in trace.extra["provider_events"]]
    assert kinds == ["rate limited (429)", "provider error 503 (ServiceUnavailableError)"]
    assert trace.extra["provider_events"][0]["round"] == 2
    assert trace.steps[1].warnings == [
        f"provider attempt {n} failed: {kind}" for n, kind in enumerate(kinds, 1)
    ]


def test_a_stalled_response_times_out_and_is_retried(rig: Rig) -> None:
    task_id = RUNS[1][1]
    rig.playback.inject(task_id, 0, Stall(2.0))

    trace = rig.run(task_id, rig.agent(timeout_s=0.5))

    assert trace.run_status == "ok"
    assert [event["kind"] for event in trace.extra["provider_events"]] == ["timeout"]


def test_a_tool_call_with_broken_json_is_asked_for_again(rig: Rig) -> None:
    task_id = RUNS[1][1]
    rig.playback.inject(task_id, 1, broken_tool_call())

    trace = rig.run(task_id, rig.agent())

    assert trace.run_status == "ok"
    assert rig.u(trace) == rig.u(rig.recorded[task_id])
    [event] = trace.extra["provider_events"]
    assert event["kind"].startswith("malformed tool call: tool-call arguments are not valid JSON")


def test_a_model_that_keeps_breaking_tool_calls_is_a_solver_failure(rig: Rig) -> None:
    task_id = RUNS[1][1]
    rig.playback.inject(task_id, 0, *[broken_tool_call()] * 3)

    trace = rig.run(task_id, rig.agent())

    assert trace.run_status == "solver_failure"
    assert "malformed tool-call arguments" in (trace.termination_reason or "")
    assert trace.final_answer.status == "missing"
    assert rig.u(trace) == 0.0


def test_an_answer_that_fails_the_schema_is_repaired(rig: Rig) -> None:
    task_id = RUNS[2][1]
    final_round = len(rig.recorded[task_id].steps)
    rig.playback.inject(task_id, final_round, schema_failing_answer())

    trace = rig.run(task_id, rig.agent())

    assert trace.run_status == "ok"
    assert (trace.final_answer.status, trace.final_answer.repair_attempts) == ("repaired", 1)
    rejected = trace.steps[-1]
    assert (rejected.action, rejected.ok) == ("final_answer", False)
    assert "answer: Field required" in (rejected.error or "")
    repair = rig.api.chat_requests[-1].messages
    assert repair[-2]["role"] == "tool" and repair[-2]["tool_call_id"] == "call_bad_final"
    assert "does not fit the final_answer schema" in repair[-1]["content"]
    assert rig.u(trace) == rig.u(rig.recorded[task_id])


def test_answers_that_never_fit_the_schema_end_as_a_solver_failure(rig: Rig) -> None:
    task_id = RUNS[2][1]
    final_round = len(rig.recorded[task_id].steps)
    rig.playback.inject(task_id, final_round, *[schema_failing_answer()] * 3)

    trace = rig.run(task_id, rig.agent())

    assert (trace.run_status, trace.termination_reason) == ("solver_failure", "schema_repairs_exhausted")
    assert [step.action for step in trace.steps].count("final_answer") == 3  # the answer and 2 repairs
    assert rig.u(trace) == 0.0


def test_a_provider_down_through_every_retry_is_an_infrastructure_failure(rig: Rig) -> None:
    task_id = RUNS[0][1]
    rig.playback.inject(task_id, 2, *[HttpError.server_error()] * 3)

    trace = rig.run(task_id, rig.agent(max_attempts=3))

    assert trace.run_status == "infrastructure_failure"
    assert trace.termination_reason == "infrastructure_failure: provider unavailable: provider error 500 " + (
        "(InternalServerError)"
    )
    assert len(trace.steps) == 2  # the steps done before the provider went down are kept
    assert [event["wait_s"] for event in trace.extra["provider_events"]] == [0.01, 0.02, 0.0]


def test_an_authentication_error_is_not_retried(rig: Rig) -> None:
    task_id = RUNS[0][1]
    rig.playback.inject(task_id, 0, HttpError(401, "invalid api key"))

    trace = rig.run(task_id, rig.agent())

    assert trace.run_status == "infrastructure_failure"
    assert len(rig.api.chat_requests) == 1


def test_a_missing_api_key_ends_the_task_at_once_and_says_so(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = ProviderSettings(model="openai/playback", api_base=rig.api.url, backoff=FAST)
    agent = LiteLLMAgent(Provider(settings, sleep=rig._sleep), Budgets(), native=True)

    trace = rig.run(RUNS[0][1], agent)

    assert trace.run_status == "infrastructure_failure"
    assert trace.termination_reason.startswith(
        "infrastructure_failure: provider unavailable: client not configured: Missing credentials."
    )
    assert "OPENAI_API_KEY" in trace.termination_reason
    assert rig.api.chat_requests == [] and rig.sleeps == []  # refused before sending, never retried


def test_the_turn_limit_closes_research_and_asks_for_the_answer(rig: Rig) -> None:
    task_id = RUNS[2][1]

    trace = rig.run(task_id, rig.agent(), Controller(Budgets(max_turns=2)))

    assert (trace.run_status, trace.termination_reason) == ("ok", "round_limit")
    assert len(trace.steps) == 2
    last_request = rig.api.chat_requests[-1]
    assert [tool["function"]["name"] for tool in last_request.body["tools"]] == ["final_answer"]
    assert "Research is over (round limit)" in last_request.messages[-1]["content"]


def test_the_context_keeps_sixteen_recent_messages_and_never_orphans_a_tool_result(rig: Rig) -> None:
    task_id = RUNS[2][1]
    budgets = Budgets(recent_messages=4)

    agent = rig.agent()
    agent.budgets = budgets
    rig.run(task_id, agent)

    for request in rig.api.chat_requests:
        messages = request.messages
        assert [message["role"] for message in messages[:2]] == ["system", "user"]
        for index, message in enumerate(messages):
            if message["role"] == "tool":
                owners = [m for m in messages[:index] if m["role"] == "assistant" and m.get("tool_calls")]
                assert any(call["id"] == message["tool_call_id"] for m in owners for call in m["tool_calls"])
    last = rig.api.chat_requests[-1].messages
    assert last[2]["content"].startswith("Research state")
    assert "step 1 list_package_files" in last[2]["content"]


def test_the_registry_builds_a_litellm_agent_for_a_local_server(rig: Rig) -> None:
    options = AgentOptions(api_base=rig.api.url, api_key_env=KEY_ENV, tool_mode="json", backoff=FAST)
    spec = agent_from_option("litellm:openai/playback", options)

    agent = spec.factory(rig.release.task(RUNS[0][1]))

    assert spec.system.system_id == "openai-playback"
    assert isinstance(agent, LiteLLMAgent) and agent.native is False


def test_a_missing_key_variable_is_refused_before_any_task(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(ValueError, match=f"the API key variable {KEY_ENV} is not set"):
        agent_from_option("litellm:openai/x", AgentOptions(api_key_env=KEY_ENV))


def test_request_bodies_carry_the_tools_and_the_task(rig: Rig) -> None:
    task_id = RUNS[0][1]

    rig.run(task_id, rig.agent())

    first = rig.api.chat_requests[0].body
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert names[-1] == "final_answer" and "python_exec" in names
    assert task_id in first["messages"][1]["content"]
    assert json.loads(json.dumps(first))["temperature"] == 0.0
    # the argument schemas are built once and shared by every request: nothing on the way may change them
    for tool in default_registry():
        fresh = tool.Arguments.model_json_schema()
        assert first["tools"][names.index(tool.name)]["function"]["parameters"] == fresh
        assert tool.parameters() == fresh
    assert final_answer_spec()["function"]["parameters"] == FinalAnswerArguments.model_json_schema()


def test_the_review_phase_answers_the_accepted_call_and_asks_again(rig: Rig) -> None:
    task_id = RUNS[1][1]

    trace = rig.run(task_id, rig.agent(), Controller(review=True))

    assert trace.run_status == "ok" and trace.extra["review"] == {"revised": True}
    review = rig.api.chat_requests[-1].messages
    assert review[-2] == {"role": "tool", "tool_call_id": f"call_{len(rig.recorded[task_id].steps)}",
                          "content": "final answer received"}  # fmt: skip
    assert review[-1]["content"].startswith("Before your answer is recorded, review it.")
    assert rig.u(trace) == rig.u(rig.recorded[task_id])


def test_a_json_contract_message_without_an_action_is_answered_with_the_contract(rig: Rig) -> None:
    task_id = RUNS[0][1]
    rig.playback.inject(task_id, 0, Reply("Let me think about which files to open first."))

    trace = rig.run(task_id, rig.agent(native=False))

    assert (trace.steps[0].action, trace.steps[0].ok) == ("", False)
    assert "holds no JSON object" in trace.steps[0].reason
    assert "Your message is not a valid action" in rig.api.chat_requests[1].messages[-1]["content"]
    assert trace.run_status == "ok" and rig.u(trace) == rig.u(rig.recorded[task_id])


def test_earthverse_run_through_a_local_server_reproduces_three_systems(
    rig: Rig, built_release: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    tasks = ",".join(task_id for _, task_id in RUNS)

    code = main(
        ["run", "--agent", "litellm:openai/playback", "--api-base", rig.api.url, "--api-key-env", KEY_ENV,
         "--release", str(built_release), "--tasks", tasks, "--concurrency", "3", "--out", str(out),
         "--no-progress"]
    )  # fmt: skip

    assert code == 0
    scores = {score.task_id: score.u for score in read_scores(out / "scores.jsonl")}
    assert scores == {task_id: rig.u(rig.recorded[task_id]) for _, task_id in RUNS}
    submission = read_submission(out / "submission.jsonl")
    assert {trace.run_status for trace in submission.traces} == {"ok"}
    assert {trace.system.system_id for trace in submission.traces} == {"openai-playback"}
    assert all("tools" not in request.body for request in rig.api.chat_requests)  # auto: JSON contract
