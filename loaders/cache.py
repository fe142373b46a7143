"""Where EarthVerse keeps what it unpacks and downloads, the one file hash it uses, and the one listing
of a folder's files that its up-to-date checks compare."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def default_cache_dir() -> Path:
    """Unpacked releases and extracted packages live here: $EARTHVERSE_CACHE, else the project's
    git-ignored `.cache/`."""
    configured = os.environ.get("EARTHVERSE_CACHE")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[1] / ".cache"


def file_stats(folder: Path) -> dict[str, os.stat_result]:
    """The status of every file under `folder` (links followed, as `Path.is_file` does), by posix path
    relative to it, in path order."""
    return {
        path.relative_to(folder).as_posix(): path.stat()
        for path in sorted(Path(folder).rglob("*"))
        if path.is_file()
    }


def file_sizes(folder: Path) -> dict[str, int]:
    """The size of every file under `folder`, as `file_stats` lists them."""
    return {name: status.st_size for name, status in file_stats(folder).items()}


def file_sha256(path: Path) -> str:
    """The sha256 hex digest of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
