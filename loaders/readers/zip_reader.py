"""ZIP archives: the entry listing (names, sizes, dates); nothing is extracted."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from loaders.readers.registry import Reading, Sample, SniffOrder, register

MAX_ENTRIES = 50_000
"""Archives declaring more entries are not opened: their central directory alone could exhaust memory."""
MAX_LISTED = 1_000
"""Entries listed in `text` and `structure`; totals always cover the whole archive."""

_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
_END_RECORD = b"PK\x05\x06"
_END_RECORD_SEARCH = 22 + 65_535  # the fixed record plus the longest archive comment
_ZIP64_COUNT = 0xFFFF


def looks_like_zip(sample: Sample) -> bool:
    return sample.head.startswith(_SIGNATURES)


@register("zip", extensions=(".zip",), sniff=looks_like_zip, sniff_order=SniffOrder.SIGNATURE)
def read_zip(path: Path) -> Reading:
    """List a ZIP archive's entries (at most MAX_LISTED); over MAX_ENTRIES entries only the count."""
    declared = _declared_entry_count(path)
    if declared is not None and declared > MAX_ENTRIES:
        return _too_many(declared)
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    entries = [_entry(info) for info in infos[:MAX_LISTED]]
    total_size = sum(info.file_size for info in infos)
    header = f"ZIP archive: {len(infos)} entries, {total_size} bytes uncompressed"
    lines = [f"{e['name']}\t{e['size']} bytes\t{e['modified']}" for e in entries]
    if len(infos) > MAX_LISTED:
        lines.append(f"... {len(infos) - MAX_LISTED} more entries not listed")
    return Reading(
        format="zip",
        text="\n".join([header, *lines]),
        structure={"entries": entries, "total_entries": len(infos), "total_uncompressed_bytes": total_size},
        metadata={"listed_entries": len(entries)},
    )


def _entry(info: zipfile.ZipInfo) -> dict[str, Any]:
    year, month, day, hour, minute, second = info.date_time
    return {
        "name": info.filename,
        "size": info.file_size,
        "compressed_size": info.compress_size,
        "is_dir": info.is_dir(),
        "modified": f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}",
    }


def _declared_entry_count(path: Path) -> int | None:
    """The entry count of the end-of-central-directory record; None if absent or ZIP64 (count unknown)."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        handle.seek(max(0, size - _END_RECORD_SEARCH))
        tail = handle.read()
    at = tail.rfind(_END_RECORD)
    if at < 0 or len(tail) < at + 12:
        return None
    count = int.from_bytes(tail[at + 10 : at + 12], "little")
    return None if count == _ZIP64_COUNT else count


def _too_many(count: int) -> Reading:
    return Reading(
        format="zip",
        text=f"ZIP archive: {count} entries, more than the {MAX_ENTRIES} this reader lists",
        structure={"entries": [], "total_entries": count, "total_uncompressed_bytes": None},
        metadata={"listed_entries": 0},
    )
