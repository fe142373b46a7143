"""Printing leaderboards in the terminal (rich), or as CSV / JSON."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from typing import Literal

from rich.console import Console
from rich.table import Table

from evaluator.scoring.leaderboard import leaderboard_frame, ranked
from evaluator.scoring.scores import SystemScore

COUNT_COLUMNS = frozenset({"rank", "tasks_run", "total_tokens"})
TABLE_WIDTH = 200
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
    "tasks_run",
    "tool_calls",
    "total_tokens",
    "cost_usd",
    "cost_source",
)


def render_leaderboard(systems: Sequence[SystemScore], form: TableFormat) -> str:
    """The leaderboard as text: the terminal table, CSV, or JSON (best first, every system figure and
    its rank)."""
    if form == "json":
        rows = [
            {"rank": rank, **system.model_dump(mode="json")}
            for rank, system in enumerate(ranked(systems), start=1)
        ]
        return json.dumps(rows, indent=2) + "\n"
    if form == "table":
        console = Console(width=TABLE_WIDTH, file=io.StringIO(), record=True)
        console.print(_table(systems))
        return console.export_text()
    return leaderboard_frame(systems).to_csv(index=False)


def print_leaderboard(systems: Sequence[SystemScore]) -> None:
    """A ranked terminal table; judge-based columns show '-' when no judge scored."""
    Console(width=TABLE_WIDTH).print(_table(systems))


def _table(systems: Sequence[SystemScore]) -> Table:
    table = Table(title="EarthVerse leaderboard")
    for column in TERMINAL_COLUMNS:
        table.add_column(column, justify="left" if column in ("system_name", "cost_source") else "right")
    for _, row in leaderboard_frame(systems).iterrows():
        table.add_row(*(_cell(row[column], column in COUNT_COLUMNS) for column in TERMINAL_COLUMNS))
    return table


def _cell(value: object, count: bool) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if count else f"{value:.2f}"
    return str(value)
