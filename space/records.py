"""The records the Space stores and answers with: pydantic models at every boundary of the store and API."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evaluator.scoring.scores import SystemScore, TaskScore
from evaluator.traces.schema import SubmissionMetadata

SubmissionState = Literal["queued", "scored", "published", "rejected", "unknown"]
Decision = Literal["accepted", "rejected", "duplicate", "scored", "judged", "judge_failed", "scoring_failed"]
ResultStage = Literal["deterministic", "judged"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SubmissionRecord(_Record):
    """An accepted submission: who sent what, when; its traces are stored beside it, privately."""

    receipt: str = Field(description="sha256 of the uploaded content (and the form's metadata, if any).")
    user: str
    received_at: datetime
    filename: str
    size_bytes: int = Field(ge=0)
    metadata: SubmissionMetadata
    traces: int = Field(ge=0)

    def on_release(self, version: str) -> bool:
        """Whether the runs were made on the release of `version`: only those are ranked and scored."""
        return self.metadata.dataset_version == version


class RejectionRecord(_Record):
    """An upload that was turned away, and why (the reason is shown to the submitter)."""

    receipt: str
    user: str
    received_at: datetime
    filename: str
    reason: str


class PublicTaskScore(_Record):
    """The public part of one task's score: no answer units, no ground-truth values, no criterion names."""

    task_id: str
    status: str
    u: float | None = Field(description="U; None where no unit of the task can be decided.")
    h: float | None = None
    p: float | None = None
    core: float | None = None
    judge_status: str

    @classmethod
    def of(cls, score: TaskScore) -> PublicTaskScore:
        return cls(
            task_id=score.task_id,
            status=score.status,
            u=None if score.u is None else round(score.u, 2),
            h=score.h,
            p=score.p,
            core=None if score.core is None else round(score.core, 2),
            judge_status=score.judge_status,
        )


class ResultRecord(_Record):
    """One scoring of a submission, written once: deterministic first, then (with a judge) judged."""

    receipt: str
    stage: ResultStage
    scored_at: datetime
    judge_model: str | None
    system: SystemScore
    harness: str
    model: str
    organisation: str
    tasks: list[PublicTaskScore]
    problems: list[str] = Field(default_factory=list)


class LogEntry(_Record):
    """One decision of the Space, appended to the log (rejections with their reason)."""

    at: datetime
    decision: Decision
    receipt: str
    user: str
    detail: str = ""


class SubmissionStatus(_Record):
    """What the `submit` and `status` API endpoints answer: exactly these three keys."""

    receipt: str
    status: SubmissionState
    message: str
