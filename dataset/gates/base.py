"""What every gate takes and gives."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from dataset.gt_runner import GroundingResult
from dataset.package_audit import PackageAudit
from dataset.source import SourceTaskRecord
from loaders import layout


class GateResult(BaseModel):
    """One gate's verdict on one task, with the reason a person needs to act on it."""

    passed: bool
    reason: str = ""
    details: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class TaskInputs:
    """What the gates look at for one task: its source record, the built release and the audits."""

    record: SourceTaskRecord
    out: Path
    package: PackageAudit
    grounding: GroundingResult

    @property
    def package_root(self) -> Path:
        return layout.package_dir(self.out, self.record.event_id)


def passed(reason: str, **details: Any) -> GateResult:
    return GateResult(passed=True, reason=reason, details=details)


def failed(problems: list[str], **details: Any) -> GateResult:
    return GateResult(passed=False, reason="; ".join(problems), details=details)
