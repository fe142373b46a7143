"""A small source release made from real records of the full one, for tests that break it on purpose."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dataset.source import SourceRelease

Record = dict[str, Any]


def make_mini_source(
    full: SourceRelease,
    target: Path,
    event_ids: tuple[str, ...] = ("CSX-001",),
    edit: Callable[[Record], None] | None = None,
) -> Path:
    """Copy the tasks and packages of `event_ids` into `target`; `edit` may change each task record."""
    (target / "tasks").mkdir(parents=True)
    for event_id in event_ids:
        shutil.copytree(full.package_dir(event_id), target / "packages" / event_id)
        for path in sorted(full.tasks_dir.glob(f"{event_id}_Q*.json")):
            record = json.loads(path.read_text(encoding="utf-8"))
            if edit:
                edit(record)
            (target / "tasks" / path.name).write_text(json.dumps(record), encoding="utf-8")
    return target
