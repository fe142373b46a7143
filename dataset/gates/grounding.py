"""Gate 5, executable grounding: the task's program regenerates its recorded primary_gt."""

from __future__ import annotations

from dataset.gates.base import GateResult, TaskInputs


def check(inputs: TaskInputs) -> GateResult:
    result = inputs.grounding
    details = {"status": result.status, "seconds": round(result.seconds, 3)}
    if result.differences:
        details["differences"] = [difference.model_dump() for difference in result.differences[:20]]
    return GateResult(
        passed=result.status == "regenerated", reason=result.reason or result.status, details=details
    )
