"""`litellm:<model>`: any model litellm can reach, driven by native tool calling where the model has it and
by the paper's JSON action contract where it has not.

One model message may hold several tool calls; they are handed to the controller one per turn. A tool
call whose arguments are not JSON is asked for again (a new round, recorded as a provider event);
a model that keeps sending broken calls is a SolverFailure.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from evaluator.agents.base import (
    AgentView,
    FinalAnswerAction,
    Observation,
    ProviderEvent,
    RoundUsage,
    SolverFailure,
    ToolCall,
)
from evaluator.harness import prompts
from evaluator.harness.budgets import Budgets
from evaluator.harness.context import Context, step_note
from evaluator.harness.protocol import ContractError, parse_action, parse_arguments
from evaluator.harness.provider import Completion, Provider, RawToolCall
from evaluator.tools.final_answer import FINAL_ANSWER

ToolMode = Literal["auto", "native", "json"]
MAX_MALFORMED = 3
"""Replies with broken tool-call JSON tolerated in a row before the model is given up on."""


def uses_native_tools(model: str, mode: ToolMode) -> bool:
    """Whether to use native tool calling: as `mode` says, or (auto) as litellm knows the model."""
    if mode != "auto":
        return mode == "native"
    from evaluator.llm import litellm

    try:
        return bool(litellm.supports_function_calling(model=model))
    except Exception:  # litellm raises assorted errors for models it does not know
        return False


class LiteLLMAgent:
    """A model behind litellm; one instance per task (it holds that task's conversation)."""

    def __init__(self, provider: Provider, budgets: Budgets, native: bool) -> None:
        self.provider = provider
        self.budgets = budgets
        self.native = native
        self._context: Context | None = None
        self._pending: list[ToolCall | FinalAnswerAction] = []
        self._calls: dict[str | None, ToolCall] = {}
        self._open_final: str | None = None
        self._steps = 0

    async def step(self, view: AgentView) -> ToolCall | FinalAnswerAction:
        """The next action: a queued tool call of the last message, else a new model round."""
        context = self._context_for(view)
        self._take_result(context, view.last)
        if self._pending and view.phase == "research" and view.notice is None:
            return self._handed_out(self._pending.pop(0))
        self._close_pending(context)
        if view.notice:
            context.add_reply({"role": "user", "content": view.notice})
        return self._handed_out(await self._round(context, view))

    def _handed_out(self, action: ToolCall | FinalAnswerAction) -> ToolCall | FinalAnswerAction:
        if isinstance(action, FinalAnswerAction) and self.native:
            self._open_final = action.call_id
        return action

    def _context_for(self, view: AgentView) -> Context:
        if self._context is None:
            system = prompts.system_prompt(view.tools, self.native)
            task = prompts.task_prompt(view.task_id, view.event_id, view.question, self.budgets)
            self._context = Context(system, task, self.budgets)
        return self._context

    def _take_result(self, context: Context, last: Observation | None) -> None:
        open_final, self._open_final = self._open_final, None
        if last is None:
            if open_final is not None:  # an accepted answer's tool call still needs its result (review)
                context.add_reply(
                    {"role": "tool", "tool_call_id": open_final, "content": "final answer received"}
                )
            return
        call = self._calls.pop(last.call_id, None)
        self._steps += 1
        note = step_note(self._steps, last.tool, call.arguments if call else {}, last.ok, last.text)
        if self.native and last.call_id is not None:
            context.add_reply({"role": "tool", "tool_call_id": last.call_id, "content": last.text}, note)
            return
        text = (
            prompts.contract_error_text(call.reason)
            if call is not None and not call.tool
            else prompts.observation_message(last.tool, last.ok, last.text)
        )
        context.add_reply({"role": "user", "content": text}, note)

    def _close_pending(self, context: Context) -> None:
        """Answer the queued tool calls the controller will not run, so the conversation stays valid."""
        for action in self._pending:
            if self.native:
                text = prompts.closed_tools_text()
                context.add_reply({"role": "tool", "tool_call_id": action.call_id, "content": text})
        self._pending.clear()

    async def _round(self, context: Context, view: AgentView) -> ToolCall | FinalAnswerAction:
        events: list[ProviderEvent] = []
        spent: RoundUsage | None = None
        for _ in range(MAX_MALFORMED):
            completion = await self.provider.complete(context.messages(), view.tools if self.native else None)
            events.extend(completion.events)
            spent = _plus(spent, completion.usage)
            if self.native and completion.tool_calls:
                try:
                    actions = [_native_action(call) for call in completion.tool_calls]
                except ContractError as error:
                    kind = f"malformed tool call: {error}"
                    events.append(ProviderEvent(attempt=len(events) + 1, kind=kind, wait_s=0))
                    continue
            else:
                actions = [self._message_action(completion.content)]
            context.add_assistant(_assistant_message(completion, self.native))
            return self._queue(actions, spent, events)
        raise SolverFailure(f"malformed tool-call arguments in {MAX_MALFORMED} replies in a row", events)

    def _message_action(self, content: str | None) -> ToolCall | FinalAnswerAction:
        """The action of a message without tool calls: a JSON action; with native tools, prose is the
        answer; else an invalid step (tool "") whose reason says what to send instead."""
        try:
            return parse_action(content)
        except ContractError as error:
            if self.native and content and content.strip():
                return FinalAnswerAction(arguments={"answer": content}, raw_text=content)
            return ToolCall(tool="", reason=str(error))

    def _queue(
        self, actions: list[ToolCall | FinalAnswerAction], usage: RoundUsage, events: list[ProviderEvent]
    ) -> ToolCall | FinalAnswerAction:
        first, *rest = actions
        self._pending = [action.model_copy(update={"new_round": False}) for action in rest]
        for action in actions:
            if isinstance(action, ToolCall):
                self._calls[action.call_id] = action
        return first.model_copy(update={"usage": usage, "provider_events": events})


def _plus(total: RoundUsage | None, usage: RoundUsage) -> RoundUsage:
    """Tokens and cost of `total` and `usage` together (a re-asked round costs too)."""
    if total is None:
        return usage
    fields = ("prompt_tokens", "completion_tokens", "cost_usd")
    sums = {name: _add(getattr(total, name), getattr(usage, name)) for name in fields}
    return RoundUsage(**sums)


def _add(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else a + b


def _native_action(call: RawToolCall) -> ToolCall | FinalAnswerAction:
    arguments = parse_arguments(call.arguments)
    if call.name == FINAL_ANSWER:
        return FinalAnswerAction(arguments=arguments, raw_text=call.arguments or "", call_id=call.id)
    reason = str(arguments.pop("reason", "")) if isinstance(arguments.get("reason"), str) else ""
    return ToolCall(tool=call.name, arguments=arguments, reason=reason, call_id=call.id)


def _assistant_message(completion: Completion, native: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": completion.content or ""}
    if native and completion.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments or json.dumps({})},
            }
            for call in completion.tool_calls
        ]
    return message
