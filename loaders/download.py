"""Event package archives of a Hub release: names, checksums, safe extraction, one-event download.

The public Hub folder holds one `packages/CSX-NNN.zip` per event (entries `data/...` and
`metadata/...`) and a `checksums.sha256` over every public file. This module turns one archive into
a package folder: verified against the checksums, extracted without ever writing outside the
target, and swapped into place atomically so a folder that exists is always complete.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import (
    EntryNotFoundError,
    HTTPError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from loaders.atomic import ForeignFolderError, replace_folder
from loaders.cache import default_cache_dir, file_sha256
from loaders.models import EVENT_ID
from loaders.package import PACKAGE_AREAS

DEFAULT_REPO_ID = "earthverse/core"
CARD_FILE = "README.md"
TASKS_FILE = "tasks.parquet"
EVENTS_FILE = "events.parquet"
CHECKSUMS_FILE = "checksums.sha256"
PACKAGES_DIR = "packages"
GROUND_TRUTH_FILE = "ground_truth.parquet"
"""The file names of the public and private Hub folders, shared by their writer and their readers."""

EXTRACTING = "extracting"
"""A package marker's text while an extraction is under way: the folder is ours, but not complete."""
_CHECKSUM_LINE = re.compile(r"([0-9a-f]{64}) [ *](.+)")


class UnknownEventError(LookupError):
    """The release has no package for this event id."""


class ChecksumError(ValueError):
    """A file does not match the release's `checksums.sha256` (or is not listed in it)."""


class UnsafeArchiveError(ValueError):
    """A package archive holds an entry that may not be extracted (path escape, link, stray file)."""


@dataclass(frozen=True)
class HubRepo:
    """A dataset repo pinned to one commit, so every file read from it belongs to the same release."""

    repo_id: str
    commit: str
    endpoint: str | None = None
    token: str | bool | None = None

    def download(self, filename: str, folder: Path) -> Path:
        """Download one repo file into `folder` (a caller-owned scratch or cache folder)."""
        try:
            path = hf_hub_download(
                self.repo_id,
                filename,
                repo_type="dataset",
                revision=self.commit,
                local_dir=folder,
                endpoint=self.endpoint,
                token=self.token,
            )
        except EntryNotFoundError as error:
            raise FileNotFoundError(f"{self.repo_id}@{self.commit[:12]} has no file {filename}") from error
        except (HTTPError, OfflineModeIsEnabled) as error:
            raise ConnectionError(f"cannot download {filename} of {self.repo_id}: {error}") from error
        return Path(path)


def validate_event_id(event_id: str) -> str:
    """Return `event_id` if it has the CSX-NNN form, else raise ValueError naming it."""
    if not isinstance(event_id, str) or not EVENT_ID.fullmatch(event_id):
        raise ValueError(f"event id must look like CSX-NNN (three digits, e.g. CSX-001), got {event_id!r}")
    return event_id


def archive_name(event_id: str) -> str:
    """The repo path of an event's archive: `packages/CSX-NNN.zip`."""
    return f"{PACKAGES_DIR}/{validate_event_id(event_id)}.zip"


def hub_endpoint(endpoint: str | None = None) -> str | None:
    """The Hub endpoint: the argument, else HF_ENDPOINT as set now (huggingface_hub reads it at import)."""
    return endpoint or os.environ.get("HF_ENDPOINT") or None


def format_checksums(digests: Mapping[str, str]) -> str:
    """`sha256sum` format (`<hex>  <path>`), one line per file, sorted by path."""
    return "".join(f"{digests[name]}  {name}\n" for name in sorted(digests))


def parse_checksums(text: str, source: str = CHECKSUMS_FILE) -> dict[str, str]:
    """Read `sha256sum` lines into {path: hex}; a malformed line raises ChecksumError naming it."""
    digests: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _CHECKSUM_LINE.fullmatch(line.strip())
        if match is None:
            raise ChecksumError(f"{source}:{number}: not a sha256sum line: {line[:80]!r}")
        digests[match.group(2)] = match.group(1)
    return digests


def verify_file(path: Path, name: str, digests: Mapping[str, str]) -> None:
    """Raise ChecksumError unless `path` (published as `name`) has the sha256 the checksums list."""
    expected = digests.get(name)
    if expected is None:
        raise ChecksumError(f"{name} is not listed in {CHECKSUMS_FILE}")
    actual = file_sha256(path)
    if actual != expected:
        raise ChecksumError(
            f"{name}: sha256 {actual[:16]}… does not match {CHECKSUMS_FILE} ({expected[:16]}…)"
        )


def event_ids_in(digests: Mapping[str, str]) -> list[str]:
    """The event ids whose archives the checksums list."""
    pattern = re.compile(rf"{PACKAGES_DIR}/({EVENT_ID.pattern})\.zip")
    return sorted(match.group(1) for name in digests if (match := pattern.fullmatch(name)))


def require_listed(event_id: str, digests: Mapping[str, str], release: str) -> str:
    """The archive name of `event_id`, or UnknownEventError when the release has no such package."""
    name = archive_name(event_id)
    if name in digests:
        return name
    known = event_ids_in(digests)
    span = f"{len(known)} events, {known[0]} … {known[-1]}" if known else "no events"
    raise UnknownEventError(f"{release} has no package for {event_id} ({span})")


def default_package_cache() -> Path:
    return default_cache_dir() / "packages"


def cached_package_dir(cache: Path, event_id: str, sha256: str) -> Path:
    """Content-addressed extraction folder: the same archive bytes always map to the same folder."""
    return cache / f"{event_id}-{sha256[:16]}"


def extract_package(archive: Path, target: Path, sha256: str) -> Path:
    """Make `target` the package folder of `archive`, whose sha256 must be `sha256`; return `target`.

    Reuses `target` when it was completed from the same archive. Otherwise verifies the archive,
    extracts it into a staging sibling (rejecting `..`, absolute paths, links and entries outside
    data/ and metadata/) and renames it into place; a completion marker beside `target` is written
    last, with every extracted file's size and modification time. On any error nothing is left at
    `target` that looks complete. A `target` that holds anything but an earlier extraction is never
    replaced (ForeignFolderError).
    """
    if is_complete(target, sha256):
        return target
    actual = file_sha256(archive)
    if actual != sha256:
        raise ChecksumError(
            f"{archive.name}: sha256 {actual[:16]}… does not match {CHECKSUMS_FILE} ({sha256[:16]}…)"
        )
    _refuse_foreign(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.extracting-", dir=target.parent))
    try:
        _extract_all(archive, staging)
        _write_marker(target, EXTRACTING)
        replace_folder(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _write_marker(target, json.dumps({"sha256": sha256, "files": _file_stamps(target)}, sort_keys=True))
    return target


def is_complete(target: Path, sha256: str) -> bool:
    """Whether `target` holds the extraction of the archive `sha256` exactly as it was extracted: a file
    deleted, changed or added since makes it incomplete, to be extracted again."""
    marker = _marker(target)
    if not target.is_dir() or not marker.is_file():
        return False
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False  # an extraction under way, or a marker of an older form: extract again
    return (
        isinstance(recorded, dict)
        and recorded.get("sha256") == sha256
        and (recorded.get("files") == _file_stamps(target))
    )


def _file_stamps(folder: Path) -> dict[str, list[int]]:
    """[size, modification time in ns] of every file under `folder`, by posix path relative to it. Not
    `cache.file_stats`: links are not followed here, so a link put into a package counts as a change."""
    stamps: dict[str, list[int]] = {}
    for parent, _, names in os.walk(folder, followlinks=False):
        for name in names:
            path = Path(parent) / name
            status = path.lstat()
            stamps[path.relative_to(folder).as_posix()] = [status.st_size, status.st_mtime_ns]
    return stamps


def _marker(target: Path) -> Path:
    # Beside the package, not inside it: a package folder holds only data/ and metadata/.
    return target.parent / f".{target.name}.complete"


def _refuse_foreign(target: Path) -> None:
    """Only an earlier extraction (its marker beside it) or an empty folder may be replaced."""
    if not target.exists() or _marker(target).is_file():
        return
    if not target.is_dir() or any(target.iterdir()):
        raise ForeignFolderError(
            f"{target}: exists and is not a package extracted by earthverse; choose another local_dir"
        )


def _write_marker(target: Path, text: str) -> None:
    marker = _marker(target)
    scratch = marker.with_name(marker.name + ".tmp")
    scratch.write_text(text + "\n", encoding="utf-8")
    scratch.replace(marker)


def _extract_all(archive: Path, destination: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as bundle:
            members = [info for info in bundle.infolist() if not info.is_dir()]
            for info in members:
                _check_entry(archive, info)
            for info in members:
                path = destination.joinpath(*PurePosixPath(info.filename).parts)
                path.parent.mkdir(parents=True, exist_ok=True)
                with bundle.open(info) as source, path.open("wb") as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
    except zipfile.BadZipFile as error:
        raise UnsafeArchiveError(f"{archive.name}: not a readable zip archive ({error})") from error


def check_entry_name(name: str) -> str | None:
    """Why a zip entry name may not be extracted into a package, or None when it is safe."""
    if "\\" in name or "\x00" in name:
        return "backslash or NUL in the name"
    posix = PurePosixPath(name)
    if posix.is_absolute() or re.match(r"^[A-Za-z]:", name):
        return "absolute path"
    if ".." in posix.parts:
        return "'..' component"
    if not posix.parts or posix.parts[0] not in PACKAGE_AREAS:
        return f"outside {' and '.join(area + '/' for area in PACKAGE_AREAS)}"
    if any(part.startswith(".") for part in posix.parts):
        return "hidden path component"
    return None


def _check_entry(archive: Path, info: zipfile.ZipInfo) -> None:
    problem = check_entry_name(info.filename)
    if problem is None and stat.S_ISLNK(info.external_attr >> 16):
        problem = "symbolic link"
    if problem is not None:
        raise UnsafeArchiveError(f"{archive.name}: refusing entry {info.filename!r}: {problem}")


def resolve_repo(
    repo_id: str, revision: str | None = None, endpoint: str | None = None, token: str | bool | None = None
) -> HubRepo:
    """Pin `repo_id@revision` (default: main) to its commit; a missing repo or revision raises LookupError."""
    endpoint = hub_endpoint(endpoint)
    try:
        info = HfApi(endpoint=endpoint, token=token).repo_info(
            repo_id, repo_type="dataset", revision=revision
        )
    except RepositoryNotFoundError as error:
        raise LookupError(
            f"dataset repo {repo_id!r} not found (or not accessible) at {endpoint or 'the Hub'}"
        ) from error
    except RevisionNotFoundError as error:
        raise LookupError(f"dataset repo {repo_id!r} has no revision {revision!r}") from error
    except (HTTPError, OfflineModeIsEnabled) as error:
        raise ConnectionError(f"cannot reach {endpoint or 'the Hub'} for {repo_id!r}: {error}") from error
    if not info.sha:
        raise LookupError(f"dataset repo {repo_id!r}: the Hub returned no commit for revision {revision!r}")
    return HubRepo(repo_id=repo_id, commit=info.sha, endpoint=endpoint, token=token)


def fetch_checksums(repo: HubRepo, folder: Path) -> dict[str, str]:
    path = repo.download(CHECKSUMS_FILE, folder)
    return parse_checksums(path.read_text(encoding="utf-8"), f"{repo.repo_id}/{CHECKSUMS_FILE}")


def fetch_package(repo: HubRepo, name: str, sha256: str, target: Path) -> Path:
    """Download the archive `name`, verify it against `sha256` and extract it to `target`; return `target`.

    The archive is downloaded into scratch space beside `target` and removed afterwards.
    """
    if is_complete(target, sha256):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{target.name}.download-", dir=target.parent) as scratch:
        try:
            archive = repo.download(name, Path(scratch))
        except FileNotFoundError as error:
            raise UnknownEventError(
                f"{repo.repo_id}@{repo.commit[:12]} lists {name} but does not serve it"
            ) from error
        return extract_package(archive, target, sha256)


def download_event_package(
    event_id: str,
    repo_id: str = DEFAULT_REPO_ID,
    revision: str | None = None,
    local_dir: str | Path | None = None,
    *,
    endpoint: str | None = None,
    token: str | bool | None = None,
) -> Path:
    """Download one event's package (`packages/<event_id>.zip`, not the whole dataset) and return its folder.

    The archive is checked against the release's `checksums.sha256` from the same commit, extracted
    safely and atomically into `local_dir/<event_id>` (default: the package cache) and reused on
    later calls. Raises ValueError for a malformed id, UnknownEventError for an event the release
    does not have, ChecksumError for an archive that does not match, LookupError for a missing repo,
    ForeignFolderError when `local_dir/<event_id>` holds files that are not an extracted package.
    """
    validate_event_id(event_id)
    repo = resolve_repo(repo_id, revision, endpoint, token)
    with tempfile.TemporaryDirectory(prefix="earthverse-checksums-") as scratch:
        digests = fetch_checksums(repo, Path(scratch))
    name = require_listed(event_id, digests, f"{repo.repo_id}@{repo.commit[:12]}")
    sha256 = digests[name]
    if local_dir is not None:
        target = Path(local_dir) / event_id
    else:
        target = cached_package_dir(default_package_cache(), event_id, sha256)
    return fetch_package(repo, name, sha256, target)
