"""`scripted`: a deterministic offline baseline, the floor any model should beat.

It lists the package, reads (or summarizes) the few text files whose names share most words with the
question, and answers with the question's JSON template filled from what it read: file-path fields get
the read file whose name best matches the field's, number fields the value of the closest-named label
it saw, other placeholders stay unknown. Without a template, the fields are the question's `backticked`
names.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any

from evaluator.agents.base import AgentView, FinalAnswerAction, ToolCall
from evaluator.harness.context import key_values
from evaluator.traces.answer_text import answer_object_in

FILES_READ = 3
READ_CHARS = 6000
SUMMARIZED = frozenset({".csv", ".json"})
READ_AS_TEXT = frozenset({".md", ".txt", ".html", ".htm", ".xml"})
UNKNOWN = "unknown"
_WORD = re.compile(r"[a-z][a-z0-9]{2,}")
_PLACEHOLDER = re.compile(r"^<(.+)>$")
_FENCED_TEMPLATE = re.compile(r"```json\s*\n(.*?)```", re.DOTALL)
_LISTED_PATH = re.compile(r'"package_relative_path": "([^"]+)"')
_BACKTICKED = re.compile(r"`([A-Za-z_][\w.]*)`")
_STOPWORDS = frozenset({"the", "and", "for", "from", "with", "use", "data", "package", "event", "json"})


class ScriptedAgent:
    """One task's scripted investigation (list, read the most relevant files, fill the template)."""

    def __init__(self) -> None:
        self._queue: list[ToolCall] | None = None
        self._read: list[str] = []
        self._values: dict[str, str] = {}

    def step(self, view: AgentView) -> ToolCall | FinalAnswerAction:
        """List first; then read the chosen files one per turn; then answer."""
        if view.last is not None and view.last.ok:
            self._learn(view.last.text)
        if self._queue is None:
            self._queue = []
            return ToolCall(tool="list_package_files", arguments={"subdir": "."}, reason="see the evidence")
        if not self._queue and not self._read and view.last is not None:
            self._queue = self._reads(view.question, view.last.text)
        if self._queue and view.phase == "research" and view.turns_left > 0:
            call = self._queue.pop(0)
            self._read.append(call.arguments["path"])
            return call
        return FinalAnswerAction(arguments=self._answer(view.question))

    def _learn(self, observation: str) -> None:
        for pair in key_values(observation):
            label, value = pair.split("=", 1)
            self._values.setdefault(label, value)

    def _reads(self, question: str, listing: str) -> list[ToolCall]:
        words = _words(question)
        ranked = sorted(_listed_files(listing), key=lambda path: (-len(words & _words(path)), path))
        readable = [
            path for path in ranked if PurePosixPath(path).suffix.lower() in SUMMARIZED | READ_AS_TEXT
        ]
        return [_read_call(path) for path in readable[:FILES_READ]]

    def _answer(self, question: str) -> dict[str, Any]:
        template = _template(question)
        answer = (
            self._filled(template)
            if isinstance(template, dict)
            else {name: self._number_for(name) or UNKNOWN for name in _BACKTICKED.findall(question)}
        )
        return {
            "answer": answer,
            "confidence": 0.1,
            "evidence": [
                {"claim": f"read {path}", "source_file": path, "support_type": "context"}
                for path in self._read
            ],
            "research_summary": ["listed the package", *(f"read {path}" for path in self._read)],
            "limitations": ["scripted baseline: values are copied by label, not computed"],
        }

    def _filled(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {name: self._filled(item, name) for name, item in value.items()}
        if isinstance(value, list):
            return [self._filled(item, key) for item in value]
        placeholder = _PLACEHOLDER.match(value) if isinstance(value, str) else None
        if placeholder is None:
            return value
        kind = placeholder.group(1).lower()
        if "path" in kind:
            return self._path_for(key)
        if kind in ("number", "integer") or "number" in kind:
            number = self._number_for(key)
            return _number(number) if number is not None else None
        return UNKNOWN

    def _path_for(self, name: str) -> str:
        """The read file whose name shares most words with the field's name (the first read on a tie)."""
        wanted = _words(name)
        ranked = sorted(self._read, key=lambda path: -len(wanted & _words(path)))
        return ranked[0] if ranked else UNKNOWN

    def _number_for(self, name: str) -> str | None:
        wanted = set(name.lower().replace(".", "_").split("_")) - {""}
        best, best_overlap = None, 0
        for label, value in self._values.items():
            overlap = len(wanted & set(label.lower().replace(" ", "_").split("_")))
            if overlap > best_overlap:
                best, best_overlap = value, overlap
        return best


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower().replace("_", " "))) - _STOPWORDS


def _listed_files(listing: str) -> list[str]:
    # Read by pattern, not as JSON: a long listing arrives cut to the observation cap.
    return _LISTED_PATH.findall(listing)


def _read_call(path: str) -> ToolCall:
    if PurePosixPath(path).suffix.lower() in SUMMARIZED:
        return ToolCall(tool="summarize_table_or_json", arguments={"path": path}, reason="relevant by name")
    return ToolCall(
        tool="read_text_file", arguments={"path": path, "max_chars": READ_CHARS}, reason="relevant by name"
    )


def _template(question: str) -> Any:
    for block in _FENCED_TEMPLATE.findall(question):
        try:
            return json.loads(block)
        except json.JSONDecodeError:
            continue
    return answer_object_in(question)


def _number(text: str) -> float | int | str:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return text
    return int(value) if value.is_integer() and "." not in text else value
