"""The score records: one `TaskScore` per (system, task), one `SystemScore` per system.

Definitions (all on a 0–100 scale): U = answer units correct / scorable; H = the judge's holistic
answer score; A = min(H, U); P = 100 × rubric points awarded / rubric points; Core = (A + P) / 2.
A task that was not run, or whose trace is invalid, scores zero everywhere: it stays in every
denominator.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from evaluator.scoring.answer import AnswerUnitReport
from evaluator.scoring.cost import CostSource, RunCost
from evaluator.scoring.diagnostics import ProcessDiagnostics

TaskStatus = Literal["scored", "not_run", "invalid"]
JudgeStatus = Literal["scored", "unavailable", "not_requested", "pending"]
STRICT_THRESHOLD = 95.0


class Trajectory(BaseModel):
    """What the run did, from the trace's own steps and totals."""

    rounds: int = 0
    tool_calls: int = 0
    file_reads: int = 0
    unique_files: int = 0
    python_calls: int = 0
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None


class TaskScore(BaseModel):
    """Everything scored about one system on one task, auditable down to each answer unit."""

    system_id: str
    system_name: str = ""
    task_id: str
    event_id: str
    dataset_version: str | None = Field(
        default=None, description="The release version (`Release.version`) the task was scored against."
    )
    status: TaskStatus
    reason: str = Field(default="", description="Why a task is not_run or invalid.")
    u: float | None = Field(
        ge=0,
        le=100,
        description="Answer-unit accuracy U; None when no unit of the task could be scored deterministically "
        "(all judge-required, or none requested and none answered): the judge alone decides, A = H.",
    )
    units: AnswerUnitReport | None = None
    judge_status: JudgeStatus = "not_requested"
    judge_model: str | None = None
    h: float | None = Field(default=None, ge=0, le=100, description="Holistic answer score H.")
    p: float | None = Field(default=None, ge=0, le=100, description="Process rubric score P.")
    criterion_points: dict[str, float] = Field(default_factory=dict)
    diagnostics: ProcessDiagnostics | None = None
    trajectory: Trajectory = Field(default_factory=Trajectory)
    cost: RunCost = Field(default_factory=lambda: RunCost(usd=None, source="unpriced"))

    @property
    def a(self) -> float | None:
        """A = min(H, U), or H where U is undefined; unknown until the judge has scored."""
        if self.h is None:
            return None
        return self.h if self.u is None else min(self.h, self.u)

    @property
    def core(self) -> float | None:
        """This task's Core contribution (A + P) / 2; unknown until the judge has scored."""
        a = self.a
        return None if a is None or self.p is None else (a + self.p) / 2

    @property
    def strict(self) -> bool:
        """U >= 95; where U is undefined, the answer score the judge gave (False until it has)."""
        answer = self.u if self.u is not None else self.h
        return answer is not None and answer >= STRICT_THRESHOLD


class Interval(BaseModel):
    """A bootstrap 95% interval of a mean over tasks."""

    low: float
    high: float


class SystemScore(BaseModel):
    """A system's leaderboard row. Judge-based figures are None when no judge has scored."""

    system_id: str
    system_name: str = ""
    judge_model: str | None = Field(description="The judge behind H and P, or None when judge-free.")
    tasks: int = Field(description="Tasks in the release: the denominator of every mean.")
    tasks_run: int
    answer: float | None = Field(description="Mean A.")
    process: float | None = Field(description="Mean P.")
    core: float | None = Field(description="Mean (A + P) / 2.")
    core_ci: Interval | None = None
    strict95: float = Field(description="% of tasks with U >= 95.")
    unit_accuracy: float = Field(description="Mean U over the tasks where U is defined (not-run tasks at 0).")
    unit_accuracy_ci: Interval
    basis: Literal["core", "unit_accuracy"] = Field(
        description="What the capability, difficulty and hazard views average: Core when judged, else U."
    )
    by_capability: dict[str, float]
    by_difficulty: dict[str, float]
    by_hazard_family: dict[str, float]
    diagnostics: dict[str, float | None] = Field(description="Means of the judge-free process diagnostics.")
    trajectory: dict[str, float | None] = Field(description="Means over the tasks run.")
    total_tokens: int | None
    cost_usd: float | None = Field(description="Summed cost of the priced runs; None when none is priced.")
    cost_source: CostSource | Literal["mixed"]
    unpriced_runs: int
