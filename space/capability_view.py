"""Breakdown views: Core by capability tag, by difficulty level and by hazard family (table and heatmap)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Literal

import pandas as pd
import plotly.graph_objects as go

from loaders.models import CAPABILITY_TAGS
from space.board import BoardRow

Breakdown = Literal["by_capability", "by_difficulty", "by_hazard_family"]
BREAKDOWNS: dict[Breakdown, str] = {
    "by_capability": "capability",
    "by_difficulty": "difficulty",
    "by_hazard_family": "hazard family",
}


def groups(rows: Sequence[BoardRow], breakdown: Breakdown) -> list[str]:
    """The columns of a breakdown: the seven capability tags in their order, else every group present."""
    if breakdown == "by_capability":
        return list(CAPABILITY_TAGS)
    return sorted({group for row in rows for group in getattr(row, breakdown)})


def breakdown_frame(rows: Sequence[BoardRow], breakdown: Breakdown) -> pd.DataFrame:
    """One row per system that reports this breakdown: system, source, basis, then a column per group."""
    columns = groups(rows, breakdown)
    records = [
        {
            "system": row.system,
            "source": row.source,
            "basis": row.score_basis,
            **{group: getattr(row, breakdown).get(group) for group in columns},
        }
        for row in sorted(rows, key=lambda row: -row.score)
        if getattr(row, breakdown)
    ]
    return pd.DataFrame(records, columns=["system", "source", "basis", *columns])


def heatmap(frame: pd.DataFrame, title: str) -> go.Figure:
    """A heatmap of a breakdown frame; system names are escaped, so plotly shows them as text."""
    groups_ = [column for column in frame.columns if column not in ("system", "source", "basis")]
    labels = [
        html.escape(f"{system} ({source})")
        for system, source in zip(frame["system"], frame["source"], strict=True)
    ]
    figure = go.Figure(
        go.Heatmap(
            z=frame[groups_].to_numpy(dtype=float),
            x=[html.escape(group) for group in groups_],
            y=labels,
            colorscale="Viridis",
            zmin=0,
            zmax=100,
            hovertemplate="%{y}<br>%{x}: %{z:.1f}<extra></extra>",
        )
    )
    figure.update_layout(
        title=title,
        height=max(320, 24 * len(labels) + 160),
        yaxis={"autorange": "reversed"},
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    return figure
