"""Where EarthVerse keeps what it unpacks and downloads, and the one file hash it uses."""

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


def file_sha256(path: Path) -> str:
    """The sha256 hex digest of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
