"""What a model is shown: the pinned system and task messages, the most recent messages, and a research
state that keeps the provenance of every older step (tool, path, key values) once its messages go.

Messages are dropped in whole exchanges (an assistant message with the tool results or observation
that answer it), so a tool result never loses the assistant tool_call it belongs to.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from evaluator.harness.budgets import Budgets

Message = dict[str, Any]
KEY_VALUES_PER_STEP = 12
VALUE_BUDGETS = (400, 160, 60, 0)
"""Characters of key values per older step, tried in turn until the research state fits its cap."""
_LABEL_TAIL = 40
_LABELLED_NUMBER = re.compile(
    r'"?([A-Za-z_][\w .%/()-]{0,' + str(_LABEL_TAIL) + r'}?)"?\s*[:=]\s*"?(-?\d[\d.,eE+-]*)'
)
_NUMBER_AFTER_SEPARATOR = re.compile(r'[:=]\s*"?-?\d[\d.,eE+-]*')
_LABEL_REACH = 1 + (1 + _LABEL_TAIL) + 1
"""Most characters of a _LABELLED_NUMBER match before the whitespace ahead of its separator: a quote, the
label (a first character and its tail), a quote."""
_PACKAGE_PATH = re.compile(r"data/[\w./-]+")


class StepNote(BaseModel):
    """The provenance of one step: which tool, on which file, whether it worked, and the key values seen."""

    index: int
    tool: str
    target: str
    ok: bool
    key_values: list[str]

    def line(self, value_chars: int) -> str:
        status = "ok" if self.ok else "failed"
        values = "; ".join(self.key_values)
        shown = f" | {values[:value_chars]}" if value_chars and values else ""
        return f"- step {self.index} {self.tool} {self.target}: {status}{shown}"


def step_note(index: int, tool: str, arguments: dict[str, Any], ok: bool, observation: str) -> StepNote:
    """The note of one step, with up to KEY_VALUES_PER_STEP labelled numbers from its observation."""
    return StepNote(
        index=index, tool=tool, target=_target(arguments), ok=ok, key_values=key_values(observation)
    )


def _target(arguments: dict[str, Any]) -> str:
    for key in ("path", "subdir", "query"):
        if arguments.get(key):
            return str(arguments[key])
    paths = _PACKAGE_PATH.findall(str(arguments.get("code", "")))
    return ", ".join(dict.fromkeys(paths)) or "-"


def key_values(text: str) -> list[str]:
    """Distinct `label=number` pairs found in a tool observation, first ones first."""
    found: dict[str, str] = {}
    for match in _labelled_numbers(text):
        label, number = match.groups()
        name = label.strip()
        if name and name not in found:
            found[name] = number.rstrip(",.")
        if len(found) >= KEY_VALUES_PER_STEP:
            break
    return [f"{name}={value}" for name, value in found.items()]


def _labelled_numbers(text: str) -> Iterator[re.Match[str]]:
    """The matches of `_LABELLED_NUMBER.finditer(text)`, the pattern tried only within reach of a separator
    followed by a number: trying its lazy label at every character cost milliseconds a step."""
    end = 0
    for tail in _NUMBER_AFTER_SEPARATOR.finditer(text):
        start = tail.start()
        while start > end and text[start - 1].isspace():  # str.isspace is exactly the pattern's \s
            start -= 1
        match = _LABELLED_NUMBER.search(text, max(end, start - _LABEL_REACH), tail.end())
        if match:
            yield match
            end = match.end()


class Context:
    """The conversation of one model run, windowed to the budgets' message and research-state limits."""

    def __init__(self, system: str, task: str, budgets: Budgets) -> None:
        self.pinned: list[Message] = [
            {"role": "system", "content": system},
            {"role": "user", "content": task},
        ]
        self.budgets = budgets
        self._exchanges: list[list[Message]] = []
        self._notes: dict[int, StepNote] = {}
        self._steps_by_exchange: list[list[int]] = []

    def add_assistant(self, message: Message) -> None:
        """Start a new exchange with a model message."""
        self._exchanges.append([message])
        self._steps_by_exchange.append([])

    def add_reply(self, message: Message, note: StepNote | None = None) -> None:
        """Add a tool result, observation or harness notice to the current exchange."""
        if not self._exchanges:
            self.pinned.append(message)
            return
        self._exchanges[-1].append(message)
        if note is not None:
            self._notes[note.index] = note
            self._steps_by_exchange[-1].append(note.index)

    def messages(self) -> list[Message]:
        """The messages to send: pinned ones, the research state of dropped exchanges, the recent ones."""
        kept = self._kept_exchanges()
        dropped = len(self._exchanges) - kept
        recent = [message for exchange in self._exchanges[dropped:] for message in exchange]
        older = [self._notes[index] for steps in self._steps_by_exchange[:dropped] for index in steps]
        if not older:
            return [*self.pinned, *recent]
        state = {"role": "user", "content": research_state(older, self.budgets.research_state_chars)}
        return [*self.pinned, state, *recent]

    def _kept_exchanges(self) -> int:
        kept, size = 0, 0
        for exchange in reversed(self._exchanges):
            if kept and size + len(exchange) > self.budgets.recent_messages:
                break
            kept, size = kept + 1, size + len(exchange)
        return kept

    def chars(self) -> int:
        """Characters of the messages that would be sent (for tests and benchmarks)."""
        return len(json.dumps(self.messages(), ensure_ascii=False))


def research_state(notes: list[StepNote], cap: int) -> str:
    """The summary of older steps in at most `cap` characters; tool and target of every step always stay
    (key values are shortened first, then the oldest steps' values are dropped)."""
    header = "Research state (earlier steps, summarized; their full messages were dropped):"
    for budget in VALUE_BUDGETS:
        text = "\n".join([header, *(note.line(budget) for note in notes)])
        if len(text) <= cap:
            return text
    return text[:cap]
