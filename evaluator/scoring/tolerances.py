"""Numeric tolerances of a task: what the ground truth states, by field name or by class of field.

A task states tolerances in its `numeric_tolerances` / `tolerances` tables (read by
`loaders.tolerances.task_tolerances`, plus the spec forms that function does not read:
`absolute_tolerance`, `abs_tolerance`, `absolute`, `relative`, `min`/`max` around `expected`),
inside `primary_gt` (the same tables), next to a value (`{"value": 0.94, "tolerance": 0.3}`, read by
units.py), or not at all. Table names are field names (`rain_rate_mm_day`) or classes of fields
(`ratios`, `precip_mm_abs`, `integer_counts`): a class applies to every field whose name holds all of
the class's words (`precip_mm` -> `max_precip_mm`), the most specific class first; `integer` /
`integer_fields` apply to whole-number values.

Where a task states nothing, the tolerance comes from the precision the ground truth is written with
(`precision_tolerance`): one unit in its last stated decimal, at least 0.2 % of the value; whole
numbers exactly.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from loaders.tolerances import TOLERANCE_TABLES, is_number, task_tolerances

ABSOLUTE_SPEC_KEYS = ("tolerance", "absolute_tolerance", "abs_tolerance", "absolute", "abs")
PRECISION_UNITS = 1.0
"""Units of the last stated decimal a precision-derived tolerance allows."""
RELATIVE_FLOOR = 0.002
"""A precision-derived tolerance is at least this share of the value: a ground truth written with six
decimals is raw machine output, not a claim that the answer must agree to the sixth decimal."""
FLOAT_NOISE = 1e-9
"""Relative slack added to every comparison: binary float noise, not a real difference."""

_CLASS_QUALIFIERS = frozenset({"abs", "absolute", "values", "fields", "integer", "all"})
_WHOLE_NUMBER_CLASSES = frozenset({"integer", "integers", "integer_fields", "integer_values"})
_TOKEN = re.compile(r"[a-z]+|\d+")
_CAMEL = re.compile(r"([a-z])([A-Z])")


class Tolerance(BaseModel):
    """An absolute tolerance and where it comes from (`task:<name>`, `class:<name>`, `precision`, ...)."""

    value: float
    source: str


class ToleranceTable(BaseModel):
    """The tolerances a task states: absolute and relative ones by field name, absolute ones by class."""

    by_name: dict[str, float] = {}
    relative: dict[str, float] = {}
    by_class: dict[str, float] = {}

    def lookup(self, name: str, gt: float) -> Tolerance:
        """The tolerance for field `name` with ground truth `gt`: by name, by class, else by precision."""
        key = field_key(name)
        if key in self.by_name:
            return Tolerance(value=self.by_name[key], source=f"task:{name}")
        if key in self.relative:
            return Tolerance(value=self.relative[key] * abs(gt), source=f"task:{name} (relative)")
        stated = self._class_tolerance(key, gt)
        return stated if stated is not None else precision_tolerance(gt)

    def _class_tolerance(self, key: str, gt: float) -> Tolerance | None:
        tokens = set(name_tokens(key))
        best: tuple[int, str] | None = None
        for name in self.by_class:
            wanted = _class_tokens(name)
            if wanted and wanted <= tokens:
                rank = (len(wanted), name)
            elif name in _WHOLE_NUMBER_CLASSES and float(gt).is_integer():
                rank = (0, name)
            else:
                continue
            if best is None or rank > best:
                best = rank
        if best is None:
            return None
        return Tolerance(value=self.by_class[best[1]], source=f"class:{best[1]}")


def task_table(ground_truth: dict[str, Any]) -> ToleranceTable:
    """Every tolerance the task's ground truth states, in its top-level tables and inside `primary_gt`."""
    by_name: dict[str, float] = {}
    relative: dict[str, float] = {}
    primary = ground_truth.get("primary_gt")
    for source in (ground_truth, primary) if isinstance(primary, dict) else (ground_truth,):
        by_name.update({field_key(name): value for name, value in task_tolerances(source).items()})
        for table in _tables(source):
            _read_table(table, by_name, relative)
    field_names = _field_names(primary)
    by_class = {name: value for name, value in by_name.items() if name not in field_names}
    return ToleranceTable(by_name=by_name, relative=relative, by_class=by_class)


def precision_tolerance(gt: float) -> Tolerance:
    """One unit in the last decimal the ground truth states, at least RELATIVE_FLOOR of it (33.9 -> 0.1,
    1.0 -> 0.1, 5.316271 -> 0.0106); a whole number exactly (183 -> 0.5).

    The stated precision is the author's rounding of a computed value; an agent rounding its inputs
    first lands one unit off in the last place, and that is still the same value at that precision.
    A whole number (a count, a number of days) is exact: one day off is a different answer."""
    decimals = stated_decimals(gt)
    if not decimals:
        return Tolerance(value=0.5, source="precision")
    step = max(PRECISION_UNITS * 10.0**-decimals, RELATIVE_FLOOR * abs(gt))
    return Tolerance(value=step, source="precision")


def stated_decimals(value: float) -> int:
    """How many decimals `value` is written with (shortest round-trip repr): 33.9 -> 1, 2.5e-05 -> 6;
    a float states at least one (JSON `1.0` is a decimal, `1` a whole number): 1.0 -> 1, 183 -> 0."""
    if isinstance(value, int) or not math.isfinite(value):
        return 0
    mantissa, _, exponent = repr(float(value)).lower().partition("e")
    _, dot, fraction = mantissa.partition(".")
    decimals = len(fraction.rstrip("0") or "0") if dot else 0
    return max(0, decimals - int(exponent or 0))


def name_tokens(name: str) -> tuple[str, ...]:
    """The lower-case word and number tokens of a field name (`tmax35_run_days` -> tmax, 35, run, days)."""
    return _tokens(name if isinstance(name, str) else str(name))


def field_key(name: str) -> str:
    """A field name in canonical form for table look-ups: its tokens joined by `_`."""
    return "_".join(name_tokens(name))


@lru_cache(maxsize=65536)
def _tokens(name: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(_CAMEL.sub(r"\1 \2", name).lower()))


def _class_tokens(name: str) -> set[str]:
    return {_singular(token) for token in name_tokens(name) if token not in _CLASS_QUALIFIERS}


def _singular(token: str) -> str:
    return token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token


def _tables(source: dict[str, Any]) -> list[dict[str, Any]]:
    return [table for name in TOLERANCE_TABLES if isinstance(table := source.get(name), dict)]


def _read_table(table: dict[str, Any], by_name: dict[str, float], relative: dict[str, float]) -> None:
    for name, spec in table.items():
        if not isinstance(spec, dict):
            continue
        absolute = _absolute(spec)
        if absolute is not None:
            by_name.setdefault(field_key(name), absolute)
        elif is_number(spec.get("relative")):
            relative[field_key(name)] = abs(float(spec["relative"]))


def _absolute(spec: dict[str, Any]) -> float | None:
    for key in ABSOLUTE_SPEC_KEYS:
        if is_number(spec.get(key)):
            return abs(float(spec[key]))
    low, high, expected = spec.get("min"), spec.get("max"), spec.get("expected")
    if is_number(low) and is_number(high) and is_number(expected):
        return max(float(high) - float(expected), float(expected) - float(low))
    return None


def _field_names(primary: Any) -> set[str]:
    """Every key name in `primary_gt`: table entries with these names are field tolerances, not classes."""
    names: set[str] = set()
    stack = [primary]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            names.update(field_key(key) for key in node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return names
