"""The Gradio Blocks of the Space: one tab per view, the submission form, and the two API endpoints.

Everything a submitter wrote (system names, traces, messages) reaches the page through components
that render text: Dataframe `str` cells, Textbox, JSON and escaped plotly labels, never Markdown/HTML.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from loaders.paper_results import CITATION
from space import capability_view, cost_view, leaderboard_view, task_explorer
from space.board import BoardRow
from space.leaderboard_view import ALL
from space.records import SubmissionStatus
from space.services import Services
from space.validation import MetadataForm

ABOUT = Path(__file__).with_name("about.md")
ON_HUB = bool(os.environ.get("SPACE_ID"))
"""Hub login only works in a Space; elsewhere the configured development identity is used."""
FORM_FIELDS = ("system_name", "model", "harness", "organisation", "contact", "notes")
THEME = gr.themes.Default(
    font=["ui-sans-serif", "system-ui", "sans-serif"], font_mono=["ui-monospace", "monospace"]
)
"""System fonts only: the page must render with no network (no web-font downloads)."""


def build_ui(services: Services) -> gr.Blocks:
    release = services.release
    with gr.Blocks(title="EarthVerse leaderboard", fill_width=True) as app:
        gr.Markdown(
            f"# EarthVerse leaderboard\n{len(release.tasks)} tasks over {len(release.events)} event "
            f"packages · release `{release.version}`"
        )
        with gr.Tabs():
            board = _leaderboard_tab(services)
            breakdowns = _breakdown_tabs()
            costs = _cost_tab()
            _explorer_tab(services)
            _submit_tab(services)
            with gr.Tab("About", id="about"):
                gr.Markdown(ABOUT.read_text(encoding="utf-8") + "\n" + _citation(services))
        outputs = [*board.outputs, *breakdowns, *costs]

        def render_all(query: str, family: str, harness: str, source: str) -> list[Any]:
            return render_views(services, query, family, harness, source)

        app.load(render_all, board.inputs, outputs, api_visibility="undocumented")
        board.refresh.click(render_all, board.inputs, outputs, api_visibility="undocumented")
        for control in board.inputs:
            control.change(render_all, board.inputs, outputs, api_visibility="undocumented")
    return app


def _citation(services: Services) -> str:
    paper = services.release.paper_leaderboard
    return f"> {paper.citation if paper else CITATION}"


class _Board:
    def __init__(self) -> None:
        with gr.Row():
            self.query = gr.Textbox(label="Search systems", placeholder="name, harness, family…", scale=3)
            self.family = gr.Dropdown([ALL], value=ALL, label="Family", allow_custom_value=True)
            self.harness = gr.Dropdown([ALL], value=ALL, label="Harness", allow_custom_value=True)
            self.source = gr.Dropdown(
                [ALL, "paper-reported", "rescored"], value=ALL, label="Source", allow_custom_value=True
            )
            self.refresh = gr.Button("Refresh", scale=0)
        self.table = gr.Dataframe(
            datatype=leaderboard_view.DATATYPES,
            headers=list(leaderboard_view.COLUMNS),
            interactive=False,
            wrap=True,
            max_height=720,
            elem_id="leaderboard-table",
            label="Leaderboard (sort or filter a column from its ⋮ menu)",
        )
        self.count = gr.Textbox(label="Shown", interactive=False, max_lines=1)
        self.inputs = [self.query, self.family, self.harness, self.source]
        self.outputs = [self.table, self.count, self.family, self.harness]


def render_views(
    services: Services, query: str = "", family: str = ALL, harness: str = ALL, source: str = ALL
) -> list[Any]:
    """Every table and figure of the leaderboard, breakdown and cost tabs, in the order of their outputs."""
    rows, _ = services.board()
    shown = leaderboard_view.filtered(rows, query, family, harness, source)
    board = [
        leaderboard_view.leaderboard_frame(shown),
        f"{len(shown)} of {len(rows)} systems",
        gr.Dropdown(choices=leaderboard_view.choices(rows, "family")),
        gr.Dropdown(choices=leaderboard_view.choices(rows, "harness")),
    ]
    return [*board, *_breakdowns(rows), *_costs(rows)]


def _leaderboard_tab(services: Services) -> _Board:
    with gr.Tab("Leaderboard", id="leaderboard"):
        board = _Board()
        gr.Markdown(
            "**paper-reported**: figures as published in the paper (no intervals; ranked by Core as "
            "published). **rescored**: submissions rescored here against the hidden ground truth; ranked by "
            "Core (by U while judge-free or judge pending); overlapping 95% intervals share a rank (`=`).\n\n"
            + _citation(services)
        )
    return board


def _breakdown_tabs() -> list[gr.components.Component]:
    components: list[gr.components.Component] = []
    with gr.Tab("Capabilities", id="capabilities"):
        gr.Markdown("Core by the seven capability tags (U for judge-free rescored rows).")
        components += [gr.Dataframe(interactive=False, wrap=True), gr.Plot(label="Capability heatmap")]
    with gr.Tab("Difficulty & hazard", id="difficulty"):
        gr.Markdown("Core by difficulty level and by hazard family (the paper reports no hazard breakdown).")
        components += [gr.Dataframe(interactive=False, wrap=True), gr.Plot(label="Difficulty heatmap")]
        components += [gr.Dataframe(interactive=False, wrap=True), gr.Plot(label="Hazard-family heatmap")]
    return components


def _breakdowns(rows: list[BoardRow]) -> list[Any]:
    rendered: list[Any] = []
    for breakdown, title in capability_view.BREAKDOWNS.items():
        frame = capability_view.breakdown_frame(rows, breakdown)
        rendered += [frame, capability_view.heatmap(frame, f"Core by {title}")]
    return rendered


def _cost_tab() -> list[gr.components.Component]:
    with gr.Tab("Cost", id="cost"):
        gr.Markdown(
            "Score against cost per run and tokens per run (log axes), with the Pareto frontier. Cost is "
            "recomputed from token counts with litellm's dated price table; unpriced systems are listed "
            "below and never plotted at $0."
        )
        with gr.Row():
            cost = gr.Plot(label="Core vs USD per run")
            tokens = gr.Plot(label="Core vs tokens per run")
        unpriced = gr.Dataframe(interactive=False, label="Unpriced systems")
    return [cost, tokens, unpriced]


def _costs(rows: list[BoardRow]) -> list[Any]:
    return [
        cost_view.cost_figure(rows, "cost"),
        cost_view.cost_figure(rows, "tokens"),
        cost_view.unpriced_frame(rows),
    ]


def _explorer_tab(services: Services) -> None:
    release, store = services.release, services.store
    with gr.Tab("Task explorer", id="explorer"):
        task_id = gr.Dropdown([task.task_id for task in release.tasks], label="Task", value=None)
        question = gr.Markdown()
        files = gr.Dataframe(interactive=False, wrap=True, label="Package files")
        scores = gr.Dataframe(interactive=False, label="Rescored systems on this task", elem_id="task-scores")
        run = gr.Dropdown([], label="Run (a rescored submission of this task)", value=None)
        summary = gr.Textbox(label="Run summary and final answer", lines=6, interactive=False)
        steps = gr.Dataframe(
            interactive=False, wrap=True, label="Steps", max_height=600, elem_id="trace-steps"
        )

    def show_task(chosen: str | None) -> list[Any]:
        if not chosen:
            return ["", pd.DataFrame(), pd.DataFrame(), gr.Dropdown(choices=[], value=None)]
        _, results = services.board()
        return [
            release.task(chosen).question,
            task_explorer.task_files(release, chosen),
            task_explorer.task_scores(results, chosen),
            gr.Dropdown(choices=task_explorer.runs_of(results, chosen), value=None),
        ]

    def show_run(chosen: str | None, receipt: str | None) -> list[Any]:
        trace = task_explorer.find_trace(store, receipt, chosen) if chosen and receipt else None
        if trace is None:
            return ["", pd.DataFrame()]
        return [
            task_explorer.trace_summary(trace, services.redactor),
            task_explorer.trace_steps(trace, services.redactor),
        ]

    task_id.change(show_task, task_id, [question, files, scores, run], api_visibility="undocumented")
    run.change(show_run, [task_id, run], [summary, steps], api_visibility="undocumented")


def _submit_tab(services: Services) -> None:
    intake, identity = services.intake, services.identity
    with gr.Tab("Submit", id="submit"):
        if ON_HUB:
            gr.LoginButton()
        else:
            gr.Textbox(
                value=identity.local_user or "nobody (set EARTHVERSE_LOCAL_USER for development)",
                label="Development identity",
                interactive=False,
            )
        upload = gr.File(
            label="Submission (.jsonl or .zip of traces)",
            file_types=[".jsonl", ".zip"],
            elem_id="submission-file",
        )
        gr.Markdown("Metadata: leave a field empty to keep the value from the file's metadata header.")
        with gr.Row():
            form = [gr.Textbox(label=name.replace("_", " "), max_lines=1) for name in FORM_FIELDS[:3]]
        with gr.Row():
            form += [gr.Textbox(label=name.replace("_", " "), max_lines=1) for name in FORM_FIELDS[3:5]]
        form.append(gr.Textbox(label="notes", lines=2))
        send = gr.Button("Submit for rescoring", variant="primary")
        answer = gr.JSON(label="Submission status", elem_id="submission-status")
        receipt = gr.Textbox(label="Receipt (sha256)", max_lines=1, elem_id="receipt")
        look_up = gr.Button("Look up status")
        api_file = gr.File(visible=False)
        api_send = gr.Button(visible=False)

    def user_of(request: gr.Request) -> str | None:
        return identity.user(_profile(request), request)

    def submit_form(
        file: str | None,
        system_name: str,
        model: str,
        harness: str,
        organisation: str,
        contact: str,
        notes: str,
        request: gr.Request,
    ) -> list[Any]:
        values = (system_name, model, harness, organisation, contact, notes)
        form_values = MetadataForm(**dict(zip(FORM_FIELDS, (value or "" for value in values), strict=True)))
        status = _submit(intake, file, user_of(request), form_values)
        return [status.model_dump(), status.receipt, None]

    def submit_api(file: str | None, request: gr.Request) -> dict[str, str]:
        return _submit(intake, file, user_of(request), MetadataForm()).model_dump()

    def look_up_status(value: str) -> dict[str, str]:
        return intake.status(value or "").model_dump()

    send.click(submit_form, [upload, *form], [answer, receipt, upload], api_visibility="undocumented")
    api_send.click(submit_api, api_file, answer, api_name="submit")
    look_up.click(look_up_status, receipt, answer, api_name="status")


def _profile(request: gr.Request) -> gr.OAuthProfile | None:
    """The Hub login of the session, when the Space has one (gradio keeps it in the session)."""
    session = getattr(request, "session", None) if ON_HUB else None
    info = session.get("oauth_info") if session else None
    return gr.OAuthProfile(info["userinfo"]) if info and "userinfo" in info else None


def _submit(intake: Any, file: str | None, user: str | None, form: MetadataForm) -> SubmissionStatus:
    path = Path(file) if file else None
    try:
        return intake.submit(path, path.name if path else "", user, form)
    finally:
        if path is not None:
            path.unlink(missing_ok=True)  # the upload is stored (or refused); gradio's copy must not linger
