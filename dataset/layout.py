"""Writing the canonical layout (see `loaders.layout`) from a source release."""

from __future__ import annotations

import shutil
from pathlib import Path

from dataset.source import SourceRelease, SourceTaskRecord
from loaders.layout import dump_json, files_csv, package_dir, sources_csv, task_dir


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
    for name, text in package_metadata(record).items():
        (metadata / name).write_text(text, encoding="utf-8")


def package_metadata(record: SourceTaskRecord) -> dict[str, str]:
    """The texts of a package's `metadata/` files by name: event record, manifest and source registry."""
    manifest = record.manifest()
    return {
        "event.json": dump_json(record.event),
        "files.csv": files_csv(manifest),
        "sources.csv": sources_csv(manifest),
    }


def write_task(record: SourceTaskRecord, out: Path) -> None:
    """Write one task folder: the public prompt and metadata beside the hidden scoring material."""
    folder = task_dir(out, record.event_id, record.task_id)
    folder.mkdir(parents=True)
    for name, text in task_files(record).items():
        (folder / name).write_text(text, encoding="utf-8")


def task_files(record: SourceTaskRecord) -> dict[str, str]:
    """The texts of a task folder by name: the public prompt and task.json, then the hidden files."""
    return {
        "question_en.md": record.question,
        "task.json": dump_json(record.public_task().model_dump()),
        "solution_en.md": record.solution,
        "compute_gt.py": record.compute_gt_py,
        "computed_gt.json": dump_json(record.ground_truth),
        "rubric.json": dump_json(record.ground_truth.get("rubric")),
        "review_notes.json": dump_json(
            {
                "difficulty_rationale": record.difficulty_rationale,
                "dimension_rationale": record.dimension_rationale,
            }
        ),
    }
