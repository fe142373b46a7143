"""`earthverse build`: source release → canonical layout → release gates → Hub folders, atomically.

The whole output is assembled in a hidden staging folder beside `out` and renamed into place only
when complete, so an interrupted or failed build never leaves a partial result that looks complete.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from dataset import layout
from dataset.gates import GateResult, TaskInputs, run_gates
from dataset.gt_runner import DEFAULT_TIMEOUT_S, GroundingResult, ground_task, network_isolated
from dataset.hub import build_hub
from dataset.package_audit import PackageAudit, audit_package
from dataset.report import ReleaseReport, make_report, render_markdown
from dataset.source import SourceRelease, SourceTaskRecord, open_source
from loaders.atomic import refuse_foreign_folder, staged_folder
from loaders.cache import file_sizes
from loaders.layout import package_dir, parse_files_csv
from loaders.models import Event, Task
from loaders.paper_results import PAPER_LEADERBOARD_FILE, from_source_models
from loaders.release import release_version

log = logging.getLogger("earthverse.build")

STAMP_NAME = "build_stamp.json"
CONTENTS_NAME = "build_contents.json"
"""Every file of the finished build with its size (see `build_contents`)."""
REPORT_JSON = "release_report.json"
REPORT_MD = "release_report.md"
CODE_PACKAGES = ("dataset", "loaders")
T = TypeVar("T")
R = TypeVar("R")


class BuildStamp(BaseModel):
    """Identity of a finished build: the same stamp means the same inputs and the same builder."""

    source_sha256: str
    builder: str
    timeout_s: float


class BuildResult(BaseModel):
    out: Path
    report: ReleaseReport
    up_to_date: bool
    seconds: float


def builder_fingerprint() -> str:
    """A hash of the code that decides what a build writes (dataset/ and loaders/)."""
    digest = hashlib.sha256()
    project = Path(__file__).resolve().parents[1]
    for package in CODE_PACKAGES:
        for path in sorted((project / package).rglob("*.py")):
            digest.update(path.relative_to(project).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def build_release(
    source: Path,
    out: Path,
    jobs: int = 2,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    force: bool = False,
    cache_dir: Path | None = None,
) -> BuildResult:
    """Build the canonical release at `out` from a source archive or folder; skip when up to date."""
    started = time.monotonic()
    release = open_source(source, cache_dir)
    records = release.records
    out = Path(out).resolve()
    stamp = BuildStamp(source_sha256=release.sha256, builder=builder_fingerprint(), timeout_s=timeout_s)
    if not force and _is_up_to_date(out, stamp):
        log.info("%s is up to date with %s", out, source)
        report = ReleaseReport.model_validate_json((out / REPORT_JSON).read_bytes())
        return BuildResult(out=out, report=report, up_to_date=True, seconds=time.monotonic() - started)
    refuse_foreign_folder(out, STAMP_NAME, "EarthVerse build")
    with staged_folder(out) as staging:
        report = _build_into(release, records, staging, stamp, jobs, timeout_s)
    return BuildResult(out=out, report=report, up_to_date=False, seconds=time.monotonic() - started)


def built_version(source: SourceRelease) -> str:
    """The `Release.version` that a build of `source` has, computed without building: the public texts the
    build writes (each task.json, each package's event.json and files.csv), read back as `open_release`
    reads them. A source without readable task records raises SourceError, as its build would."""
    records = source.records
    packages = {
        event_id: layout.package_metadata(record)
        for event_id, record in _first_record_per_event(records).items()
    }
    return release_version(
        [Task.model_validate_json(layout.task_files(record)["task.json"]) for record in records],
        {event_id: Event.model_validate_json(texts["event.json"]) for event_id, texts in packages.items()},
        {event_id: parse_files_csv(texts["files.csv"]) for event_id, texts in packages.items()},
    )


def _build_into(
    release: SourceRelease,
    records: list[SourceTaskRecord],
    staging: Path,
    stamp: BuildStamp,
    jobs: int,
    timeout_s: float,
) -> ReleaseReport:
    events = _first_record_per_event(records)
    _stage("layout", lambda: _write_layout(release, records, events, staging))
    audits = _stage(
        "package audit",
        lambda: dict(_parallel(jobs, events.values(), lambda record: _audit(staging, record))),
    )
    groundings = _stage(
        "executable grounding",
        lambda: dict(
            _parallel(
                jobs,
                records,
                lambda record: (
                    record.task_id,
                    ground_task(staging, record.event_id, record.task_id, audits[record.event_id], timeout_s),
                ),
            )
        ),
    )
    task_gates = {
        record.task_id: (
            record.event_id,
            _gates(record, staging, audits[record.event_id], groundings[record.task_id]),
        )
        for record in records
    }
    report = make_report(task_gates, release.sha256, stamp.builder, network_isolated())
    (staging / REPORT_JSON).write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    (staging / REPORT_MD).write_text(render_markdown(report), encoding="utf-8")
    _stage("hub folders", lambda: build_hub(staging, jobs=jobs))
    (staging / CONTENTS_NAME).write_text(
        json.dumps(build_contents(staging), indent=0) + "\n", encoding="utf-8"
    )
    (staging / STAMP_NAME).write_text(stamp.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return report


def build_contents(out: Path) -> dict[str, int]:
    """Every file of a build with its size, but the two files that describe the build itself: a build
    whose files differ from the listing it was finished with is not up to date, whatever its stamp."""
    return {name: size for name, size in file_sizes(out).items() if name not in (STAMP_NAME, CONTENTS_NAME)}


def _first_record_per_event(records: list[SourceTaskRecord]) -> dict[str, SourceTaskRecord]:
    events: dict[str, SourceTaskRecord] = {}
    for record in records:
        events.setdefault(record.event_id, record)
    return dict(sorted(events.items()))


def _write_layout(
    release: SourceRelease,
    records: list[SourceTaskRecord],
    events: dict[str, SourceTaskRecord],
    staging: Path,
) -> None:
    for record in events.values():
        layout.write_package(release, record, staging)
    for record in records:
        layout.write_task(record, staging)
    _write_paper_leaderboard(release, staging)


def _write_paper_leaderboard(release: SourceRelease, staging: Path) -> None:
    """The paper's reported figures travel with the release (public), when the source has them."""
    models = release.root / "paper_results" / "models.json"
    if not models.is_file():
        return
    text = from_source_models(models).model_dump_json(indent=2) + "\n"
    (staging / PAPER_LEADERBOARD_FILE).write_text(text, encoding="utf-8")


def _audit(staging: Path, record: SourceTaskRecord) -> tuple[str, PackageAudit]:
    root = package_dir(staging, record.event_id)
    return record.event_id, audit_package(root, record.event_id, record.manifest())


def _gates(
    record: SourceTaskRecord, staging: Path, audit: PackageAudit, grounding: GroundingResult
) -> dict[str, GateResult]:
    return run_gates(TaskInputs(record=record, out=staging, package=audit, grounding=grounding))


def _parallel(jobs: int, items: Iterable[T], function: Callable[[T], R]) -> list[R]:
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(function, items))


def _stage(name: str, work: Callable[[], T]) -> T:
    started = time.monotonic()
    result = work()
    log.info("%s: %.1f s", name, time.monotonic() - started)
    return result


def _is_up_to_date(out: Path, stamp: BuildStamp) -> bool:
    stamp_path = out / STAMP_NAME
    if not stamp_path.is_file() or not (out / REPORT_JSON).is_file():
        return False
    try:
        same_build = BuildStamp.model_validate_json(stamp_path.read_bytes()) == stamp
        return same_build and json.loads((out / CONTENTS_NAME).read_bytes()) == build_contents(out)
    except (ValueError, OSError):
        return False
