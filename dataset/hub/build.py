"""`build_hub`: canonical layout → `hub/public/` (card, parquet, archives, checksums) + `hub/private/`."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dataset.hub.archives import write_package_archive
from dataset.hub.card import CardFacts, render_card, render_private_readme, schema_rows
from dataset.hub.tables import EventFacts, events_table, ground_truth_table, tasks_table, write_parquet
from loaders import layout
from loaders.atomic import replace_folder
from loaders.cache import file_sha256, file_sizes
from loaders.download import (
    CARD_FILE,
    CHECKSUMS_FILE,
    EVENTS_FILE,
    GROUND_TRUTH_FILE,
    TASKS_FILE,
    archive_name,
    format_checksums,
)
from loaders.package import EventPackage
from loaders.paper_results import PAPER_LEADERBOARD_FILE
from loaders.release import GROUND_TRUTH_COLUMNS, HiddenRecord, Release, open_release, read_hidden_records

HUB_DIR = "hub"
PUBLIC_DIR = "public"
PRIVATE_DIR = "private"
REPORT_FILE = "release_report.json"


class HubError(ValueError):
    """The layout cannot be turned into Hub folders; the message names what is wrong."""


class HubSummary(BaseModel):
    """What `build_hub` wrote."""

    public_dir: Path
    private_dir: Path
    version: str
    tasks: int
    events: int
    archives: int
    public_files: dict[str, int]
    """Every public file (folder-relative path) and its size in bytes."""
    private_files: dict[str, int]
    seconds: float


def build_hub(out: Path, jobs: int = 2) -> HubSummary:
    """Write `out/hub/public/` and `out/hub/private/` from the canonical layout at `out`.

    Each folder is assembled in a hidden sibling and renamed into place, replacing an earlier one,
    only when complete. `jobs` threads write the package archives. Two builds of one layout give
    identical public bytes.
    """
    started = time.monotonic()
    out = Path(out)
    release = open_release(out)
    hidden = read_hidden_records(out)
    hub = out / HUB_DIR
    hub.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".building-", dir=hub) as scratch:
        public = Path(scratch) / PUBLIC_DIR
        private = Path(scratch) / PRIVATE_DIR
        _write_public(out, release, public, jobs)
        _write_private(list(hidden.values()), private)
        summary = HubSummary(
            public_dir=hub / PUBLIC_DIR,
            private_dir=hub / PRIVATE_DIR,
            version=release.version,
            tasks=len(release.tasks),
            events=len(release.events),
            archives=len(release.events),
            public_files=file_sizes(public),
            private_files=file_sizes(private),
            seconds=0.0,
        )
        replace_folder(public, hub / PUBLIC_DIR)
        replace_folder(private, hub / PRIVATE_DIR)
    return summary.model_copy(update={"seconds": round(time.monotonic() - started, 2)})


def _write_public(out: Path, release: Release, public: Path, jobs: int) -> None:
    facts = _write_archives(out, release, public, jobs)
    known = {fact.archive: fact.archive_sha256 for fact in facts.values()}
    tasks = tasks_table(release.tasks)
    events = events_table(release.events, {eid: release.manifest(eid) for eid in release.events}, facts)
    write_parquet(tasks, public / TASKS_FILE)
    write_parquet(events, public / EVENTS_FILE)
    card = CardFacts(
        version=release.version,
        tasks=release.tasks,
        events=release.events,
        archives=len(facts),
        tasks_schema=schema_rows(tasks.schema),
        events_schema=schema_rows(events.schema),
        report_totals=_report_totals(out),
    )
    (public / CARD_FILE).write_text(render_card(card), encoding="utf-8")
    if (out / PAPER_LEADERBOARD_FILE).is_file():
        shutil.copyfile(out / PAPER_LEADERBOARD_FILE, public / PAPER_LEADERBOARD_FILE)
    digests = {name: known.get(name) or file_sha256(public / name) for name in file_sizes(public)}
    (public / CHECKSUMS_FILE).write_text(format_checksums(digests), encoding="utf-8")


def _write_archives(out: Path, release: Release, public: Path, jobs: int) -> dict[str, EventFacts]:
    task_ids: dict[str, list[str]] = {event_id: [] for event_id in release.events}
    for task in release.tasks:  # open_release has refused a task without its package
        task_ids[task.event_id].append(task.task_id)

    def archive(event_id: str) -> tuple[str, EventFacts]:
        root = layout.package_dir(out, event_id)
        name = archive_name(event_id)
        write_package_archive(root, public / name)
        data = EventPackage(root, event_id).list_files("data")
        return event_id, EventFacts(
            task_ids=task_ids[event_id],
            package_files=len(data),
            package_bytes=sum((root / path).stat().st_size for path in data),
            archive=name,
            archive_bytes=(public / name).stat().st_size,
            archive_sha256=file_sha256(public / name),
        )

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return dict(pool.map(archive, sorted(release.events)))


def _report_totals(out: Path) -> dict[str, Any] | None:
    path = out / REPORT_FILE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))["totals"]
    except (ValueError, KeyError, TypeError) as error:
        raise HubError(f"{path}: no readable `totals` ({error})") from error


def _write_private(hidden: list[HiddenRecord], private: Path) -> None:
    write_parquet(ground_truth_table(hidden), private / GROUND_TRUTH_FILE)
    readme = render_private_readme(len(hidden), list(GROUND_TRUTH_COLUMNS))
    (private / CARD_FILE).write_text(readme, encoding="utf-8")
