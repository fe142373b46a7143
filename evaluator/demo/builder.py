"""The embedded demo: an invented event package (CSX-999, the fictional Lindenvale river flood) with two
tasks and their ground truth, written as a minimal release layout that `open_release` and
`open_ground_truth` read. Nothing here is copied from the real release; every file says it is a DEMO.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

from loaders import layout
from loaders.models import Event, FileEntry, Task

DEMO_ROOT = Path(__file__).resolve().parent
DEMO_EVENT = "CSX-999"
TASK_FILES = ("question_en.md", "computed_gt.json", "solution_en.md", "compute_gt.py")
RUBRIC_FILE = "rubric.json"


def build_demo_release(out: Path) -> Path:
    """Write the demo release layout into `out` (which must not exist yet, or be empty); return `out`."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"{out}: not empty; the demo release needs a fresh folder")
    event = Event.model_validate_json((DEMO_ROOT / "event.json").read_text(encoding="utf-8"))
    package = layout.package_dir(out, DEMO_EVENT)
    shutil.copytree(DEMO_ROOT / "package" / "data", package / "data")
    manifest = _manifest(package)
    metadata = package / "metadata"
    metadata.mkdir(parents=True)
    (metadata / "event.json").write_text(layout.dump_json(event.model_dump()), encoding="utf-8")
    (metadata / "files.csv").write_text(layout.files_csv(manifest), encoding="utf-8")
    (metadata / "sources.csv").write_text(layout.sources_csv(manifest), encoding="utf-8")
    for folder in sorted((DEMO_ROOT / "tasks").iterdir()):
        _write_task(out, folder, event, manifest)
    return out


def _manifest(package: Path) -> list[FileEntry]:
    entries = []
    for number, path in enumerate(sorted((package / "data").rglob("*.*")), 1):
        relative = path.relative_to(package).as_posix()
        content = path.read_bytes()
        category = path.parent.name
        entries.append(
            FileEntry(
                file_id=f"F{number:04d}",
                relative_path=relative,
                category=category,
                layer_name=f"demo_{category}",
                source_id=f"S{number:03d}",
                source_name="EarthVerse demo (invented)",
                source_type="demo",
                bytes=len(content),
                sha256_16=hashlib.sha256(content).hexdigest()[:16],
                status="demo",
                preview_type="text",
                mime_type="text/plain",
                format=path.suffix.lstrip("."),
            )
        )
    return entries


def _write_task(out: Path, source: Path, event: Event, manifest: list[FileEntry]) -> None:
    task_id = source.name
    question = (source / "question_en.md").read_text(encoding="utf-8")
    task = Task(
        **json.loads((source / "meta.json").read_text(encoding="utf-8")),
        task_id=task_id,
        event_id=DEMO_EVENT,
        event_name=event.event_name,
        hazard_family=event.hazard_family,
        hazard_label=event.hazard_label,
        region=event.region,
        scale=event.scale,
        file_count=len(manifest),
        category_counts=dict(Counter(entry.category for entry in manifest)),
        question=question,
    )
    target = layout.task_dir(out, DEMO_EVENT, task_id)
    target.mkdir(parents=True)
    for name in TASK_FILES:
        shutil.copyfile(source / name, target / name)
    (target / "task.json").write_text(layout.dump_json(task.model_dump()), encoding="utf-8")
    rubric = json.loads((source / "computed_gt.json").read_text(encoding="utf-8"))["rubric"]
    (target / RUBRIC_FILE).write_text(layout.dump_json(rubric), encoding="utf-8")
