"""The cost view: score against USD cost per run and against tokens per run (log axes), with the
Pareto frontier. Unpriced systems are listed as unpriced, never plotted at $0."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

import pandas as pd
import plotly.graph_objects as go

from space.board import BoardRow

Axis = Callable[[BoardRow], float | None]
AXES: dict[str, tuple[Axis, str]] = {
    "cost": (lambda row: row.cost_per_run_usd, "USD per run (log)"),
    "tokens": (lambda row: row.tokens_per_run, "tokens per run (log)"),
}
"""Cost axes: what a row's x value is, and the axis title."""


def plotted(rows: Sequence[BoardRow], axis: str) -> list[BoardRow]:
    """Rows with a positive x value on `axis` (a log axis cannot show zero or unknown cost)."""
    x_of = AXES[axis][0]
    return [row for row in rows if (x_of(row) or 0) > 0]


def pareto_frontier(rows: Sequence[BoardRow], axis: str) -> list[BoardRow]:
    """The rows no other row beats on both cost (lower) and score (higher), cheapest first."""
    x_of = AXES[axis][0]
    frontier: list[BoardRow] = []
    for row in sorted(plotted(rows, axis), key=lambda row: (x_of(row), -row.score)):
        if not frontier or row.score > frontier[-1].score:
            frontier.append(row)
    return frontier


def cost_figure(rows: Sequence[BoardRow], axis: str) -> go.Figure:
    """Score (Core, or U while judge-free) against the axis, one marker series per source."""
    x_of, title = AXES[axis]
    figure = go.Figure()
    for source in ("paper-reported", "rescored"):
        points = [row for row in plotted(rows, axis) if row.source == source]
        figure.add_trace(
            go.Scatter(
                x=[x_of(row) for row in points],
                y=[row.score for row in points],
                text=[html.escape(f"{row.system} ({row.score_basis})") for row in points],
                mode="markers",
                name=source,
                hovertemplate="%{text}<br>%{x:.3g}, %{y:.1f}<extra></extra>",
            )
        )
    frontier = pareto_frontier(rows, axis)
    figure.add_trace(
        go.Scatter(
            x=[x_of(row) for row in frontier],
            y=[row.score for row in frontier],
            mode="lines",
            line={"shape": "hv", "dash": "dot"},
            name="Pareto frontier",
            hoverinfo="skip",
        )
    )
    figure.update_layout(
        xaxis={"type": "log", "title": title},
        yaxis={"title": "Core (U when judge-free)", "range": [0, 100]},
        height=420,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
    )
    return figure


def unpriced_frame(rows: Sequence[BoardRow]) -> pd.DataFrame:
    """The systems without a USD cost (no price for their model, or not reported)."""
    records = [
        {"system": row.system, "source": row.source, "cost": "unpriced"}
        for row in rows
        if not row.cost_per_run_usd
    ]
    return pd.DataFrame(records, columns=["system", "source", "cost"])
