"""The canonical release layout (ARCHITECTURE.md): where every file of a built release lives, and the
formats of the package metadata files. `dataset.layout` writes it; the loaders read it."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from loaders.models import FileEntry

FILES_CSV_COLUMNS = (
    "file_id",
    "relative_path",
    "data_category",
    "layer_name",
    "source_id",
    "source_name",
    "source_type",
    "url",
    "bytes",
    "sha256_16",
    "file_status",
    "preview_type",
    "mime_type",
    "format",
    "repository_path",
)
"""The manifest columns; `data_category`, `url` and `file_status` are the names the GT programs read."""
CSV_COLUMN_TO_FIELD = {"data_category": "category", "url": "source_url", "file_status": "status"}
"""files.csv column → FileEntry field, where the two differ."""

SOURCES_CSV_COLUMNS = ("source_id", "source_name", "source_type", "url", "data_category", "file_count")
"""The package's source registry; some ground truths cite `metadata/sources.csv` as provenance."""

HIDDEN_TASK_FILES = (
    "solution_en.md",
    "compute_gt.py",
    "computed_gt.json",
    "rubric.json",
    "review_notes.json",
)
"""The private files of a task folder; `review_notes.json` holds the reviewers' two rationales."""


def package_dir(out: Path, event_id: str) -> Path:
    return out / "packages" / event_id


def task_dir(out: Path, event_id: str, task_id: str) -> Path:
    return out / "tasks" / event_id / task_id


def dump_json(value: Any) -> str:
    """The one JSON serialization of the release: sorted keys, two-space indent, UTF-8, final newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def files_csv(manifest: list[FileEntry]) -> str:
    """Render a package manifest as `metadata/files.csv`."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FILES_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for entry in manifest:
        row = entry.model_dump()
        writer.writerow(
            {column: row.get(CSV_COLUMN_TO_FIELD.get(column, column), "") for column in FILES_CSV_COLUMNS}
        )
    return buffer.getvalue()


def parse_files_csv(text: str) -> list[FileEntry]:
    """Parse `metadata/files.csv` text back into FileEntry records (unknown columns kept as extras)."""
    rows = csv.DictReader(io.StringIO(text))
    return [
        FileEntry.model_validate({CSV_COLUMN_TO_FIELD.get(key, key): value for key, value in row.items()})
        for row in rows
    ]


def sources_csv(manifest: list[FileEntry]) -> str:
    """Render the package's source registry (one row per source id) as `metadata/sources.csv`."""
    rows: dict[str, dict[str, object]] = {}
    for entry in manifest:
        row = rows.setdefault(
            entry.source_id,
            {
                "source_id": entry.source_id,
                "source_name": entry.source_name,
                "source_type": entry.source_type,
                "url": entry.source_url,
                "data_category": entry.category,
                "file_count": 0,
            },
        )
        row["file_count"] = int(row["file_count"]) + 1
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SOURCES_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows[source_id] for source_id in sorted(rows))
    return buffer.getvalue()
