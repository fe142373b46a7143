"""Gate 6, rubric: 5 to 8 criteria whose points sum to exactly 20, each with name, points,
description and partial_credit."""

from __future__ import annotations

import math

from dataset.gates.base import GateResult, TaskInputs, failed, passed

MIN_CRITERIA, MAX_CRITERIA = 5, 8
TOTAL_POINTS = 20
REQUIRED_FIELDS = ("name", "points", "description", "partial_credit")


def check(inputs: TaskInputs) -> GateResult:
    rubric = inputs.record.ground_truth.get("rubric")
    if not isinstance(rubric, dict) or not isinstance(rubric.get("criteria"), list):
        return failed(["the ground truth has no rubric with a criteria list"])
    criteria = rubric["criteria"]
    problems = []
    if not MIN_CRITERIA <= len(criteria) <= MAX_CRITERIA:
        problems.append(f"{len(criteria)} criteria, expected {MIN_CRITERIA} to {MAX_CRITERIA}")
    for index, criterion in enumerate(criteria, start=1):
        missing = [field for field in REQUIRED_FIELDS if not _present(criterion, field)]
        if missing:
            label = (criterion.get("name") if isinstance(criterion, dict) else None) or f"#{index}"
            problems.append(f"criterion {label!r} lacks {', '.join(missing)}")
    total = sum(_points(criterion) for criterion in criteria)
    if not math.isclose(total, TOTAL_POINTS):
        problems.append(f"points sum to {total:g}, not {TOTAL_POINTS}")
    if problems:
        return failed(problems, criteria=len(criteria), total_points=total)
    return passed(
        f"{len(criteria)} criteria, {TOTAL_POINTS} points", criteria=len(criteria), total_points=total
    )


def _present(criterion: object, field: str) -> bool:
    if not isinstance(criterion, dict):
        return False
    value = criterion.get(field)
    return value is not None and value != ""


def _points(criterion: object) -> float:
    points = criterion.get("points") if isinstance(criterion, dict) else None
    return float(points) if isinstance(points, int | float) and not isinstance(points, bool) else 0.0
