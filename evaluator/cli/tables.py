"""Printing leaderboards in the terminal (rich), or as CSV / JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Literal

from rich.console import Console
from rich.table import Table

from evaluator.scoring.leaderboard import leaderboard_frame
from evaluator.scoring.scores import SystemScore

COUNT_COLUMNS = frozenset({"rank", "total_tokens"})
TableFormat = Literal["table", "csv", "json"]
TERMINAL_COLUMNS = (
    "rank",
    "system_name",
    "core",
    "core_ci",
    "answer",
    "process",
    "strict95",
    "unit_accuracy",
    "tool_calls",
    "total_tokens",
    "cost_usd",
    "cost_source",
)


def render_leaderboard(systems: Sequence[SystemScore], form: TableFormat) -> str:
    """The leaderboard as CSV or JSON text (the JSON holds every system figure)."""
    if form == "json":
        return json.dumps([system.model_dump(mode="json") for system in systems], indent=2) + "\n"
    return leaderboard_frame(systems).to_csv(index=False)


def print_leaderboard(systems: Sequence[SystemScore]) -> None:
    """A ranked terminal table; judge-based columns show '-' when no judge scored."""
    frame = leaderboard_frame(systems)
    table = Table(title="EarthVerse leaderboard")
    for column in TERMINAL_COLUMNS:
        table.add_column(column, justify="left" if column in ("system_name", "cost_source") else "right")
    for _, row in frame.iterrows():
        table.add_row(*(_cell(row[column], column in COUNT_COLUMNS) for column in TERMINAL_COLUMNS))
    Console(width=200).print(table)


def _cell(value: object, count: bool) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if count else f"{value:.2f}"
    return str(value)
