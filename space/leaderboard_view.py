"""The leaderboard table: one row per system, searchable and filterable, sortable in the browser."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from space.board import BoardRow

ALL = "all"
Cell = Callable[[BoardRow], object]


def _rounded(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _interval(row: BoardRow) -> str:
    if row.interval is None:
        return "not published" if row.source == "paper-reported" else ""
    return f"[{row.interval.low:.1f}, {row.interval.high:.1f}]"


def _cost(row: BoardRow) -> float | None:
    return _rounded(row.cost_usd, 4)


COLUMNS: dict[str, tuple[Cell, str]] = {
    "rank": (lambda row: row.rank, "str"),
    "source": (lambda row: row.source, "str"),
    "system": (lambda row: row.system, "str"),
    "harness": (lambda row: row.harness, "str"),
    "family": (lambda row: row.family, "str"),
    "Answer": (lambda row: _rounded(row.answer), "number"),
    "Process": (lambda row: _rounded(row.process), "number"),
    "Core": (lambda row: _rounded(row.core), "number"),
    "95% interval": (_interval, "str"),
    "Strict@95": (lambda row: _rounded(row.strict95), "number"),
    "unit accuracy": (lambda row: _rounded(row.unit_accuracy), "number"),
    "rounds": (lambda row: _rounded(row.rounds, 1), "number"),
    "tool calls": (lambda row: _rounded(row.tool_calls, 1), "number"),
    "tokens/run": (lambda row: _rounded(row.tokens_per_run, 0), "number"),
    "latency s": (lambda row: _rounded(row.latency_s, 1), "number"),
    "cost USD": (_cost, "number"),
    "cost source": (lambda row: row.cost_source, "str"),
    "judge": (lambda row: row.judge, "str"),
}
"""Column name -> (cell of a row, Gradio datatype). Every text cell is `str`: shown as text, never HTML."""
DATATYPES = [datatype for _, datatype in COLUMNS.values()]


def choices(rows: Sequence[BoardRow], field: str) -> list[str]:
    """The filter choices of a text field: `all`, then each value present."""
    return [ALL, *sorted({str(getattr(row, field)) for row in rows})]


def filtered(
    rows: Sequence[BoardRow], query: str = "", family: str = ALL, harness: str = ALL, source: str = ALL
) -> list[BoardRow]:
    """The rows matching every filter and the (case-insensitive) search text, best score first."""
    wanted = {"family": family, "harness": harness, "source": source}
    needle = query.strip().casefold()
    kept = [
        row
        for row in rows
        if all(value in (ALL, "", None) or getattr(row, field) == value for field, value in wanted.items())
        and (not needle or needle in f"{row.system} {row.harness} {row.family} {row.source}".casefold())
    ]
    return sorted(kept, key=lambda row: -row.score)


def leaderboard_frame(rows: Sequence[BoardRow]) -> pd.DataFrame:
    """The table of `rows`, one column per entry of COLUMNS."""
    return pd.DataFrame([[cell(row) for cell, _ in COLUMNS.values()] for row in rows], columns=list(COLUMNS))
