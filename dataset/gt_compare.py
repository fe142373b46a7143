"""Tolerance-aware comparison of a regenerated `primary_gt` with the recorded one."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel

from loaders.tolerances import is_number

FLOAT_NOISE = 1e-9
"""Relative slack for numbers the task gives no tolerance for: float noise, not a real difference."""


class Difference(BaseModel):
    """One field where the regenerated value disagrees with the recorded one."""

    path: str
    recorded: str
    regenerated: str
    tolerance: float | None = None


def compare(
    recorded: Any, regenerated: Any, tolerances: dict[str, float], path: str = ""
) -> list[Difference]:
    """Every differing leaf, with its path; numbers within the field's tolerance count as equal."""
    if isinstance(recorded, dict) and isinstance(regenerated, dict):
        return _compare_dicts(recorded, regenerated, tolerances, path)
    if isinstance(recorded, list) and isinstance(regenerated, list) and len(recorded) == len(regenerated):
        return [
            difference
            for index, (left, right) in enumerate(zip(recorded, regenerated, strict=True))
            for difference in compare(left, right, tolerances, f"{path}[{index}]")
        ]
    if is_number(recorded) and is_number(regenerated):
        return _compare_numbers(float(recorded), float(regenerated), tolerances, path)
    if recorded == regenerated and type(recorded) is type(regenerated):
        return []
    return [Difference(path=path or "$", recorded=_show(recorded), regenerated=_show(regenerated))]


def _compare_dicts(
    recorded: dict[str, Any], regenerated: dict[str, Any], tolerances: dict[str, float], path: str
) -> list[Difference]:
    differences: list[Difference] = []
    for key in sorted(set(recorded) | set(regenerated), key=str):
        child = f"{path}.{key}" if path else str(key)
        if key not in regenerated:
            differences.append(Difference(path=child, recorded=_show(recorded[key]), regenerated="<missing>"))
        elif key not in recorded:
            differences.append(
                Difference(path=child, recorded="<missing>", regenerated=_show(regenerated[key]))
            )
        else:
            differences.extend(compare(recorded[key], regenerated[key], tolerances, child))
    return differences


def _compare_numbers(
    recorded: float, regenerated: float, tolerances: dict[str, float], path: str
) -> list[Difference]:
    if math.isnan(recorded) and math.isnan(regenerated):
        return []
    tolerance = tolerances.get(_leaf_name(path))
    slack = tolerance if tolerance is not None else FLOAT_NOISE * max(1.0, abs(recorded))
    if abs(recorded - regenerated) <= slack:
        return []
    return [
        Difference(path=path, recorded=_show(recorded), regenerated=_show(regenerated), tolerance=tolerance)
    ]


def _leaf_name(path: str) -> str:
    return path.rsplit(".", 1)[-1].split("[", 1)[0]


def _show(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
