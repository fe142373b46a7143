"""The source release: find it, unpack it once into a cache keyed by its sha256, read its task records."""

from __future__ import annotations

import hashlib
import lzma
import os
import shutil
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError, model_validator

from loaders.cache import default_cache_dir, file_sha256, file_stats
from loaders.models import Event, FileEntry, GroundTruth, HiddenTask, Task
from loaders.release import problem

SOURCE_DIRNAME = "earthverse-source"
COMPLETE_MARKER = ".complete"
ARCHIVE_ENV = "EARTHVERSE_SOURCE_ARCHIVE"
DEVELOPMENT_ARCHIVE = Path("shared") / SOURCE_DIRNAME / "earthverse-source-v1.tar.xz"
"""Where the development layout keeps the archive, relative to the folder above the project."""


class SourceError(ValueError):
    """The source release is missing, corrupt or malformed; the message names what and where."""


class SourceTaskRecord(Task):
    """One `tasks/CSX-NNN_QK.json` of the source release: the public task fields, the hidden ones, the
    event record and the package manifest."""

    difficulty_rationale: str = ""
    dimension_rationale: str = ""
    solution: str
    ground_truth: dict[str, Any]
    compute_gt_py: str
    event: dict[str, Any]
    event_files: list[dict[str, Any]]

    @model_validator(mode="after")
    def _parts_fit_the_data_model(self) -> SourceTaskRecord:
        """Checked on reading, not on writing: a release that builds must also load and score."""
        self.hidden()
        self.event_record()
        self.manifest()
        return self

    def public_task(self) -> Task:
        return Task.model_validate(self.model_dump(include=set(Task.model_fields)))

    def event_record(self) -> Event:
        return Event.model_validate(self.event)

    def manifest(self) -> list[FileEntry]:
        return [FileEntry.model_validate(entry) for entry in self.event_files]

    def hidden(self) -> HiddenTask:
        return HiddenTask(
            task_id=self.task_id,
            event_id=self.event_id,
            ground_truth=GroundTruth.model_validate(self.ground_truth),
            solution=self.solution,
            compute_gt_py=self.compute_gt_py,
            difficulty_rationale=self.difficulty_rationale,
            dimension_rationale=self.dimension_rationale,
        )


@dataclass(frozen=True)
class SourceRelease:
    """An unpacked source release folder (`tasks/`, `packages/`, `trajectories/`, `paper_results/`)."""

    root: Path
    sha256: str

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    @property
    def trajectories_dir(self) -> Path:
        """The recorded runs: `<system_id>/<task_id>.json`."""
        return self.root / "trajectories"

    def package_dir(self, event_id: str) -> Path:
        return self.root / "packages" / event_id

    @cached_property
    def records(self) -> list[SourceTaskRecord]:
        """Every task record, sorted by task id; a malformed record raises SourceError naming its file."""
        paths = sorted(self.tasks_dir.glob("*.json"))
        if not paths:
            raise SourceError(f"{self.tasks_dir}: no task records (*.json) found")
        return [_read_record(path) for path in paths]

    def event_ids(self) -> list[str]:
        return sorted({record.event_id for record in self.records})


def _read_record(path: Path) -> SourceTaskRecord:
    try:
        record = SourceTaskRecord.model_validate_json(path.read_bytes())
    except ValidationError as error:
        raise SourceError(f"{path}: not a valid task record: {problem(error)}") from error
    if path.stem != record.task_id:
        raise SourceError(f"{path}: file name does not match its task_id {record.task_id!r}")
    return record


def default_archive() -> Path:
    """The source archive tests and benchmarks use: $EARTHVERSE_SOURCE_ARCHIVE, else the development
    layout's `../shared/earthverse-source/earthverse-source-v1.tar.xz` beside the project."""
    configured = os.environ.get(ARCHIVE_ENV)
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[2] / DEVELOPMENT_ARCHIVE


def open_source(source: Path, cache_dir: Path | None = None) -> SourceRelease:
    """Open a source release given as its `.tar.xz` archive or as an unpacked folder.

    An archive is unpacked once into `<cache>/source-<sha256[:16]>/`; later calls reuse it.
    """
    source = Path(source)
    if not source.exists():
        raise SourceError(f"{source}: no such archive or folder")
    if source.is_dir():
        return _open_folder(source)
    return _open_archive(source, cache_dir or default_cache_dir())


def recorded_runs_dir(path: Path, cache_dir: Path | None = None) -> Path:
    """The folder of recorded runs (`<system_id>/<task_id>.json`) that `path` names: such a folder
    itself, or the source release (archive or unpacked folder) that holds one."""
    path = Path(path)
    is_source = path.is_file() or (path / "tasks").is_dir() or (path / SOURCE_DIRNAME).is_dir()
    return open_source(path, cache_dir).trajectories_dir if is_source else path


def _open_folder(folder: Path, sha256: str | None = None) -> SourceRelease:
    root = folder / SOURCE_DIRNAME if (folder / SOURCE_DIRNAME).is_dir() else folder
    for required in ("tasks", "packages"):
        if not (root / required).is_dir():
            raise SourceError(f"{root}: not a source release (no {required}/ folder)")
    return SourceRelease(root=root, sha256=sha256 or _folder_fingerprint(root))


def _folder_fingerprint(root: Path) -> str:
    """A cheap identity for an unpacked folder: names, sizes and mtimes of its files."""
    digest = hashlib.sha256()
    for name, status in file_stats(root).items():
        digest.update(f"{name}\0{status.st_size}\0{status.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _open_archive(archive: Path, cache_dir: Path) -> SourceRelease:
    sha256 = file_sha256(archive)
    target = cache_dir / f"source-{sha256[:16]}"
    if not (target / COMPLETE_MARKER).exists():
        _unpack(archive, target)
    return _open_folder(target, sha256)


def _unpack(archive: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        with tarfile.open(archive, "r:*") as tar:
            tar.extractall(staging, filter="data")
            _read_to_the_end(tar)
        (staging / COMPLETE_MARKER).write_text("unpacked\n")
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    except (tarfile.TarError, EOFError, OSError, ValueError, lzma.LZMAError, zlib.error) as error:
        raise SourceError(
            f"{archive}: cannot unpack the source archive ({type(error).__name__}: {error})"
        ) from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _read_to_the_end(tar: tarfile.TarFile) -> None:
    """Read the compressed stream past the tar's end marker: its checksum sits at the very end, which
    extraction never reaches, so a corrupt archive would otherwise unpack silently into wrong bytes."""
    stream = tar.fileobj
    if stream is None:
        return
    while stream.read(1 << 20):
        pass
