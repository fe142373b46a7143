"""The seven release gates, in order. Each is a function `TaskInputs -> GateResult`; the last one,
the final review, passes only when all the others do."""

from __future__ import annotations

from collections.abc import Callable

from dataset.gates import anchoring, assembly, authoring, grounding, reference, rubric
from dataset.gates.base import GateResult, TaskInputs

Gate = Callable[[TaskInputs], GateResult]

GATES: dict[str, Gate] = {
    "event_anchoring": anchoring.check,
    "package_assembly": assembly.check,
    "task_authoring": authoring.check,
    "reference_analysis": reference.check,
    "executable_grounding": grounding.check,
    "rubric": rubric.check,
}
FINAL_GATE = "final_review"
GATE_NAMES = (*GATES, FINAL_GATE)


def run_gates(inputs: TaskInputs) -> dict[str, GateResult]:
    """Every gate's verdict for one task, in order, the final review last."""
    results = {name: _checked(name, check, inputs) for name, check in GATES.items()}
    failing = [name for name, result in results.items() if not result.passed]
    reason = "all gates pass" if not failing else "failing: " + ", ".join(failing)
    results[FINAL_GATE] = GateResult(passed=not failing, reason=reason)
    return results


def _checked(name: str, check: Gate, inputs: TaskInputs) -> GateResult:
    try:
        return check(inputs)
    except Exception as error:  # a gate's bug fails that gate for this task, never the whole build
        return GateResult(passed=False, reason=f"{name} crashed: {type(error).__name__}: {error}")


__all__ = ["FINAL_GATE", "GATES", "GATE_NAMES", "GateResult", "TaskInputs", "run_gates"]
