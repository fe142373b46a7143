"""The paper's JSON action contract, and checking a final answer against the final_answer schema.

A model without native tool calling writes one JSON object per message:

    {"action": "tool_call", "tool": "<name>", "arguments": {...}, "reason": "..."}
    {"action": "final_answer", "answer": {...}, "confidence": 0.7, "evidence": [{"claim", "source_file",
     "support_type"}], "research_summary": [...], "limitations": [...]}

`parse_action` reads such a message (bare, fenced or embedded in prose); `answer_problem` says what is
wrong with final_answer arguments, in words a model can act on, or None when they are valid.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from evaluator.agents.base import FinalAnswerAction, ToolCall
from evaluator.tools.final_answer import FINAL_ANSWER, FinalAnswerArguments
from evaluator.traces.answer_text import answer_object_in

TOOL_CALL = "tool_call"
FINAL_FIELDS = ("answer", "confidence", "evidence", "research_summary", "limitations")


class ContractError(ValueError):
    """A model message that is not a valid action; the message says what is wrong."""


def parse_action(text: str | None) -> ToolCall | FinalAnswerAction:
    """The action in a JSON-contract message; ContractError naming what is missing otherwise."""
    if not text or not text.strip():
        raise ContractError("the message is empty; send one JSON action object")
    data = _whole_object(text) or answer_object_in(text)
    if data is None:
        raise ContractError("the message holds no JSON object; send one JSON action object")
    action = data.get("action")
    if action == TOOL_CALL or (action is None and "tool" in data):
        return _tool_call(data)
    if action == FINAL_ANSWER or (action is None and "answer" in data):
        arguments = {key: data[key] for key in FINAL_FIELDS if key in data}
        return FinalAnswerAction(arguments=arguments, raw_text=text, reason=str(data.get("reason", "")))
    raise ContractError(f'"action" must be "{TOOL_CALL}" or "{FINAL_ANSWER}", not {json.dumps(action)}')


def _whole_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text.strip())
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _tool_call(data: dict[str, Any]) -> ToolCall:
    tool = data.get("tool")
    if not isinstance(tool, str) or not tool:
        raise ContractError('a tool_call needs "tool": the name of one of the tools')
    arguments = data.get("arguments", {})
    if isinstance(arguments, str):
        arguments = parse_arguments(arguments)
    if not isinstance(arguments, dict):
        raise ContractError('"arguments" must be a JSON object')
    return ToolCall(tool=tool, arguments=arguments, reason=str(data.get("reason", "")))


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """Tool-call arguments as the API sends them (a JSON string); ContractError when they are not JSON."""
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ContractError(f"tool-call arguments are not valid JSON ({error.msg} at {error.pos})") from None
    if not isinstance(value, dict):
        raise ContractError("tool-call arguments must be a JSON object")
    return value


def answer_problem(arguments: dict[str, Any]) -> str | None:
    """What makes `arguments` an invalid final answer (a few field errors), or None when valid."""
    try:
        FinalAnswerArguments.model_validate(arguments)
    except ValidationError as error:
        problems = [
            f"{'.'.join(map(str, item['loc'])) or 'final_answer'}: {item['msg']}"
            for item in error.errors(include_url=False, include_input=False)[:5]
        ]
        return "; ".join(problems)
    return None


def final_arguments(arguments: dict[str, Any]) -> FinalAnswerArguments:
    """`arguments` validated as a final answer (call after `answer_problem` returned None)."""
    return FinalAnswerArguments.model_validate(arguments)
