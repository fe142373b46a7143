"""Leaderboard tables from system scores: one row per system, ranked by Core (or U when judge-free),
as a terminal table, CSV or JSON."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evaluator.scoring.scores import Interval, SystemScore

COLUMNS = (
    "rank",
    "system_id",
    "system_name",
    "core",
    "core_ci",
    "answer",
    "process",
    "strict95",
    "unit_accuracy",
    "unit_accuracy_ci",
    "tasks_run",
    "rounds",
    "tool_calls",
    "total_tokens",
    "cost_usd",
    "cost_source",
    "judge_model",
)


def ranked(systems: Sequence[SystemScore]) -> list[SystemScore]:
    """The systems best first: by Core when every system was judged, else by mean U."""
    judged = all(system.core is not None for system in systems)
    return sorted(systems, key=lambda s: -(s.core if judged and s.core is not None else s.unit_accuracy))


def leaderboard_frame(systems: Sequence[SystemScore]) -> pd.DataFrame:
    """One row per system, in `ranked` order, with its rank."""
    rows = [_row(rank, system) for rank, system in enumerate(ranked(systems), start=1)]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _row(rank: int, system: SystemScore) -> dict[str, object]:
    return {
        "rank": rank,
        "system_id": system.system_id,
        "system_name": system.system_name,
        "core": system.core,
        "core_ci": _interval(system.core_ci),
        "answer": system.answer,
        "process": system.process,
        "strict95": system.strict95,
        "unit_accuracy": system.unit_accuracy,
        "unit_accuracy_ci": _interval(system.unit_accuracy_ci),
        "tasks_run": system.tasks_run,
        "rounds": system.trajectory.get("rounds"),
        "tool_calls": system.trajectory.get("tool_calls"),
        "total_tokens": system.total_tokens,
        "cost_usd": system.cost_usd,
        "cost_source": system.cost_source,
        "judge_model": system.judge_model or "none",
    }


def _interval(interval: Interval | None) -> str:
    return "" if interval is None else f"[{interval.low:.1f}, {interval.high:.1f}]"
