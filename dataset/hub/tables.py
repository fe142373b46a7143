"""The parquet tables of the Hub folders: public tasks and events, private ground truth."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from loaders.models import Event, FileEntry, Task
from loaders.release import (
    EVENT_RECORD_COLUMN,
    GROUND_TRUTH_COLUMNS,
    MANIFEST_COLUMN,
    TASK_JSON_COLUMNS,
    HiddenRecord,
    hidden_row,
    task_row,
    to_json_cell,
)

FLATTENED_SEPARATOR = "_"


class EventFacts(BaseModel):
    """What the events table says about an event beside its record and manifest."""

    task_ids: list[str]
    package_files: int
    package_bytes: int
    archive: str
    archive_bytes: int
    archive_sha256: str


def tasks_table(tasks: list[Task]) -> pa.Table:
    """One row per task with exactly the public Task fields; JSON columns are `TASK_JSON_COLUMNS`."""
    return pa.Table.from_pylist([task_row(task) for task in tasks], schema=_task_schema())


def _task_schema() -> pa.Schema:
    fields = []
    for name, field in Task.model_fields.items():
        arrow_type = pa.string() if name in TASK_JSON_COLUMNS else _arrow_type(field.annotation)
        fields.append(pa.field(name, arrow_type, nullable=False))
    return pa.schema(fields)


def _arrow_type(annotation: Any) -> pa.DataType:
    if annotation is int:
        return pa.int64()
    if annotation is str:
        return pa.string()
    if typing.get_origin(annotation) is list and typing.get_args(annotation) == (str,):
        return pa.list_(pa.string())
    raise TypeError(f"no Arrow column type for Task field annotation {annotation!r}; add it to tables.py")


def events_table(
    events: dict[str, Event], manifests: dict[str, list[FileEntry]], facts: dict[str, EventFacts]
) -> pa.Table:
    """One row per event: id, record flattened one level (sorted), counts, archive, manifest, full record."""
    records = {event_id: _flatten(events[event_id].model_dump(mode="json")) for event_id in sorted(events)}
    record_columns = sorted({column for record in records.values() for column in record})
    rows = [
        {
            "event_id": event_id,
            **{column: record.get(column) for column in record_columns},
            **_event_facts(events[event_id], manifests[event_id], facts[event_id]),
        }
        for event_id, record in records.items()
    ]
    return pa.Table.from_pylist(_text_where_mixed(rows))


def _event_facts(event: Event, manifest: list[FileEntry], facts: EventFacts) -> dict[str, Any]:
    return {
        "task_count": len(facts.task_ids),
        "file_count": len(manifest),
        **facts.model_dump(),
        MANIFEST_COLUMN: [entry.model_dump(mode="json") for entry in manifest],
        EVENT_RECORD_COLUMN: to_json_cell(event.model_dump(mode="json")),
    }


def _flatten(record: dict[str, Any]) -> dict[str, Any]:
    """Nested dicts become `parent_child` columns (one level); deeper values and lists become JSON text."""
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            for child, inner in value.items():
                flat[f"{key}{FLATTENED_SEPARATOR}{child}"] = _scalar(inner)
        else:
            flat[key] = _scalar(value)
    return flat


def _scalar(value: Any) -> Any:
    return to_json_cell(value) if isinstance(value, dict | list) else value


def _text_where_mixed(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A record column whose value types differ across events becomes text, so Arrow can type it."""
    mixed = {column for column in rows[0] if len(_value_types(rows, column)) > 1} if rows else set()
    return [
        {column: _as_text(value) if column in mixed else value for column, value in row.items()}
        for row in rows
    ]


def _value_types(rows: list[dict[str, Any]], column: str) -> set[type]:
    return {type(row[column]) for row in rows if row[column] is not None}


def _as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return to_json_cell(value)


def ground_truth_table(hidden: list[HiddenRecord]) -> pa.Table:
    """The private table: one row per task (see `loaders.release.hidden_row` for the columns)."""
    rows = [hidden_row(task) for task in sorted(hidden, key=lambda task: task.task_id)]
    schema = pa.schema([pa.field(name, pa.string(), nullable=False) for name in GROUND_TRUTH_COLUMNS])
    return pa.Table.from_pylist(rows, schema=schema)


def write_parquet(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
