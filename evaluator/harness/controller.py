"""The controller: runs one agent on one task under the paper's protocol and returns its complete trace.

Phases: research (tools open, until the agent answers, `max_turns` tool calls are spent or the research
time is up), finalization (only final_answer is accepted, a few turns within the overall limit) and,
when asked, a bounded review of the accepted answer. A final answer that does not fit the schema is sent
back for repair at most `max_repairs` times. Tools run in worker threads (`asyncio.to_thread`).

How a run ends: `ok` with the agent's answer; `solver_failure` (the agent failed: no answer in time,
repairs exhausted, an agent error) with no answer, so it scores zero; `infrastructure_failure` (the
provider stayed down) with no answer, to be rerun. The trace says why in `termination_reason`.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from evaluator.agents.base import (
    Agent,
    AgentFailure,
    AgentView,
    FinalAnswerAction,
    InfrastructureFailure,
    Observation,
    Phase,
    ProviderEvent,
    SolverFailure,
    ToolCall,
    next_action,
)
from evaluator.harness import prompts
from evaluator.harness.budgets import Budgets, RunClock
from evaluator.harness.protocol import answer_problem, final_arguments
from evaluator.tools.base import ToolResult, cap_observation, failure
from evaluator.tools.final_answer import FINAL_ANSWER, FinalAnswerArguments, final_answer_spec
from evaluator.tools.registry import ToolRegistry, default_registry
from evaluator.traces.schema import (
    CapturedText,
    Evidence,
    FinalAnswer,
    RunStatus,
    Step,
    StepTokens,
    SystemIdentity,
    Totals,
    Trace,
)
from loaders.models import Task
from loaders.package import EventPackage, PackagePathError

FILE_READING_TOOLS = frozenset({"read_text_file", "summarize_table_or_json", "inspect_image"})
PYTHON_TOOL = "python_exec"
_CODE_PATH = re.compile(r"data/[\w./-]+")


@dataclass(frozen=True)
class RunTarget:
    """What one run is about: the task, its package, who runs it and which data it runs on."""

    task: Task
    package: EventPackage
    system: SystemIdentity
    dataset_version: str
    package_sha256: str


@dataclass(frozen=True)
class _Accepted:
    action: FinalAnswerAction
    answer: FinalAnswerArguments


@dataclass(frozen=True)
class _PhaseEnded:
    reason: str


class _RepairsExhausted(Exception):
    """The final answer still did not fit the schema after every allowed repair."""


@dataclass
class _Episode:
    target: RunTarget
    registry: ToolRegistry
    clock: RunClock
    tools: list[dict[str, Any]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    rounds: int = 0
    repairs: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def count(self, action: ToolCall | FinalAnswerAction) -> None:
        self.note_events(action.provider_events)
        if action.new_round:
            self.rounds += 1
        usage = action.usage
        if usage is None:
            return
        self.prompt_tokens = _add(self.prompt_tokens, usage.prompt_tokens)
        self.completion_tokens = _add(self.completion_tokens, usage.completion_tokens)
        self.cost_usd = _add(self.cost_usd, usage.cost_usd)

    def note_events(self, events: list[ProviderEvent]) -> None:
        self.events.extend({"round": self.rounds + 1, **event.model_dump()} for event in events)


def _add(total: Any, value: Any) -> Any:
    if value is None:
        return total
    return value if total is None else total + value


class Controller:
    """Runs agents under `budgets`; `registry_factory` gives each run its own tools (isolation)."""

    def __init__(
        self,
        budgets: Budgets | None = None,
        *,
        review: bool = False,
        registry_factory: Callable[[], ToolRegistry] = default_registry,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budgets = budgets or Budgets()
        self.review = review
        self._registry_factory = registry_factory
        self._now = now

    async def run(self, agent: Agent, target: RunTarget) -> Trace:
        """The complete trace of `agent` on `target`; never raises for anything the agent or the
        provider does (those end the run with the matching run_status)."""
        registry = self._registry_factory()
        # The function definitions once per run; their argument schemas are built once per process.
        tools = [*registry.specs(), final_answer_spec()]
        episode = _Episode(target, registry, RunClock(self.budgets, self._now), tools)
        try:
            return await self._episode(agent, episode)
        finally:
            await asyncio.to_thread(_close_tools, registry)

    async def _episode(self, agent: Agent, episode: _Episode) -> Trace:
        try:
            answered, termination = await self._answer(agent, episode)
        except InfrastructureFailure as error:
            episode.note_events(error.events)
            return self._ended(episode, "infrastructure_failure", f"infrastructure_failure: {error.reason}")
        except SolverFailure as error:
            episode.note_events(error.events)
            return self._ended(episode, "solver_failure", f"solver_failure: {error.reason}")
        except _RepairsExhausted:
            return self._ended(episode, "solver_failure", "schema_repairs_exhausted")
        if answered is None:
            return self._ended(episode, "solver_failure", termination)
        if self.review:
            answered = await self._reviewed(agent, episode, answered)
        if answered.action.raw_text:
            # The answer object is stored canonically (it is what is scored); the model's message is kept.
            episode.extra["final_answer_message"] = answered.action.raw_text
        return self._trace(episode, "ok", termination, _final_answer(answered, episode.repairs))

    async def _answer(self, agent: Agent, episode: _Episode) -> tuple[_Accepted | None, str]:
        budgets = self.budgets
        research = await self._phase(agent, episode, "research", budgets.max_turns, budgets.research_s)
        if isinstance(research, _Accepted):
            return research, "model_final"
        trigger = research.reason
        final = await self._phase(
            agent,
            episode,
            "finalize",
            budgets.finalization_turns,
            budgets.overall_s,
            notice=prompts.finalize_notice(trigger.replace("_", " ")),
        )
        if isinstance(final, _Accepted):
            return final, trigger
        return None, f"no_final_answer ({trigger}, then {final.reason} in finalization)"

    async def _reviewed(self, agent: Agent, episode: _Episode, draft: _Accepted) -> _Accepted:
        turns = self.budgets.review_turns
        draft_answer = draft.answer.model_dump(mode="json")
        repairs = episode.repairs
        try:
            revised = await self._phase(
                agent,
                episode,
                "review",
                turns,
                self.budgets.overall_s,
                notice=prompts.review_notice(draft_answer, turns),
                draft=draft_answer,
            )
        except AgentFailure as error:
            revised = _PhaseEnded(f"agent failed: {error.reason}")
        except _RepairsExhausted:
            revised = _PhaseEnded("schema_repairs_exhausted")
        if isinstance(revised, _Accepted):
            episode.extra["review"] = {"revised": True}
            return revised
        episode.repairs = repairs
        episode.extra["review"] = {"revised": False, "kept_draft_because": revised.reason}
        return draft

    async def _phase(
        self,
        agent: Agent,
        episode: _Episode,
        phase: Phase,
        max_turns: int,
        deadline_s: float,
        notice: str | None = None,
        draft: dict[str, Any] | None = None,
    ) -> _Accepted | _PhaseEnded:
        """Turns of one phase until an accepted answer, or the phase's turns or time are spent."""
        turns, last = 0, None
        while True:
            seconds_left = deadline_s - episode.clock.elapsed()
            if turns >= max_turns:
                return _PhaseEnded("round_limit")
            if seconds_left <= 0:
                return _PhaseEnded("research_time_limit" if phase == "research" else "overall_time_limit")
            view = self._view(episode, phase, turns, max_turns, seconds_left, last, notice, draft)
            try:
                action = await asyncio.wait_for(next_action(agent, view), timeout=seconds_left)
            except TimeoutError:
                continue
            except AgentFailure:
                raise
            except Exception as error:  # a user agent's bug is the solver's failure, not ours
                raise SolverFailure(f"agent error: {type(error).__name__}: {error}") from error
            episode.count(action)
            notice = None
            if isinstance(action, FinalAnswerAction):
                accepted, last, notice = self._check_answer(episode, action)
                if accepted is not None:
                    return accepted
                continue
            turns += 1
            last = await self._execute(episode, action, tools_open=phase != "finalize")

    def _view(
        self,
        episode: _Episode,
        phase: Phase,
        turns: int,
        max_turns: int,
        seconds_left: float,
        last: Observation | None,
        notice: str | None,
        draft: dict[str, Any] | None,
    ) -> AgentView:
        tools = episode.tools[-1:] if phase == "finalize" else episode.tools
        task = episode.target.task
        return AgentView(
            task_id=task.task_id,
            event_id=task.event_id,
            question=task.question,
            tools=tools,
            phase=phase,
            turn=len(episode.steps) + 1,
            turns_left=max_turns - turns,
            seconds_left=seconds_left,
            last=last,
            notice=notice,
            draft_answer=draft,
        )

    def _check_answer(
        self, episode: _Episode, action: FinalAnswerAction
    ) -> tuple[_Accepted | None, Observation | None, str | None]:
        problem = answer_problem(action.arguments)
        if problem is None:
            return _Accepted(action, final_arguments(action.arguments)), None, None
        episode.repairs += 1
        result = failure(f"final answer rejected: {problem}")
        self._record(episode, action, FINAL_ANSWER, action.arguments, result, datetime.now(UTC))
        if episode.repairs > self.budgets.max_repairs:
            raise _RepairsExhausted
        observation = Observation(
            tool=FINAL_ANSWER, call_id=action.call_id, ok=False, text=result.text, error=problem
        )
        return (
            None,
            observation,
            prompts.repair_notice(problem, self.budgets.max_repairs - episode.repairs + 1),
        )

    async def _execute(self, episode: _Episode, action: ToolCall, tools_open: bool) -> Observation:
        started = datetime.now(UTC)
        tool = episode.registry.get(action.tool) if tools_open else None
        if not tools_open:
            result = failure(prompts.closed_tools_text())
        elif tool is None:
            result = failure(
                prompts.unknown_tool_text(action.tool, [*episode.registry.names(), FINAL_ANSWER])
            )
        else:
            result = await asyncio.to_thread(tool.run, episode.target.package, action.arguments)
        result = _capped(result, self.budgets.observation_chars)
        self._record(episode, action, action.tool, action.arguments, result, started)
        return Observation(
            tool=action.tool, call_id=action.call_id, ok=result.ok, text=result.text, error=result.error
        )

    def _record(
        self,
        episode: _Episode,
        action: ToolCall | FinalAnswerAction,
        name: str,
        arguments: dict[str, Any],
        result: ToolResult,
        started: datetime,
    ) -> None:
        usage = action.usage if action.new_round else None
        code = arguments.get("code") if name == PYTHON_TOOL else None
        episode.steps.append(
            Step(
                index=len(episode.steps) + 1,
                action=name,
                reason=action.reason,
                arguments=arguments,
                observation=CapturedText(
                    text=result.text, truncated=result.truncated, original_chars=result.original_chars
                ),
                code=CapturedText(text=code, original_chars=len(code)) if isinstance(code, str) else None,
                returncode=_returncode(result.text) if name == PYTHON_TOOL else None,
                ok=result.ok,
                error=result.error,
                warnings=[f"provider attempt {e.attempt} failed: {e.kind}" for e in action.provider_events],
                evidence_files=_files_touched(episode.target.package, name, arguments),
                started_at=started,
                ended_at=datetime.now(UTC),
                tokens=StepTokens(prompt=usage.prompt_tokens, completion=usage.completion_tokens)
                if usage
                else None,
                cost_usd=usage.cost_usd if usage else None,
            )
        )

    def _ended(self, episode: _Episode, status: RunStatus, termination: str) -> Trace:
        return self._trace(episode, status, termination, FinalAnswer(raw_text="", status="missing"))

    def _trace(self, episode: _Episode, status: RunStatus, termination: str, answer: FinalAnswer) -> Trace:
        target = episode.target
        extra = dict(episode.extra)
        if episode.events:
            extra["provider_events"] = episode.events
        return Trace(
            task_id=target.task.task_id,
            event_id=target.task.event_id,
            system=target.system,
            dataset_version=target.dataset_version,
            package_sha256=target.package_sha256,
            steps=episode.steps,
            final_answer=answer,
            termination_reason=termination,
            run_status=status,
            totals=_totals(episode),
            extra=extra,
        )


def _capped(result: ToolResult, cap: int) -> ToolResult:
    text, cut = cap_observation(result.text, cap)
    if not cut:
        return result
    return result.model_copy(update={"text": text, "truncated": True})


def _returncode(observation: str) -> int | None:
    try:
        value = json.loads(observation).get("returncode")
    except (json.JSONDecodeError, AttributeError):
        return None
    return value if isinstance(value, int) else None


def _files_touched(package: EventPackage, tool: str, arguments: dict[str, Any]) -> list[str]:
    if tool == PYTHON_TOOL:
        return list(dict.fromkeys(_CODE_PATH.findall(str(arguments.get("code", "")))))
    path = arguments.get("path")
    if tool not in FILE_READING_TOOLS or not isinstance(path, str):
        return []
    try:
        return [package.lexical(path)]
    except PackagePathError:
        return []


def _totals(episode: _Episode) -> Totals:
    calls = [step for step in episode.steps if step.action != FINAL_ANSWER]
    prompt, completion = episode.prompt_tokens, episode.completion_tokens
    total = None if prompt is None and completion is None else (prompt or 0) + (completion or 0)
    return Totals(
        rounds=episode.rounds,
        tool_calls=len(calls),
        file_reads=sum(step.action in FILE_READING_TOOLS for step in calls),
        unique_files=len({path for step in calls for path in step.evidence_files}),
        python_calls=sum(step.action == PYTHON_TOOL for step in calls),
        tool_errors=sum(not step.ok for step in calls),
        latency_s=round(episode.clock.elapsed(), 3),
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
        cost_usd=episode.cost_usd,
        cost_source="unpriced" if episode.cost_usd is None else "recomputed",
    )


def _final_answer(accepted: _Accepted, repairs: int) -> FinalAnswer:
    answer = accepted.answer
    provenance: dict[str, Any] = {
        "confidence": answer.confidence,
        "evidence": [_evidence(item.model_dump()) for item in answer.evidence],
        "research_summary": answer.research_summary,
        "limitations": answer.limitations,
        "repair_attempts": repairs,
    }
    if isinstance(answer.answer, dict):
        return FinalAnswer.from_object(answer.answer, **provenance)
    return FinalAnswer.from_text(answer.answer, **provenance)


def _evidence(item: dict[str, Any]) -> Evidence:
    known = ("claim", "source_file", "support_type")
    return Evidence(
        claim=item["claim"],
        source_file=item.get("source_file"),
        support_type=item.get("support_type"),
        extra={key: value for key, value in item.items() if key not in known},
    )


def _close_tools(registry: ToolRegistry) -> None:
    for tool in registry:
        close = getattr(tool, "close", None)
        if callable(close):
            close()
