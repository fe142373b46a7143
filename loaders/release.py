"""Open an EarthVerse release, in any of its three forms, as tasks, events, manifests and packages.

Forms: a built release folder (`<out>` with packages/ and tasks/), its public Hub folder
(`<out>/hub/public`) or a Hub dataset repo id (`earthverse/core`). `Release` only ever exposes
public material; the hidden ground truth is read by the separate `open_ground_truth`.

This module also owns the row formats of the Hub parquet files (public and private), so that
their writer (`dataset.hub`) and their readers share one definition.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar

import pyarrow.parquet as pq
from pydantic import BaseModel, ValidationError

from loaders import layout
from loaders.cache import default_cache_dir
from loaders.download import (
    CARD_FILE,
    CHECKSUMS_FILE,
    EVENTS_FILE,
    GROUND_TRUTH_FILE,
    TASKS_FILE,
    HubRepo,
    cached_package_dir,
    extract_package,
    fetch_package,
    parse_checksums,
    require_listed,
    resolve_repo,
    verify_file,
)
from loaders.models import Event, FileEntry, HiddenTask, Task
from loaders.package import EventPackage
from loaders.paper_results import PAPER_LEADERBOARD_FILE, PaperLeaderboard, read_paper_leaderboard

Row = TypeVar("Row")

ReleaseKind = Literal["layout", "hub_folder", "hub_repo"]

TASK_JSON_COLUMNS = ("category_counts",)
"""Task fields stored as JSON strings in tasks.parquet (a dict with varying keys has no clean Arrow type)."""
EVENT_RECORD_COLUMN = "event_json"
MANIFEST_COLUMN = "manifest"
GROUND_TRUTH_COLUMNS = (
    "task_id",
    "event_id",
    "primary_gt",
    "tolerances",
    "key_values",
    "rubric",
    "evaluation_mode",
    "provenance",
    "solution",
    "compute_gt",
    "difficulty_rationale",
    "dimension_rationale",
    "ground_truth",
)
"""The private ground_truth.parquet columns, all text; JSON-valued ones hold compact JSON."""
_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


REVIEW_NOTES_FILE = "review_notes.json"


class ReleaseError(ValueError):
    """A release that cannot be opened or read; the message names the file and what is wrong."""


def to_json_cell(value: Any) -> str:
    """The compact JSON of a parquet cell: sorted keys, UTF-8."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def task_row(task: Task) -> dict[str, Any]:
    row = task.model_dump()
    return {**row, **{column: to_json_cell(row[column]) for column in TASK_JSON_COLUMNS}}


def task_from_row(row: dict[str, Any]) -> Task:
    return Task.model_validate({**row, **{column: json.loads(row[column]) for column in TASK_JSON_COLUMNS}})


def event_from_row(row: dict[str, Any]) -> Event:
    return Event.model_validate_json(row[EVENT_RECORD_COLUMN])


def manifest_from_row(row: dict[str, Any]) -> list[FileEntry]:
    return [FileEntry.model_validate(entry) for entry in row[MANIFEST_COLUMN]]


class HiddenRecord(BaseModel):
    """A task's hidden material as stored: the ground truth exactly as the release wrote it (a dict).

    Kept raw so that writing the private folder never drops or rejects a key; `to_hidden` validates.
    """

    task_id: str
    event_id: str
    ground_truth: dict[str, Any]
    solution: str
    compute_gt_py: str
    difficulty_rationale: str = ""
    dimension_rationale: str = ""

    def to_hidden(self) -> HiddenTask:
        try:
            return HiddenTask.model_validate({**self.model_dump(), "ground_truth": self.ground_truth})
        except ValidationError as error:
            raise ReleaseError(
                f"{self.task_id}: the ground truth does not fit the data model: {problem(error)}"
            ) from error


def hidden_row(record: HiddenRecord) -> dict[str, Any]:
    """One row of the private ground_truth.parquet (columns `GROUND_TRUTH_COLUMNS`)."""
    truth = record.ground_truth
    tolerances = {
        "numeric_tolerances": truth.get("numeric_tolerances", {}),
        "tolerances": truth.get("tolerances", {}),
    }
    return {
        "task_id": record.task_id,
        "event_id": record.event_id,
        "primary_gt": to_json_cell(truth.get("primary_gt")),
        "tolerances": to_json_cell(tolerances),
        "key_values": to_json_cell(truth.get("key_values", {})),
        "rubric": to_json_cell(truth.get("rubric")),
        "evaluation_mode": str(truth.get("evaluation_mode") or truth.get("eval_mode") or ""),
        "provenance": to_json_cell(truth.get("provenance", {})),
        "solution": record.solution,
        "compute_gt": record.compute_gt_py,
        "difficulty_rationale": record.difficulty_rationale,
        "dimension_rationale": record.dimension_rationale,
        "ground_truth": to_json_cell(truth),
    }


def hidden_from_row(row: dict[str, Any]) -> HiddenRecord:
    return HiddenRecord(
        task_id=row["task_id"],
        event_id=row["event_id"],
        ground_truth=json.loads(row["ground_truth"]),
        solution=row["solution"],
        compute_gt_py=row["compute_gt"],
        difficulty_rationale=row.get("difficulty_rationale") or "",
        dimension_rationale=row.get("dimension_rationale") or "",
    )


def read_manifest(path: Path) -> list[FileEntry]:
    """A package's `metadata/files.csv` as FileEntry records (columns outside the model kept as extras)."""
    try:
        return layout.parse_files_csv(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, csv.Error) as error:
        raise ReleaseError(f"{path}: not a readable manifest: {error}") from error


def release_version(
    tasks: Iterable[Task], events: dict[str, Event], manifests: dict[str, list[FileEntry]]
) -> str:
    """A content identity of the public release, the same for every form of it: `ev-<16 hex>`."""
    content = {
        "tasks": [task.model_dump(mode="json") for task in tasks],
        "events": {key: event.model_dump(mode="json") for key, event in sorted(events.items())},
        "manifests": {
            key: [entry.model_dump(mode="json") for entry in entries]
            for key, entries in sorted(manifests.items())
        },
    }
    return "ev-" + hashlib.sha256(to_json_cell(content).encode("utf-8")).hexdigest()[:16]


class Release:
    """The public side of one release: tasks, event records, manifests and event packages."""

    def __init__(
        self,
        location: str,
        kind: ReleaseKind,
        tasks: list[Task],
        events: dict[str, Event],
        manifests: dict[str, list[FileEntry]],
        package_root: Callable[[str], Path],
        paper_leaderboard: PaperLeaderboard | None = None,
    ) -> None:
        _require_consistent(location, tasks, events, manifests)
        self.location = location
        self.paper_leaderboard = paper_leaderboard
        """The paper's reported figures, when the release carries them."""
        self.kind: ReleaseKind = kind
        self.tasks = sorted(tasks, key=lambda task: task.task_id)
        self.events = dict(sorted(events.items()))
        self._manifests = manifests
        self._package_root = package_root
        self._tasks_by_id = {task.task_id: task for task in self.tasks}
        self.version = release_version(self.tasks, self.events, manifests)

    def __repr__(self) -> str:
        return f"Release({self.location!r}, {self.kind}, {len(self.tasks)} tasks, {len(self.events)} events)"

    def task(self, task_id: str) -> Task:
        """The task with this id; KeyError naming it when the release has none."""
        try:
            return self._tasks_by_id[task_id]
        except KeyError:
            raise KeyError(f"{self.location} has no task {task_id!r}") from None

    def manifest(self, event_id: str) -> list[FileEntry]:
        """The package manifest of an event (a copy); KeyError for an unknown event."""
        self._require_event(event_id)
        return list(self._manifests.get(event_id, []))

    def package(self, event_id: str) -> EventPackage:
        """The event's package folder (hub forms: extracted from its verified archive once, then cached)."""
        self._require_event(event_id)
        return EventPackage(self._package_root(event_id), event_id)

    def _require_event(self, event_id: str) -> None:
        if event_id not in self.events:
            raise KeyError(f"{self.location} has no event {event_id!r}")


def _require_consistent(
    location: str, tasks: list[Task], events: dict[str, Event], manifests: dict[str, list[FileEntry]]
) -> None:
    """A release whose parts disagree (a half-copied folder, a mislabelled package) is refused, naming
    the first disagreement of each kind."""
    problems = [] if tasks else ["it holds no task"]
    repeated = sorted(
        task_id for task_id, count in Counter(task.task_id for task in tasks).items() if count > 1
    )
    if repeated:
        problems.append(f"task(s) {', '.join(repeated[:3])} appear more than once")
    homeless = sorted({task.event_id for task in tasks} - set(events))
    if homeless:
        problems.append(f"tasks of {', '.join(homeless[:3])} have no event package")
    mislabelled = [f"{key} holds {event.event_id}" for key, event in events.items() if event.event_id != key]
    if mislabelled:
        problems.append(f"event records disagree with their package: {', '.join(mislabelled[:3])}")
    without_manifest = sorted(set(events) - set(manifests))
    if without_manifest:
        problems.append(f"no manifest for {', '.join(without_manifest[:3])}")
    if problems:
        raise ReleaseError(f"{location}: inconsistent release: {'; '.join(problems)}")


def open_release(
    path_or_repo_id: str | Path,
    revision: str | None = None,
    *,
    cache_dir: Path | None = None,
    endpoint: str | None = None,
    token: str | bool | None = None,
) -> Release:
    """Open a built release folder, a public Hub folder, or a Hub dataset repo id (pinned to `revision`).

    Hub forms verify tasks.parquet and events.parquet against `checksums.sha256`; packages are
    extracted (or, for a repo, downloaded) on first use into `<cache_dir>/packages/` (default cache
    dir: `loaders.cache.default_cache_dir()`); a repo's small files go to `<cache_dir>/hub/`.
    """
    path = Path(path_or_repo_id)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if path.exists():
        if revision is not None:
            raise ReleaseError(
                f"{path}: a revision ({revision!r}) applies only to Hub repos, not local folders"
            )
        return _open_local(path, cache)
    if _is_repo_id(path_or_repo_id):
        return _open_repo(_resolve(path_or_repo_id, revision, endpoint, token), cache)
    raise ReleaseError(f"{path_or_repo_id!r}: no such folder, and not a Hub repo id (owner/name)")


def _resolve(
    repo_id: str | Path, revision: str | None, endpoint: str | None, token: str | bool | None
) -> HubRepo:
    """The Hub repo `repo_id` names; a ReleaseError that also says no such folder exists, since a missing
    relative path (`runs/build`) looks like a repo id too."""
    try:
        return resolve_repo(str(repo_id), revision, endpoint, token)
    except (LookupError, ConnectionError) as error:
        raise ReleaseError(f"{str(repo_id)!r}: no such folder; as a Hub repo id: {error}") from error


def _is_repo_id(value: str | Path) -> bool:
    return isinstance(value, str) and _REPO_ID.fullmatch(value) is not None


def _snapshot_dir(cache: Path, repo: HubRepo) -> Path:
    return cache / "hub" / repo.repo_id.replace("/", "--") / repo.commit


def _open_local(path: Path, cache: Path) -> Release:
    if (path / "packages").is_dir() and (path / "tasks").is_dir():
        return _open_layout(path)
    if (path / TASKS_FILE).is_file() and (path / EVENTS_FILE).is_file():
        return _open_hub_folder(path, cache)
    raise ReleaseError(
        f"{path}: not a release: expected packages/ and tasks/ (a built release) "
        f"or {TASKS_FILE} and {EVENTS_FILE} (a public Hub folder)"
    )


def _open_layout(out: Path) -> Release:
    tasks = [_read_model(Task, path) for path in sorted((out / "tasks").glob("*/*/task.json"))]
    event_ids = sorted(folder.name for folder in (out / "packages").iterdir() if folder.is_dir())
    events = {
        eid: _read_model(Event, layout.package_dir(out, eid) / "metadata" / "event.json") for eid in event_ids
    }
    manifests = {
        eid: read_manifest(layout.package_dir(out, eid) / "metadata" / "files.csv") for eid in event_ids
    }
    return Release(
        str(out),
        "layout",
        tasks,
        events,
        manifests,
        lambda event_id: layout.package_dir(out, event_id),
        _paper_leaderboard(out / PAPER_LEADERBOARD_FILE),
    )


def _open_hub_folder(folder: Path, cache: Path) -> Release:
    digests = _read_checksums(folder / CHECKSUMS_FILE)

    def package_root(event_id: str) -> Path:
        name = require_listed(event_id, digests, str(folder))
        sha256 = digests[name]
        return extract_package(
            folder / name, cached_package_dir(cache / "packages", event_id, sha256), sha256
        )

    return _from_tables(str(folder), "hub_folder", folder, digests, package_root)


def _open_repo(repo: HubRepo, cache: Path) -> Release:
    snapshot = _snapshot_dir(cache, repo)
    for name in (CHECKSUMS_FILE, CARD_FILE, TASKS_FILE, EVENTS_FILE):
        repo.download(name, snapshot)
    digests = _read_checksums(snapshot / CHECKSUMS_FILE)
    if PAPER_LEADERBOARD_FILE in digests:
        repo.download(PAPER_LEADERBOARD_FILE, snapshot)
    location = f"{repo.repo_id}@{repo.commit[:12]}"

    def package_root(event_id: str) -> Path:
        name = require_listed(event_id, digests, location)
        sha256 = digests[name]
        return fetch_package(repo, name, sha256, cached_package_dir(cache / "packages", event_id, sha256))

    return _from_tables(location, "hub_repo", snapshot, digests, package_root)


def _from_tables(
    location: str,
    kind: ReleaseKind,
    folder: Path,
    digests: dict[str, str],
    package_root: Callable[[str], Path],
) -> Release:
    for name in (TASKS_FILE, EVENTS_FILE, CARD_FILE):
        if name != CARD_FILE or (folder / name).is_file():
            verify_file(folder / name, name, digests)
    tasks = _rows_as(folder / TASKS_FILE, task_from_row)
    event_rows = _rows_as(
        folder / EVENTS_FILE, lambda row: (row["event_id"], event_from_row(row), manifest_from_row(row))
    )
    events = {event_id: event for event_id, event, _ in event_rows}
    manifests = {event_id: manifest for event_id, _, manifest in event_rows}
    paper = folder / PAPER_LEADERBOARD_FILE
    if paper.is_file():
        verify_file(paper, PAPER_LEADERBOARD_FILE, digests)
    return Release(location, kind, tasks, events, manifests, package_root, _paper_leaderboard(paper))


def _paper_leaderboard(path: Path) -> PaperLeaderboard | None:
    return read_paper_leaderboard(path) if path.is_file() else None


def _read_checksums(path: Path) -> dict[str, str]:
    if not path.is_file():
        raise ReleaseError(f"{path}: missing; a Hub folder must list the sha256 of its files")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ReleaseError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from error
    return parse_checksums(text, str(path))


def _rows_as(path: Path, convert: Callable[[dict[str, Any]], Row]) -> list[Row]:
    """Every row of the parquet file at `path`, converted; a row that does not convert (a missing
    column, a bad JSON cell, a record that does not fit the model) is a ReleaseError naming file and row."""
    converted = []
    for number, row in enumerate(_read_rows(path), start=1):
        try:
            converted.append(convert(row))
        except (KeyError, TypeError, ValueError) as error:  # ValidationError, JSONDecodeError: ValueErrors
            raise ReleaseError(f"{path}: row {number}: {problem(error)}") from error
    return converted


def problem(error: Exception) -> str:
    """What is wrong, without the offending values (they may be hidden ground truth): a model's failing
    fields and why, a missing column, or the error's own message."""
    if isinstance(error, ValidationError):
        return "; ".join(
            f"{'.'.join(map(str, item['loc'])) or 'record'}: {item['msg']}" for item in error.errors()
        )
    if isinstance(error, KeyError):
        return f"no column {error.args[0]!r}"
    if isinstance(error, json.JSONDecodeError):
        return f"a cell is not JSON ({error.msg}, position {error.pos})"
    return f"{type(error).__name__}: {error}"


def _read_rows(path: Path) -> list[dict[str, Any]]:
    try:
        return pq.read_table(path).to_pylist()
    except (OSError, ValueError) as error:
        raise ReleaseError(f"{path}: not a readable parquet file: {error}") from error


def _read_model(model: type[Task] | type[Event], path: Path) -> Any:
    try:
        return model.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as error:
        raise ReleaseError(f"{path}: not a valid {model.__name__} record: {error}") from error


def open_ground_truth(
    path_or_repo_id: str | Path,
    revision: str | None = None,
    *,
    cache_dir: Path | None = None,
    endpoint: str | None = None,
    token: str | bool | None = None,
) -> dict[str, HiddenTask]:
    """The hidden side of a release, {task_id: HiddenTask}: PRIVATE material, for scoring only.

    Reads a built release folder's hidden task files, a private Hub folder (or its
    ground_truth.parquet), or a private Hub dataset repo (pinned to `revision`). A ground truth that
    does not fit the data model raises ReleaseError naming the task.
    """
    records = read_hidden_records(
        path_or_repo_id, revision, cache_dir=cache_dir, endpoint=endpoint, token=token
    )
    return {task_id: record.to_hidden() for task_id, record in records.items()}


def read_hidden_records(
    path_or_repo_id: str | Path,
    revision: str | None = None,
    *,
    cache_dir: Path | None = None,
    endpoint: str | None = None,
    token: str | bool | None = None,
) -> dict[str, HiddenRecord]:
    """Like `open_ground_truth`, with each ground truth left as the raw dict the release stores."""
    path = Path(path_or_repo_id)
    if path.is_file():
        return _hidden_from_parquet(path)
    if (path / "tasks").is_dir():
        return _hidden_from_layout(path)
    if (path / GROUND_TRUTH_FILE).is_file():
        return _hidden_from_parquet(path / GROUND_TRUTH_FILE)
    if path.exists() or not _is_repo_id(path_or_repo_id):
        raise ReleaseError(
            f"{path_or_repo_id!r}: expected a built release folder, a private Hub folder with "
            f"{GROUND_TRUTH_FILE}, or a private Hub repo id"
        )
    repo = _resolve(path_or_repo_id, revision, endpoint, token)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return _hidden_from_parquet(repo.download(GROUND_TRUTH_FILE, _snapshot_dir(cache, repo)))


def _hidden_from_parquet(path: Path) -> dict[str, HiddenRecord]:
    records = _rows_as(path, hidden_from_row)
    return {record.task_id: record for record in records}


def _hidden_from_layout(out: Path) -> dict[str, HiddenRecord]:
    records: dict[str, HiddenRecord] = {}
    for task_json in sorted((out / "tasks").glob("*/*/task.json")):
        task = _read_model(Task, task_json)
        records[task.task_id] = _hidden_record(layout.task_dir(out, task.event_id, task.task_id), task)
    return records


def _hidden_record(folder: Path, task: Task) -> HiddenRecord:
    notes_path = folder / REVIEW_NOTES_FILE
    try:
        notes = json.loads(notes_path.read_text(encoding="utf-8")) if notes_path.is_file() else {}
        return HiddenRecord(
            task_id=task.task_id,
            event_id=task.event_id,
            ground_truth=json.loads((folder / "computed_gt.json").read_text(encoding="utf-8")),
            solution=(folder / "solution_en.md").read_text(encoding="utf-8"),
            compute_gt_py=(folder / "compute_gt.py").read_text(encoding="utf-8"),
            difficulty_rationale=notes.get("difficulty_rationale", ""),
            dimension_rationale=notes.get("dimension_rationale", ""),
        )
    except (OSError, ValueError) as error:
        raise ReleaseError(f"{folder}: hidden task files unreadable: {error}") from error
