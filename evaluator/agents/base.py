"""The agent protocol: what an agent is shown each turn (`AgentView`) and what it answers (`Action`).

An agent is any object with one method, `step(view) -> Action` (sync or async). The controller calls it
once per turn, executes tool calls itself and feeds the result back in the next view; the agent never
touches the package or the budgets. One agent instance serves one task, so per-task state is safe.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

Phase = Literal["research", "finalize", "review"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RoundUsage(_Strict):
    """Tokens and cost of the model call behind an action (None: not a model call, or not reported)."""

    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)


class ProviderEvent(_Strict):
    """One failed provider attempt that was retried (or gave up): what failed and how long we waited."""

    attempt: int = Field(ge=1)
    kind: str = Field(description="What failed, without content, e.g. `rate limited (429)`.")
    wait_s: float = Field(ge=0, description="Seconds waited before the next attempt (0 when none followed).")


class _ActionBase(_Strict):
    reason: str = Field(default="", description="The agent's stated reason for the action.")
    new_round: bool = Field(
        default=True,
        description="Whether a model call produced this action; False for the second and later tool "
        "calls of one model message.",
    )
    usage: RoundUsage | None = Field(default=None, description="Tokens and cost of that model call.")
    provider_events: list[ProviderEvent] = Field(
        default_factory=list, description="Provider attempts that failed before this action arrived."
    )


class ToolCall(_ActionBase):
    """Call a package tool."""

    kind: Literal["tool_call"] = "tool_call"
    tool: str = Field(description="The tool name exactly as the agent gave it.")
    arguments: dict[str, Any] = Field(default_factory=dict)
    call_id: str | None = Field(default=None, description="The model's tool-call id (native tool calling).")


class FinalAnswerAction(_ActionBase):
    """Submit the final answer: the `final_answer` arguments (validated by the controller)."""

    kind: Literal["final_answer"] = "final_answer"
    arguments: dict[str, Any] = Field(
        description="answer, confidence, evidence, research_summary, limitations (see FinalAnswerArguments)."
    )
    raw_text: str = Field(default="", description="The model's text that held the answer, when it had one.")
    call_id: str | None = None


Action = Annotated[ToolCall | FinalAnswerAction, Field(discriminator="kind")]


class Observation(_Strict):
    """What the previous action returned."""

    tool: str
    call_id: str | None = None
    ok: bool
    text: str
    error: str | None = None


class AgentView(_Strict):
    """Everything an agent may know at one turn: the task, the tools, the last result and the budgets."""

    task_id: str
    event_id: str
    question: str = Field(description="The public prompt of the task.")
    tools: list[dict[str, Any]] = Field(
        description="OpenAI-style function definitions of the callable tools, final_answer last."
    )
    phase: Phase = Field(
        description="`research`: tools allowed; `finalize`: only final_answer is accepted; `review`: a "
        "bounded second look at a draft answer."
    )
    turn: int = Field(ge=1, description="This turn's number, from 1.")
    turns_left: int = Field(ge=0, description="Tool calls still allowed in this phase.")
    seconds_left: float = Field(description="Seconds left in this phase.")
    last: Observation | None = Field(default=None, description="The result of the previous action.")
    notice: str | None = Field(
        default=None,
        description="A message from the harness this turn: a schema repair request, the finalization "
        "notice, or the review request.",
    )
    draft_answer: dict[str, Any] | None = Field(
        default=None, description="In the review phase: the answer submitted before the review."
    )


@runtime_checkable
class Agent(Protocol):
    """The one method an agent implements; it may be `def` or `async def`."""

    def step(self, view: AgentView) -> Any:
        """The next action (ToolCall or FinalAnswerAction), or an awaitable of it."""


class AgentFailure(Exception):
    """An agent that cannot go on. `reason` says why in a few words (it goes into the trace)."""

    def __init__(self, reason: str, events: list[ProviderEvent] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.events = events or []


class SolverFailure(AgentFailure):
    """The agent itself failed (e.g. the model keeps emitting broken tool calls): the task scores zero."""


class InfrastructureFailure(AgentFailure):
    """Our side failed (the provider stayed down through every retry): the task is rerun by --resume."""


async def next_action(agent: Agent, view: AgentView) -> ToolCall | FinalAnswerAction:
    """Ask `agent` for its next action, awaiting it when `step` is async; a wrong type is a SolverFailure."""
    result = agent.step(view)
    if inspect.isawaitable(result):
        result = await result
    if not isinstance(result, ToolCall | FinalAnswerAction):
        raise SolverFailure(f"agent returned {type(result).__name__}, not a ToolCall or FinalAnswerAction")
    return result
