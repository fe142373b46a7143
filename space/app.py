"""The EarthVerse Space: today the public task explorer of a release; the leaderboard, submissions
and server-side rescoring are built on it next (issue 4).

Configuration: EARTHVERSE_RELEASE — a built release folder, its `hub/public` folder or a Hub repo
id (default `earthverse/core`); GRADIO_SERVER_PORT as Gradio reads it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# No analytics calls home: the Space must start and run with no network.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loaders.release import Release, open_release  # after the project path is known

TABLE_COLUMNS = (
    "task_id",
    "title",
    "event_name",
    "hazard_family",
    "region",
    "difficulty",
    "primary_dimension",
)


def task_table(release: Release, query: str = "", hazard_family: str = "all") -> pd.DataFrame:
    """Public task rows whose text matches `query` (case-insensitive) in the chosen hazard family."""
    rows = [task.model_dump(include=set(TABLE_COLUMNS)) for task in release.tasks]
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    if hazard_family != "all":
        table = table[table["hazard_family"] == hazard_family]
    if query.strip():
        text = table.astype(str).agg(" ".join, axis=1).str.casefold()
        table = table[text.str.contains(query.strip().casefold(), regex=False)]
    return table.reset_index(drop=True)


def task_view(release: Release, task_id: str) -> tuple[str, pd.DataFrame]:
    """A task's public question and its package's file list; nothing hidden is reachable here."""
    if not task_id:
        return "", pd.DataFrame()
    task = release.task(task_id)
    files = pd.DataFrame(
        [entry.model_dump(include={"relative_path", "category", "source_name", "format"})
         for entry in release.manifest(task.event_id)]
    )
    return task.question, files


def build_app(release: Release) -> gr.Blocks:
    families = ["all", *sorted({task.hazard_family for task in release.tasks})]
    with gr.Blocks(title="EarthVerse") as app:
        gr.Markdown(f"# EarthVerse\n{len(release.tasks)} tasks over {len(release.events)} event packages.")
        with gr.Tab("Tasks"):
            with gr.Row():
                query = gr.Textbox(label="Search", placeholder="event, region, title…")
                family = gr.Dropdown(families, value="all", label="Hazard family")
            table = gr.Dataframe(task_table(release), interactive=False)
            task_id = gr.Dropdown([task.task_id for task in release.tasks], label="Task")
            question = gr.Markdown()
            files = gr.Dataframe(interactive=False)
        for control in (query, family):
            control.change(lambda q, f: task_table(release, q, f), [query, family], table)
        task_id.change(lambda t: task_view(release, t), task_id, [question, files])
    return app


if __name__ == "__main__":
    build_app(open_release(os.environ.get("EARTHVERSE_RELEASE", "earthverse/core"))).launch()
