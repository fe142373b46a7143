"""Deterministic event package archives: the same package always gives the same zip bytes."""

from __future__ import annotations

import zipfile
from pathlib import Path

from loaders.package import EventPackage

ARCHIVE_DATE = (1980, 1, 1, 0, 0, 0)
"""The zip epoch: no build time leaks into the archive bytes."""
FILE_MODE = 0o100644
COMPRESS_LEVEL = 6
UNIX = 3


def write_package_archive(package_root: Path, destination: Path) -> list[str]:
    """Write `destination` as a zip of the package's files; return the entry names.

    The entries are exactly the files an agent can list in the package (`EventPackage.list_files`).

    Entries are sorted, dated 1980-01-01, mode 0644, deflated at level 6, with no folder entries,
    so two builds of one package are byte-identical (given the same zlib).
    """
    package = EventPackage(package_root)
    entries = package.list_files()
    destination.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(destination, "w") as bundle:
        for name in entries:
            bundle.writestr(_entry_info(name), package.read_bytes(name), compresslevel=COMPRESS_LEVEL)
    return entries


def _entry_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=ARCHIVE_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = UNIX
    info.external_attr = FILE_MODE << 16
    return info
