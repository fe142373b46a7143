"""Atomic outputs: a folder or file appears complete or not at all, and a previous one survives a failure."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path


class ForeignFolderError(ValueError):
    """The target exists but is not an earlier output of the same command; it is never replaced."""


def refuse_foreign_folder(target: Path, marker: str, what: str) -> None:
    """Raise unless `target` is missing, empty, or holds `marker` (an earlier `what`): `--out ~` must
    never wipe a home folder."""
    if not target.exists():
        return
    if not target.is_dir():
        raise ForeignFolderError(f"{target}: exists and is not a folder")
    if any(target.iterdir()) and not (target / marker).is_file():
        raise ForeignFolderError(f"{target}: not empty and not an earlier {what}; choose another folder")


@contextmanager
def staged_folder(target: Path) -> Iterator[Path]:
    """Yield a hidden staging folder beside `target`; when the block succeeds, swap it into `target`
    (the previous content is removed only after the swap); when it fails, `target` is untouched."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.staging-", dir=target.parent))
    try:
        yield staging
        replace_folder(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def replace_folder(staged: Path, target: Path) -> None:
    """Rename `staged` onto `target`; an earlier `target` is moved aside first and deleted after."""
    if not target.exists():
        staged.rename(target)
        return
    previous = Path(tempfile.mkdtemp(prefix=f".{target.name}.previous-", dir=target.parent))
    target.rename(previous / target.name)
    staged.rename(target)
    shutil.rmtree(previous, ignore_errors=True)


def write_text_atomic(path: Path, chunks: Iterable[str]) -> None:
    """Write `chunks` to `path` through a temporary file renamed into place: readers never see a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.writelines(chunks)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
