"""What a task's ground truth states about numeric tolerance, read from its tables: part of the data
model, used by the release's executable-grounding gate and by the scorer alike."""

from __future__ import annotations

import math
from typing import Any

TOLERANCE_TABLES = ("tolerances", "numeric_tolerances")
"""The ground-truth tables that state tolerances by field name."""


def task_tolerances(ground_truth: dict[str, Any]) -> dict[str, float]:
    """Tolerances by field name, from the ground truth's `numeric_tolerances` and `tolerances` tables."""
    found: dict[str, float] = {}
    for table_name in TOLERANCE_TABLES:
        table = ground_truth.get(table_name)
        if not isinstance(table, dict):
            continue
        for name, spec in table.items():
            tolerance = spec.get("tolerance") if isinstance(spec, dict) else spec
            if is_number(tolerance):
                found[name] = abs(float(tolerance))
    return found


def is_number(value: Any) -> bool:
    """A real number: int or float, not bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def as_finite(value: Any) -> float | None:
    """`value` as a float when it is a real number a float can hold (not NaN, not infinite, not an
    integer beyond the float range); else None."""
    if not is_number(value):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None
