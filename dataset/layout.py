"""The canonical release layout (ARCHITECTURE.md): where every file of a built release lives."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

from dataset.source import SourceRelease, SourceTaskRecord
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

SOURCES_CSV_COLUMNS = ("source_id", "source_name", "source_type", "url", "data_category", "file_count")
"""The package's source registry; some ground truths cite `metadata/sources.csv` as provenance."""

PUBLIC_TASK_FILES = ("question_en.md", "task.json")
HIDDEN_TASK_FILES = ("solution_en.md", "compute_gt.py", "computed_gt.json", "rubric.json")


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
            {
                **{column: row.get(column, "") for column in FILES_CSV_COLUMNS},
                "data_category": entry.category,
                "url": entry.source_url,
                "file_status": entry.status,
            }
        )
    return buffer.getvalue()


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


def write_package(source: SourceRelease, record: SourceTaskRecord, out: Path) -> None:
    """Copy one event's evidence and write its metadata (event record and manifest)."""
    target = package_dir(out, record.event_id)
    evidence = source.package_dir(record.event_id) / "data"
    if evidence.is_dir():
        shutil.copytree(evidence, target / "data", copy_function=shutil.copyfile, symlinks=True)
    # A missing package still gets its folders: the assembly gate reports each file, the build goes on.
    (target / "data").mkdir(parents=True, exist_ok=True)
    metadata = target / "metadata"
    metadata.mkdir(parents=True)
    (metadata / "event.json").write_text(dump_json(record.event), encoding="utf-8")
    manifest = record.manifest()
    (metadata / "files.csv").write_text(files_csv(manifest), encoding="utf-8")
    (metadata / "sources.csv").write_text(sources_csv(manifest), encoding="utf-8")


def write_task(record: SourceTaskRecord, out: Path) -> None:
    """Write one task folder: the public prompt and metadata beside the hidden scoring material."""
    folder = task_dir(out, record.event_id, record.task_id)
    folder.mkdir(parents=True)
    files = {
        "question_en.md": record.question,
        "task.json": dump_json(record.public_task().model_dump()),
        "solution_en.md": record.solution,
        "compute_gt.py": record.compute_gt_py,
        "computed_gt.json": dump_json(record.ground_truth),
        "rubric.json": dump_json(record.ground_truth.get("rubric")),
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
