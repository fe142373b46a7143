"""The EarthVerse data model: what a task, an event, a package file and the hidden ground truth are.

Public records (`Task`, `Event`, `FileEntry`) may reach an agent and the Hub; `GroundTruth`,
`Rubric` and `HiddenTask` are private and never leave the private side.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

CAPABILITY_TAGS = (
    "physical_mechanism",
    "spatiotemporal_process",
    "quantitative_calculation",
    "multi_source_evidence",
    "causal_chain",
    "ranking_decision",
    "remote_sensing_geospatial",
)

HIDDEN_TASK_FIELDS = (
    "solution",
    "ground_truth",
    "compute_gt_py",
    "difficulty_rationale",
    "dimension_rationale",
)
"""Fields of a source task record that are private: the first three by the release's own rule; the
two rationales because they are reviewer notes that describe the intended solution path."""

EVENT_ID = re.compile(r"CSX-[0-9]{3}")
"""An event (package) id: `CSX-` and three ASCII digits."""
TASK_ID = re.compile(rf"{EVENT_ID.pattern}_Q[0-9]+")
"""A task id: its event's id, `_Q` and the question's number."""
EVENT_ID_FIELD = f"^{EVENT_ID.pattern}$"
TASK_ID_FIELD = f"^{TASK_ID.pattern}$"
"""The id patterns anchored, as pydantic fields take them."""

REPOSITORY_PACKAGE_PREFIX = "event_packages/standard_event_packages/packages/"
"""How the original harness named package files; recorded runs and GT programs use this form."""


class FileEntry(BaseModel):
    """One manifest entry of an event package (the package's `metadata/files.csv` row)."""

    model_config = ConfigDict(extra="allow")

    file_id: str
    relative_path: str = Field(description="Package-relative path, always under data/.")
    category: str
    layer_name: str = ""
    source_id: str = ""
    source_name: str = ""
    source_type: str = ""
    source_url: str = ""
    bytes: int = Field(ge=0, description="Size recorded by the original release.")
    sha256_16: str = Field(description="First 16 hex digits of the original file's sha256.")
    status: str = ""
    preview_type: str = ""
    mime_type: str = ""
    format: str = Field(description="The release's format label: json, html, tiff, image, text, xml, ...")


class Event(BaseModel):
    """An event record (`metadata/event.json`): identity, verification and data-integrity figures."""

    model_config = ConfigDict(extra="allow")

    package_id: str = Field(pattern=EVENT_ID_FIELD)
    event_name: str
    hazard_family: str
    hazard_label: str = ""
    scale: str = ""
    region: str = ""
    primary_evidence_url: str = ""
    data_integrity: dict[str, Any] = Field(default_factory=dict)
    file_inventory: dict[str, Any] = Field(default_factory=dict)

    @property
    def event_id(self) -> str:
        return self.package_id


class Task(BaseModel):
    """The public part of a task: what an agent and a leaderboard visitor may see."""

    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(pattern=TASK_ID_FIELD, description="e.g. `CSX-321_Q2`.")
    event_id: str = Field(pattern=EVENT_ID_FIELD, description="e.g. `CSX-321`.")
    title: str
    event_name: str
    hazard_family: str
    hazard_label: str = ""
    region: str
    scale: str
    difficulty: str = Field(description="L2..L5 with a label, e.g. L2_quantitative_event_diagnosis.")
    primary_dimension: str
    dimensions: list[str] = Field(description="Capability tags, a subset of CAPABILITY_TAGS.")
    task_type: str
    target_family: str
    file_count: int
    category_counts: dict[str, int]
    question: str = Field(description="The public prompt, markdown.")

    @model_validator(mode="after")
    def _of_its_event(self) -> Task:
        _require_task_of_event(self.task_id, self.event_id)
        return self

    @property
    def difficulty_level(self) -> str:
        return self.difficulty.split("_", 1)[0]


class RubricCriterion(BaseModel):
    """One process-rubric criterion; the points of a task's criteria sum to 20."""

    model_config = ConfigDict(extra="allow")

    name: str
    points: float
    description: str
    partial_credit: str | list[str] | None = None


class Rubric(BaseModel):
    model_config = ConfigDict(extra="allow")

    criteria: list[RubricCriterion]
    total_points: float | None = None


class Provenance(BaseModel):
    """Where a ground truth comes from: the package files its reference analysis reads."""

    model_config = ConfigDict(extra="allow")

    source_files: list[str] = Field(default_factory=list)
    computed_by: str = ""

    @field_validator("source_files", mode="before")
    @classmethod
    def _paths(cls, value: Any) -> Any:
        """The release writes these as a list, a role -> path mapping, or null; all mean a list of paths."""
        if value is None:
            return []
        if isinstance(value, dict):
            return list(value.values())
        return value


class GroundTruth(BaseModel):
    """A task's hidden scoring target (`computed_gt.json`). Extra keys of the release are kept."""

    model_config = ConfigDict(extra="allow")

    task_id: str
    primary_gt: Any
    rubric: Rubric
    provenance: Provenance = Field(default_factory=Provenance)
    evaluation_mode: str = ""
    numeric_tolerances: dict[str, Any] = Field(default_factory=dict)
    tolerances: dict[str, Any] = Field(default_factory=dict)
    key_values: dict[str, Any] = Field(default_factory=dict)


class HiddenTask(BaseModel):
    """Everything private about a task: one row of the private `ground_truth.parquet`."""

    task_id: str = Field(pattern=TASK_ID_FIELD)
    event_id: str = Field(pattern=EVENT_ID_FIELD)
    ground_truth: GroundTruth
    solution: str
    compute_gt_py: str
    difficulty_rationale: str = ""
    dimension_rationale: str = ""

    @model_validator(mode="after")
    def _of_its_event(self) -> HiddenTask:
        _require_task_of_event(self.task_id, self.event_id)
        return self


def _require_task_of_event(task_id: str, event_id: str) -> None:
    """A task's files live under its event's folder: its id must start with that event's."""
    if not task_id.startswith(f"{event_id}_"):
        raise ValueError(f"task {task_id!r} does not belong to event {event_id!r}")
