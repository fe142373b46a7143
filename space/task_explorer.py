"""The task explorer: a task's public question and files, every rescored system's score on it, and a
run's trace step by step (stored without the paper judge's `recorded` block; nothing hidden is read)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pandas as pd

from evaluator.traces.schema import Trace
from loaders.release import Release
from space.records import ResultRecord
from space.redaction import Redactor
from space.store import Store

MAX_CELL_CHARS = 4000
FILE_COLUMNS = [
    "file_id",
    "relative_path",
    "category",
    "layer_name",
    "source_id",
    "source_name",
    "source_type",
    "source_url",
    "bytes",
    "sha256_16",
    "status",
    "preview_type",
    "mime_type",
    "format",
]
"""The manifest columns, in the order of the package's files.csv."""
STEP_COLUMNS = ["step", "action", "ok", "reason", "arguments", "observation", "error"]
SCORE_COLUMNS = ["system", "status", "U", "Core", "judge"]


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def task_files(release: Release, task_id: str) -> pd.DataFrame:
    """The package file list of the task's event (public manifest fields only)."""
    task = release.task(task_id)
    entries = [
        entry.model_dump(mode="json", include=set(FILE_COLUMNS)) for entry in release.manifest(task.event_id)
    ]
    return pd.DataFrame(entries, columns=FILE_COLUMNS)


def task_scores(results: Sequence[ResultRecord], task_id: str) -> pd.DataFrame:
    """Every rescored system's public score on the task (U, Core when judged)."""
    rows = []
    for result in results:
        score = next((task for task in result.tasks if task.task_id == task_id), None)
        if score is not None:
            rows.append([result.system.system_name, score.status, score.u, score.core, score.judge_status])
    frame = pd.DataFrame(rows, columns=SCORE_COLUMNS)
    return frame.sort_values("U", ascending=False, ignore_index=True, na_position="last")


def runs_of(results: Sequence[ResultRecord], task_id: str) -> list[tuple[str, str]]:
    """(label, receipt) of each rescored submission that ran the task, for the run picker."""
    return [
        (f"{result.system.system_name} · {result.receipt[:8]}", result.receipt)
        for result in results
        if any(task.task_id == task_id and task.status == "scored" for task in result.tasks)
    ]


def find_trace(store: Store, receipt: str, task_id: str) -> Trace | None:
    return next((trace for trace in store.traces(receipt) if trace.task_id == task_id), None)


def trace_steps(trace: Trace, redactor: Redactor) -> pd.DataFrame:
    """The run's steps, one row each, every cell plain text with hidden material withheld."""
    rows = []
    for step in trace.steps:
        cells = [
            str(step.index),
            step.action,
            "yes" if step.ok else "no",
            _clip(step.reason),
            _clip(json.dumps(step.arguments, ensure_ascii=False)),
            _clip(step.observation.text),
            step.error or "",
        ]
        rows.append(redactor.clean_row(cells))
    return pd.DataFrame(rows, columns=STEP_COLUMNS)


def trace_summary(trace: Trace, redactor: Redactor) -> str:
    """How the run ended and its final answer (withheld when it quotes hidden material)."""
    totals = trace.totals
    lines = [
        f"run status: {trace.run_status}; termination: {trace.termination_reason or 'not stated'}",
        f"rounds {totals.rounds}, tool calls {totals.tool_calls}, tokens {totals.total_tokens}, "
        f"latency {totals.latency_s:.0f} s",
        f"final answer ({trace.final_answer.status}):",
        _clip(trace.final_answer.raw_text),
    ]
    return "\n".join(redactor.clean_row(lines))
