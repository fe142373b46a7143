"""The paper's reported leaderboard: the 25 systems' published figures, carried with the release.

These are the figures as the paper reports them (its own judge, its own runs), shown beside our
rescored results and always marked "paper-reported"; nothing here is recomputed.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

PAPER_LEADERBOARD_FILE = "paper_leaderboard.json"
"""Where a built release (and its public Hub folder) keeps the paper's figures."""

CITATION = (
    "EarthVerse: Benchmarking Scientific Agents Across Dynamic Earth Systems and Natural Hazards. "
    "Leaderboard figures as reported in the paper (paper_results/models.json of the source release)."
)


class _Figures(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PaperMetrics(_Figures):
    """Headline figures, 0-100 except the count."""

    answer_correctness: float = Field(description="Answer score.")
    llm_rubric: float = Field(description="Process-rubric score.")
    mean_core: float = Field(description="Core = mean((A + P) / 2).")
    strict_at_95: float = Field(description="Share of tasks with unit accuracy of at least 95.")
    strict_correct_count_405: int = Field(ge=0, description="Tasks (of 405) counted for Strict@95.")
    mean_unit_accuracy: float = Field(description="Mean answer-unit accuracy.")


class PaperProcess(_Figures):
    """Trajectory means per run."""

    avg_rounds: float
    avg_tool_calls: float
    avg_file_reads: float
    avg_unique_files: float
    avg_python_calls: float
    avg_latency_s: float
    avg_total_tokens: float
    avg_evidence_queries: float


class PaperSystemResult(BaseModel):
    """One system's row of the paper's leaderboard."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    rank: int = Field(ge=1)
    name: str = Field(min_length=1)
    metrics: PaperMetrics
    process: PaperProcess
    difficulty: dict[str, float] = Field(description="Core by difficulty level (L2-L5).")
    capabilities: dict[str, float] = Field(description="Core by capability tag.")
    available_result_count: int = Field(ge=0)
    eligible_result_count: int = Field(ge=0)


class PaperLeaderboard(BaseModel):
    """The paper's leaderboard with its citation."""

    model_config = ConfigDict(extra="forbid")

    citation: str = CITATION
    source: str = Field(description="Where the paper's release took the figures from.")
    systems: list[PaperSystemResult]


class _SourceModels(BaseModel):
    model_config = ConfigDict(extra="ignore")

    source: str
    models: list[PaperSystemResult]


class PaperResultsError(ValueError):
    """The paper's figures are malformed; the message names the file and the field."""


def from_source_models(path: Path) -> PaperLeaderboard:
    """The leaderboard of a source release's `paper_results/models.json`."""
    try:
        parsed = _SourceModels.model_validate_json(Path(path).read_bytes())
    except ValidationError as error:
        raise PaperResultsError(f"{path}: {error.errors(include_url=False)[0]}") from error
    systems = sorted(parsed.models, key=lambda system: system.rank)
    return PaperLeaderboard(source=parsed.source, systems=systems)


def read_paper_leaderboard(path: Path) -> PaperLeaderboard:
    """A `paper_leaderboard.json` as written by the build."""
    try:
        return PaperLeaderboard.model_validate_json(Path(path).read_bytes())
    except ValidationError as error:
        raise PaperResultsError(f"{path}: {error.errors(include_url=False)[0]}") from error
