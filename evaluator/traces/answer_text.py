"""Finding the JSON object inside an answer a model gave as text."""

from __future__ import annotations

import json
from typing import Any

MAX_OBJECT_STARTS = 200
"""Braces tried before giving up: a long prose answer must not cost a decode attempt per brace."""
_DECODER = json.JSONDecoder()


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
