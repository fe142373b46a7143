"""Audit of one built event package against its manifest: what is present, withheld, missing or unsafe."""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, Field

from loaders.models import FileEntry
from loaders.readers import ReaderError, read_file

WITHHELD_FORMATS = {
    "tiff": "GeoTIFF raster original, not included in the source release",
    "pdf": "PDF original, not included in the source release",
}
"""Manifest formats the source release documents as left out; any other absent file is a real gap."""

FileStatus = Literal["present", "withheld", "missing", "unreadable", "unsafe_path"]


class FileAudit(BaseModel):
    relative_path: str
    status: FileStatus
    reason: str = ""
    format_read: str | None = None
    size: int | None = Field(default=None, description="Bytes on disk, for a file that is there.")
    bytes_match: bool | None = None
    hash_match: bool | None = None


class PackageAudit(BaseModel):
    """Per-file verdicts for one event package, plus files on disk that the manifest does not list."""

    event_id: str
    files: list[FileAudit]
    unlisted: list[str] = Field(default_factory=list)

    def by_path(self) -> dict[str, FileAudit]:
        return {audit.relative_path: audit for audit in self.files}

    def count(self, status: FileStatus) -> int:
        return sum(1 for audit in self.files if audit.status == status)


def audit_package(root: Path, event_id: str, manifest: list[FileEntry]) -> PackageAudit:
    """Check each manifest entry of the package at `root`: present and readable, or withheld with a reason."""
    files = [_audit_entry(root, entry) for entry in manifest]
    listed = {entry.relative_path for entry in manifest}
    on_disk = sorted(
        path.relative_to(root).as_posix()
        for path in (root / "data").rglob("*")
        if path.is_file() or path.is_symlink()
    )
    return PackageAudit(
        event_id=event_id, files=files, unlisted=[path for path in on_disk if path not in listed]
    )


def _audit_entry(root: Path, entry: FileEntry) -> FileAudit:
    path = entry.relative_path
    unsafe = _unsafe_reason(root, path)
    if unsafe:
        return FileAudit(relative_path=path, status="unsafe_path", reason=unsafe)
    target = root / path
    if not target.is_file():
        withheld = WITHHELD_FORMATS.get(entry.format)
        if withheld:
            return FileAudit(relative_path=path, status="withheld", reason=withheld)
        return FileAudit(
            relative_path=path, status="missing", reason=f"listed as {entry.format}, absent from the package"
        )
    content = target.read_bytes()
    agreement = {
        "size": len(content),
        "bytes_match": len(content) == entry.bytes,
        "hash_match": hashlib.sha256(content).hexdigest()[:16] == entry.sha256_16,
    }
    try:
        reading = read_file(target)
    except ReaderError as error:
        origin = (
            " (same size as the manifest entry: the release's original is damaged too)"
            if agreement["bytes_match"]
            else ""
        )
        return FileAudit(relative_path=path, status="unreadable", reason=f"{error}{origin}", **agreement)
    return FileAudit(relative_path=path, status="present", format_read=reading.format, **agreement)


def _unsafe_reason(root: Path, relative_path: str) -> str:
    pure = PurePosixPath(relative_path)
    if pure.is_absolute() or ".." in pure.parts:
        return "manifest path escapes the package"
    if not pure.parts or pure.parts[0] != "data":
        return "manifest path is not under data/"
    target = root / relative_path
    if target.is_symlink() and not target.resolve().is_relative_to(root.resolve()):
        return "file is a link that leaves the package"
    return ""
