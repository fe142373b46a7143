"""The LLM judge, end to end through litellm against a local OpenAI-compatible stand-in, on a real task
of the built release and a real recorded run."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from evaluator.provider_errors import Backoff, retry_after_seconds
from evaluator.scoring.judge import (
    Judge,
    JudgeResult,
    NoJudge,
    VerdictError,
    judge_from_option,
    parse_verdict,
    process_score,
)
from evaluator.scoring.judge_prompt import PROMPT_VERSION, Budget, build_messages, render_trace
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import CapturedText, FinalAnswer, Trace
from loaders.models import HiddenTask, Rubric, Task
from loaders.release import open_ground_truth, open_release
from tests.openai_standin import HttpError, MalformedBody, OpenAIStandin, Reply, Stall, tool_call

TASK_ID = "CSX-001_Q1"
RUNS = ("claude-haiku-4-5", "gpt-4o")
MODEL = "openai/standin-judge"
KEY_ENV = "EARTHVERSE_TEST_JUDGE_KEY"
KEY = "test-key-not-a-secret"
RATIONALE = "RATIONALE-MARKER: the answer matches the reference in every field"
FAST = Backoff(initial_s=0.01, factor=2.0, max_s=1.0)


@dataclass(frozen=True)
class Case:
    task: Task
    hidden: HiddenTask
    traces: dict[str, Trace]

    @property
    def trace(self) -> Trace:
        return self.traces[RUNS[0]]

    @property
    def rubric(self) -> Rubric:
        return self.hidden.ground_truth.rubric

    def judged_by(self, judge: Judge | NoJudge, run: str = RUNS[0]) -> JudgeResult:
        return judge.judge(self.task, self.hidden, self.traces[run])


@pytest.fixture(scope="module")
def case(built_release: Path, source_release: Any) -> Case:
    runs = source_release.trajectories_dir
    return Case(
        task=open_release(built_release).task(TASK_ID),
        hidden=open_ground_truth(built_release)[TASK_ID],
        traces={run: read_recorded_trace(runs / run / f"{TASK_ID}.json") for run in RUNS},
    )


@dataclass
class Rig:
    """A stand-in API and the judge settings that point at it (fast backoff, recorded waits)."""

    api: OpenAIStandin
    cache_dir: Path
    delays: list[float] = field(default_factory=list)

    def judge(self, **settings: Any) -> Judge:
        defaults: dict[str, Any] = {
            "cache_dir": self.cache_dir,
            "api_base": self.api.url,
            "api_key_env": KEY_ENV,
            "backoff": FAST,
            "sleep": self.delays.append,
            "timeout_s": 5.0,
        }
        return Judge(MODEL, **{**defaults, **settings})


@pytest.fixture
def api() -> Iterator[OpenAIStandin]:
    with OpenAIStandin() as server:
        yield server


@pytest.fixture
def rig(api: OpenAIStandin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Rig:
    monkeypatch.setenv(KEY_ENV, KEY)
    return Rig(api, tmp_path / "judge-cache")


def verdict(rubric: Rubric, answer_score: float = 72.0, deduction: float = 0.0) -> dict[str, Any]:
    """A valid verdict: full points on every criterion but `deduction`, taken from the first ones."""
    criteria = []
    for criterion in rubric.criteria:
        taken = min(criterion.points, deduction)
        deduction -= taken
        criteria.append({"name": criterion.name, "points": criterion.points - taken, "rationale": RATIONALE})
    return {
        "answer_score": answer_score,
        "answer_rationale": RATIONALE,
        "criteria": criteria,
        "critical_errors": [],
    }


def reply(payload: dict[str, Any]) -> Reply:
    return Reply(json.dumps(payload))


def test_a_valid_verdict_gives_H_and_P_from_the_criterion_points(case: Case, rig: Rig) -> None:
    rig.api.push(reply(verdict(case.rubric, answer_score=72.0, deduction=3.0)))

    result = case.judged_by(rig.judge())

    assert result.status == "scored"
    assert (result.H, result.P) == (72.0, 85.0)  # 17 of 20 rubric points
    assert sum(result.criterion_points.values()) == 17.0
    assert list(result.criterion_points) == [criterion.name for criterion in case.rubric.criteria]
    assert (result.attempts, result.judge_model, result.prompt_version) == (1, MODEL, PROMPT_VERSION)
    assert result.prompt_tokens > 0 and result.completion_tokens > 0
    assert rig.delays == []


def test_the_openai_model_string_goes_through_litellm_to_the_api_base(case: Case, rig: Rig) -> None:
    rig.api.push(reply(verdict(case.rubric)))

    case.judged_by(rig.judge())

    [request] = rig.api.chat_requests
    assert request.body["model"] == "standin-judge"  # litellm strips the provider prefix
    assert request.body["temperature"] == 0
    assert request.body["response_format"] == {"type": "json_object"}
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert [message["role"] for message in request.messages] == ["system", "user"]


def test_the_prompt_holds_the_question_the_reference_the_rubric_and_the_trace(case: Case) -> None:
    system, user = build_messages(case.task, case.hidden, case.trace)
    prompt = user["content"]

    assert '"answer_score"' in system["content"] and '"critical_errors"' in system["content"]
    assert case.task.question.strip() in prompt
    assert case.hidden.ground_truth.primary_gt["arbitration_basis"] in prompt
    assert "do_not_infer" in prompt and "required_elements" in prompt  # the judge anchors
    for criterion in case.rubric.criteria:
        assert f'"{criterion.name}" (maximum {criterion.points:g} points): {criterion.description}' in prompt
    for step in case.trace.steps:
        assert f"[step {step.index}] {step.action}" in prompt
        assert step.reason[:80] in prompt
    assert case.trace.final_answer.evidence[0].claim in prompt
    assert "omitted" not in prompt  # a short run is shown whole


def test_a_long_trace_is_bounded_by_cutting_its_middle(case: Case) -> None:
    step = case.trace.steps[1]
    steps = [
        step.model_copy(update={"index": index, "observation": CapturedText(text="x" * 5_000)})
        for index in range(1, 201)
    ]
    long_run = case.trace.model_copy(update={"steps": steps})
    budget = Budget(trace_chars=24_000)

    rendered = render_trace(long_run, budget)

    assert len(rendered) <= budget.trace_chars + 1_000
    assert "[step 1] " in rendered and "[step 200] " in rendered
    assert "omitted here to keep the trace within the judge's input budget" in rendered
    assert len(build_messages(case.task, case.hidden, long_run)[1]["content"]) < 60_000


MALFORMED: dict[str, Callable[[dict[str, Any]], str]] = {
    "not_json": lambda good: "The answer looks right to me; I would give it a high score.",
    "empty": lambda good: "",
    "wrong_shape": lambda good: json.dumps({**good, "criteria": {"Source arbitration": 4}}),
    "missing_criterion": lambda good: json.dumps({**good, "criteria": good["criteria"][:-1]}),
    "unknown_criterion": lambda good: json.dumps(
        {**good, "criteria": [*good["criteria"], {"name": "Elegance", "points": 1, "rationale": ""}]}
    ),
    "duplicate_criterion": lambda good: json.dumps(
        {**good, "criteria": [*good["criteria"], good["criteria"][0]]}
    ),
    "points_out_of_range": lambda good: json.dumps(
        {**good, "criteria": [{**good["criteria"][0], "points": 99}, *good["criteria"][1:]]}
    ),
    "answer_score_out_of_range": lambda good: json.dumps({**good, "answer_score": 140}),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_malformed_verdict_is_corrected_and_a_valid_one_accepted(
    case: Case, rig: Rig, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    good = verdict(case.rubric, deduction=2.0)
    bad = MALFORMED[kind](good)
    rig.api.push(Reply(bad), reply(good))

    with caplog.at_level(logging.WARNING, logger="evaluator.scoring.judge"):
        result = case.judged_by(rig.judge())

    assert (result.status, result.attempts, result.P) == ("scored", 2, 90.0)
    assert f"invalid verdict ({kind})" in caplog.text
    first, second = rig.api.chat_requests
    assert second.messages[:2] == first.messages
    rejected, correction = second.messages[2:]
    assert rejected == {"role": "assistant", "content": bad}
    assert correction["role"] == "user" and "not a valid verdict" in correction["content"]
    assert rig.delays == []  # a bad verdict is answered at once; only provider errors wait


def test_the_correction_names_what_is_wrong(case: Case) -> None:
    good = verdict(case.rubric)
    missing = json.dumps({**good, "criteria": good["criteria"][1:]})

    with pytest.raises(VerdictError) as raised:
        parse_verdict(missing, case.rubric)

    assert raised.value.kind == "missing_criterion"
    assert case.rubric.criteria[0].name in raised.value.detail


def test_a_verdict_in_a_json_fence_is_accepted(case: Case) -> None:
    fenced = f"Here is my verdict:\n```json\n{json.dumps(verdict(case.rubric))}\n```"

    assert parse_verdict(fenced, case.rubric).answer_score == 72.0


def test_rate_limits_and_server_errors_are_retried_honouring_retry_after(case: Case, rig: Rig) -> None:
    rig.api.push(
        HttpError.rate_limited(retry_after=7), HttpError.server_error(503), reply(verdict(case.rubric))
    )

    result = case.judged_by(rig.judge())

    assert (result.status, result.attempts) == ("scored", 3)
    assert rig.delays == [7.0, 0.02]  # the server's Retry-After, then exponential backoff (attempt 2)


def test_a_stalled_response_and_a_broken_body_are_retried(case: Case, rig: Rig) -> None:
    rig.api.push(Stall(1.0), MalformedBody(), reply(verdict(case.rubric)))

    result = case.judged_by(rig.judge(timeout_s=0.3))

    assert (result.status, result.attempts) == ("scored", 3)
    assert rig.delays == [0.01, 0.02]


def test_a_judge_that_never_delivers_is_unavailable_not_zero(case: Case, rig: Rig) -> None:
    rig.api.responder = lambda request: Reply("not a verdict")

    result = case.judged_by(rig.judge(max_attempts=3))

    assert result.status == "unavailable"
    assert (result.H, result.P, result.verdict) == (None, None, None)
    assert result.attempts == 3 and len(rig.api.chat_requests) == 3
    assert result.error == "no valid verdict after 3 attempt(s); last failure: invalid verdict (not_json)"
    case.judged_by(rig.judge(max_attempts=3))
    assert len(rig.api.chat_requests) == 6  # an unavailable result is not cached: the next run asks again


def test_persistent_server_errors_end_unavailable_without_a_wait_after_the_last(case: Case, rig: Rig) -> None:
    rig.api.responder = lambda request: HttpError.server_error()

    result = case.judged_by(rig.judge(max_attempts=4))

    assert (result.status, result.attempts, result.H, result.P) == ("unavailable", 4, None, None)
    assert "provider error 500" in (result.error or "")
    assert rig.delays == [0.01, 0.02, 0.04]


def test_an_authentication_error_is_not_retried(case: Case, rig: Rig) -> None:
    rig.api.push(HttpError(401, "invalid api key"))

    result = case.judged_by(rig.judge())

    assert (result.status, result.attempts) == ("unavailable", 1)
    assert "provider error 401" in (result.error or "")


def test_a_refused_connection_is_retried_then_unavailable(case: Case, rig: Rig) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again on exit: nothing listens there

    result = case.judged_by(rig.judge(api_base=f"http://127.0.0.1:{port}/v1", max_attempts=2))

    assert (result.status, result.attempts) == ("unavailable", 2)
    assert "connection error" in (result.error or "")
    assert rig.delays == [0.01]


def test_a_rescore_is_served_from_the_cache_without_a_request(case: Case, rig: Rig) -> None:
    rig.api.push(reply(verdict(case.rubric, deduction=3.0)))
    first = case.judged_by(rig.judge())

    again = case.judged_by(rig.judge())

    assert len(rig.api.chat_requests) == 1
    assert again.from_cache and not first.from_cache
    assert again.model_dump() == first.model_dump()
    assert (rig.cache_dir / TASK_ID / f"{first.cache_key}.json").is_file()


def test_a_changed_answer_or_judge_model_misses_the_cache(case: Case, rig: Rig) -> None:
    rig.api.responder = lambda request: reply(verdict(case.rubric))
    case.judged_by(rig.judge())
    edited = FinalAnswer.from_object({"answer_type": "expert_source_arbitration"})
    changed = case.trace.model_copy(update={"final_answer": edited})

    rig.judge().judge(case.task, case.hidden, changed)
    Judge("openai/another-judge", cache_dir=rig.cache_dir, api_base=rig.api.url, api_key_env=KEY_ENV).judge(
        case.task, case.hidden, case.trace
    )

    assert len(rig.api.chat_requests) == 3


def test_an_unreadable_cache_entry_is_a_miss_and_is_replaced(case: Case, rig: Rig) -> None:
    rig.api.responder = lambda request: reply(verdict(case.rubric))
    first = case.judged_by(rig.judge())
    entry = rig.cache_dir / TASK_ID / f"{first.cache_key}.json"
    entry.write_text("{ truncated", encoding="utf-8")

    second = case.judged_by(rig.judge())

    assert not second.from_cache and len(rig.api.chat_requests) == 2
    assert case.judged_by(rig.judge()).from_cache


def test_no_hidden_text_reaches_the_logs(
    case: Case, rig: Rig, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    good = verdict(case.rubric)
    rig.api.push(HttpError.rate_limited(0), Reply(MALFORMED["missing_criterion"](good)), reply(good))
    rig.api.responder = lambda request: Reply(MALFORMED["points_out_of_range"](good))

    with caplog.at_level(logging.DEBUG):
        scored = case.judged_by(rig.judge())
        unavailable = case.judged_by(rig.judge(max_attempts=2), run=RUNS[1])

    assert (scored.status, unavailable.status) == ("scored", "unavailable")
    sent = json.dumps([request.body for request in rig.api.chat_requests])
    hidden = _hidden_strings(case)
    assert all(text in sent for text in hidden)  # the judge did see them, so the check below means something
    logged = caplog.text + "".join(capfd.readouterr())
    assert TASK_ID in caplog.text
    leaked = [text for text in [*hidden, RATIONALE, KEY] if text in logged]
    assert leaked == []


def _hidden_strings(case: Case) -> list[str]:
    """Distinctive hidden texts the prompt carries and the public run does not: GT strings and anchors,
    rubric criterion names and descriptions."""
    truth = case.hidden.ground_truth
    public = json.dumps(case.trace.model_dump(mode="json", exclude={"recorded"})) + case.task.question
    leaves = _strings(truth.primary_gt) + _strings((truth.model_extra or {}).get("judge_anchors"))
    rubric = [text for criterion in truth.rubric.criteria for text in (criterion.name, criterion.description)]
    return [text for text in leaves + rubric if len(text) >= 12 and text not in public]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def test_concurrent_judging_through_ajudge(case: Case, rig: Rig) -> None:
    rig.api.responder = lambda request: reply(verdict(case.rubric, deduction=1.0))
    judge = rig.judge()

    async def both() -> list[JudgeResult]:
        return list(
            await asyncio.gather(*(judge.ajudge(case.task, case.hidden, case.traces[run]) for run in RUNS))
        )

    results = asyncio.run(both())

    assert [result.P for result in results] == [95.0, 95.0]
    assert len({result.cache_key for result in results}) == 2


def test_judge_none_scores_nothing_and_asks_nobody(case: Case, rig: Rig) -> None:
    judge = judge_from_option(" None ", cache_dir=rig.cache_dir)

    result = case.judged_by(judge)

    assert isinstance(judge, NoJudge)
    assert (result.status, result.H, result.P, result.judge_model) == ("not_requested", None, None, "none")
    assert asyncio.run(judge.ajudge(case.task, case.hidden, case.trace)) == result
    assert rig.api.requests == []


def test_judge_option_names_a_litellm_model(rig: Rig) -> None:
    judge = judge_from_option(MODEL, cache_dir=rig.cache_dir, api_base=rig.api.url, api_key_env=KEY_ENV)

    assert isinstance(judge, Judge) and judge.model == MODEL
    with pytest.raises(ValueError, match="model id"):
        judge_from_option("  ", cache_dir=rig.cache_dir)


def test_a_missing_api_key_variable_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="EARTHVERSE_NO_SUCH_KEY"):
        Judge(MODEL, cache_dir=tmp_path, api_key_env="EARTHVERSE_NO_SUCH_KEY")


def test_a_model_litellm_cannot_route_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot route"):
        Judge("no-provider-model", cache_dir=tmp_path)


def test_inputs_of_different_tasks_are_refused(case: Case, rig: Rig) -> None:
    other = case.hidden.model_copy(update={"task_id": "CSX-002_Q1"})

    with pytest.raises(ValueError, match="disagree"):
        rig.judge().judge(case.task, other, case.trace)


def test_a_scored_result_must_carry_H_and_P() -> None:
    with pytest.raises(ValidationError):
        JudgeResult(task_id=TASK_ID, judge_model=MODEL, status="scored")
    with pytest.raises(ValidationError):
        JudgeResult(task_id=TASK_ID, judge_model=MODEL, status="unavailable")


def test_process_score_is_the_share_of_rubric_points(case: Case) -> None:
    points = {criterion.name: criterion.points for criterion in case.rubric.criteria}
    points[case.rubric.criteria[0].name] -= 1.5

    assert process_score(points, case.rubric) == pytest.approx(92.5)


def test_retry_after_in_seconds_milliseconds_or_as_a_date() -> None:
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)

    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert 25 <= (retry_after_seconds({"Retry-After": soon}) or 0) <= 30
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_is_exponential_capped_and_yields_to_the_server() -> None:
    backoff = Backoff(initial_s=2.0, factor=2.0, max_s=10.0, max_retry_after_s=60.0)

    assert [backoff.delay(attempt) for attempt in (1, 2, 3, 4)] == [2.0, 4.0, 8.0, 10.0]
    assert backoff.delay(1, retry_after=30.0) == 30.0
    assert backoff.delay(1, retry_after=3_600.0) == 60.0


def test_the_stand_in_plays_back_tool_calls_through_litellm(rig: Rig) -> None:
    from evaluator.llm import litellm

    call = tool_call("read_text_file", {"path": "data/event_reports/a.json"}, call_id="call_1")
    rig.api.push(Reply(tool_calls=[call]))

    response = litellm.completion(
        model=MODEL, api_base=rig.api.url, api_key=KEY, messages=[{"role": "user", "content": "go"}]
    )

    [played] = response.choices[0].message.tool_calls
    assert (played.id, played.function.name) == ("call_1", "read_text_file")
    assert json.loads(played.function.arguments) == {"path": "data/event_reports/a.json"}
    assert response.choices[0].finish_reason == "tool_calls"
