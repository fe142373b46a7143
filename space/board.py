"""The leaderboard's rows: the paper-reported systems beside every rescored submission, in one model.

Paper rows carry the figures as published (no intervals: ranked by Core as published). Rescored rows
carry our figures; they are ranked by Core when judged, else by mean unit accuracy U, and systems
whose 95% intervals overlap share a rank.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from evaluator.scoring.scores import Interval
from loaders.paper_results import PaperLeaderboard, PaperSystemResult
from space.records import ResultRecord

Source = Literal["paper-reported", "rescored"]
PAPER, RESCORED = "paper-reported", "rescored"
PAPER_HARNESS = "paper harness"
_FAMILY = re.compile(r"[A-Za-z]+")


class BoardRow(BaseModel):
    """One system on the leaderboard, whatever its source."""

    source: Source
    key: str
    rank: str = ""
    system: str
    harness: str
    family: str
    judge: str
    answer: float | None = None
    process: float | None = None
    core: float | None = None
    interval: Interval | None = None
    strict95: float | None = None
    unit_accuracy: float | None = None
    rounds: float | None = None
    tool_calls: float | None = None
    tokens_per_run: float | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    cost_per_run_usd: float | None = None
    cost_source: str = "unpriced"
    """`recomputed`, `self-reported`, `mixed` or `unpriced`: an unpriced row is never shown at $0."""
    tasks_run: int | None = None
    by_capability: dict[str, float] = {}
    by_difficulty: dict[str, float] = {}
    by_hazard_family: dict[str, float] = {}

    @property
    def score(self) -> float:
        """What the row is ranked and plotted by: Core, or U while no judge has scored."""
        return self.core if self.core is not None else (self.unit_accuracy or 0.0)

    @property
    def score_basis(self) -> str:
        return "Core" if self.core is not None else "U"


def family_of(model: str) -> str:
    """A model family for filtering: the leading word of the model name (`GPT-5.6 Sol` -> `GPT`)."""
    found = _FAMILY.search(model)
    return found.group(0) if found else "other"


def paper_row(system: PaperSystemResult) -> BoardRow:
    metrics, process = system.metrics, system.process
    return BoardRow(
        source=PAPER,
        key=f"paper:{system.id}",
        rank=str(system.rank),
        system=system.name,
        harness=PAPER_HARNESS,
        family=family_of(system.name),
        judge="paper judge",
        answer=metrics.answer_correctness,
        process=metrics.llm_rubric,
        core=metrics.mean_core,
        strict95=metrics.strict_at_95,
        unit_accuracy=metrics.mean_unit_accuracy,
        rounds=process.avg_rounds,
        tool_calls=process.avg_tool_calls,
        tokens_per_run=process.avg_total_tokens,
        latency_s=process.avg_latency_s,
        tasks_run=system.available_result_count,
        by_capability=system.capabilities,
        by_difficulty=system.difficulty,
    )


def rescored_row(result: ResultRecord, judged: bool) -> BoardRow:
    system = result.system
    priced_runs = system.tasks_run - system.unpriced_runs
    return BoardRow(
        source=RESCORED,
        key=f"rescored:{result.receipt}",
        system=system.system_name,
        harness=result.harness,
        family=family_of(result.model if result.model != "unknown" else system.system_name),
        judge=_judge_label(result, judged),
        answer=system.answer,
        process=system.process,
        core=system.core,
        interval=system.core_ci if system.core is not None else system.unit_accuracy_ci,
        strict95=system.strict95,
        unit_accuracy=system.unit_accuracy,
        rounds=system.trajectory.get("rounds"),
        tool_calls=system.trajectory.get("tool_calls"),
        tokens_per_run=system.trajectory.get("total_tokens"),
        latency_s=system.trajectory.get("latency_s"),
        cost_usd=system.cost_usd,
        cost_source=system.cost_source,
        cost_per_run_usd=None
        if system.cost_usd is None or not priced_runs
        else system.cost_usd / priced_runs,
        tasks_run=system.tasks_run,
        by_capability=system.by_capability,
        by_difficulty=system.by_difficulty,
        by_hazard_family=system.by_hazard_family,
    )


def _judge_label(result: ResultRecord, judged: bool) -> str:
    if result.stage == "judged":
        return result.judge_model or "judge unavailable"
    return "judge pending" if judged else "judge-free (U only)"


def tied_ranks(rows: Sequence[BoardRow]) -> list[BoardRow]:
    """Rows best first, each ranked 1 + the number of rows whose interval lies wholly above its own;
    rows sharing a rank are marked `=`."""
    ordered = sorted(rows, key=lambda row: -row.score)
    ranks = [1 + sum(1 for other in ordered if _above(other, row)) for row in ordered]
    shared = {rank for rank in ranks if ranks.count(rank) > 1}
    return [
        row.model_copy(update={"rank": f"={rank}" if rank in shared else str(rank)})
        for row, rank in zip(ordered, ranks, strict=True)
    ]


def _above(other: BoardRow, row: BoardRow) -> bool:
    if other.interval is None or row.interval is None:
        return other.score > row.score
    return other.interval.low > row.interval.high


def board_rows(
    paper: PaperLeaderboard | None, results: Sequence[ResultRecord], judged: bool
) -> list[BoardRow]:
    """Every leaderboard row: the paper's systems (their published rank), then the rescored ones."""
    papers = [paper_row(system) for system in paper.systems] if paper else []
    return papers + tied_ranks([rescored_row(result, judged) for result in results])
