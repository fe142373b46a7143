"""Reading an answer a model gave as text: the one parser behind a trace's `parsed` and the score.

A final answer is usually a JSON object. Models also write strings: a JSON object followed by prose, a
fenced ```json block, or prose only. A string is read as JSON, else its first fenced block, else its
first `{...}` object, else its `Name: value` lines (two or more; some prompts ask for that format);
prose with none of these yields no value. Oversized input yields no value and a note, never an exception.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel

MAX_ANSWER_CHARS = 5_000_000
"""A final answer string longer than this is not parsed: no task's answer is anywhere near it."""
MAX_OBJECT_STARTS = 200
"""Braces tried before giving up: a long prose answer must not cost a decode attempt per brace."""
MIN_FIELD_LINES = 2

AnswerSource = Literal["object", "json string", "fenced block", "embedded object", "field lines", "none"]

_DECODER = json.JSONDecoder()
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_FIELD_LINE = re.compile(r"^\s*(?:[-*•]\s*)?\**([A-Za-z][\w ()/%-]{0,60}?)\**\s*:\s*(\S.*)$")


class ParsedAnswer(BaseModel):
    """The JSON value of a final answer (None when there is none) and how it was obtained."""

    value: Any = None
    source: AnswerSource
    note: str = ""


def parse_answer(answer: Any) -> ParsedAnswer:
    """The JSON value of a submitted final answer; strings are parsed, anything else is taken as is."""
    if isinstance(answer, bytes | bytearray):
        answer = answer.decode("utf-8", errors="replace")
    if not isinstance(answer, str):
        return ParsedAnswer(value=answer, source="object")
    if len(answer) > MAX_ANSWER_CHARS:
        return ParsedAnswer(
            source="none", note=f"answer string of {len(answer):,} chars is too large to parse"
        )
    return _parse_text(answer)


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first `{...}` in `text` that parses as a JSON object, trying at most MAX_OBJECT_STARTS braces."""
    start = text.find("{")
    for _ in range(MAX_OBJECT_STARTS):
        if start == -1:
            return None
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def answer_object_in(text: str) -> dict[str, Any] | None:
    """A JSON object in model text (an action, a template): a fenced block's object, else the first
    `{...}` that is valid JSON."""
    for block in _FENCE.findall(text):
        value = _loads(block.strip())
        if isinstance(value, dict):
            return value
    return first_json_object(text)


def _parse_text(text: str) -> ParsedAnswer:
    whole = _loads(text.strip())
    if whole is not None:
        return ParsedAnswer(value=whole, source="json string")
    for block in _FENCE.findall(text):
        fenced = _loads(block.strip())
        if fenced is not None:
            return ParsedAnswer(value=fenced, source="fenced block")
    embedded = first_json_object(text)
    if embedded is not None:
        return ParsedAnswer(value=embedded, source="embedded object")
    fields = _field_lines(text)
    if fields:
        return ParsedAnswer(value=fields, source="field lines")
    return ParsedAnswer(source="none", note="no JSON object in the answer text")


def _field_lines(text: str) -> dict[str, str] | None:
    """`Name: value` lines (the plain format some prompts ask for) as fields; None unless two or more."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        found = _FIELD_LINE.match(line)
        if found and found.group(1).strip() not in fields:
            fields[found.group(1).strip()] = found.group(2).strip()
    return fields if len(fields) >= MIN_FIELD_LINES else None


def _loads(text: str) -> Any:
    if not text or text[0] not in "{[":
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
