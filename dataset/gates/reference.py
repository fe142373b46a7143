"""Gate 4, reference analysis: every provenance source file of the ground truth exists in the package."""

from __future__ import annotations

from dataset.gates.base import GateResult, TaskInputs, failed, passed
from loaders.models import Provenance


def check(inputs: TaskInputs) -> GateResult:
    provenance = Provenance.model_validate(inputs.record.ground_truth.get("provenance") or {})
    if not provenance.source_files:
        return failed(["the ground truth names no provenance source files"])
    audits = inputs.package.by_path()
    problems = []
    for path in provenance.source_files:
        audit = audits.get(path)
        if audit is not None and audit.status != "present":
            problems.append(f"{path}: {audit.status} ({audit.reason})")
        elif audit is None and not (inputs.package_root / path).is_file():
            problems.append(f"{path}: not in the package")
    if problems:
        return failed(problems, source_files=provenance.source_files)
    return passed(
        f"all {len(provenance.source_files)} source files present", source_files=provenance.source_files
    )
