"""Walking a JSON value: every leaf with its path."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every non-container value inside `value` with its path (`a.b[2].c`); dict keys are not leaves."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield from leaves(child, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from leaves(child, f"{path}[{index}]")
    else:
        yield path, value
