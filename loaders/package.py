"""An event package on disk, with safe resolution of agent- and program-supplied paths.

A package folder holds `data/` (the evidence) and `metadata/` (event record and manifest). Every path
that reaches the filesystem goes through `EventPackage.resolve`, which only ever returns a real path
inside one of those two areas.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import BinaryIO

from loaders.models import REPOSITORY_PACKAGE_PREFIX

PACKAGE_AREAS = ("data", "metadata")
"""The top-level folders of a package that paths may reach."""

_DRIVE = re.compile(r"^[A-Za-z]:")


class PackagePathError(ValueError):
    """A path that may not be resolved inside a package; the message names the path and the reason."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"unsafe package path {path!r}: {reason}")
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[type[PackagePathError], tuple[str, str]]:
        # Rebuilt from the constructor's arguments, so the error survives pickling across processes.
        return (type(self), (self.path, self.reason))


class EventPackage:
    """One event package folder (`root/data/...`, `root/metadata/...`)."""

    def __init__(self, root: Path, event_id: str | None = None) -> None:
        # Resolved once so that containment checks compare real paths on both sides.
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"event package root is not a directory: {root}")
        self.event_id = event_id or self.root.name

    def __repr__(self) -> str:
        return f"EventPackage({self.event_id!r}, root={str(self.root)!r})"

    def relative(self, path: str) -> str:
        """The canonical package-relative posix form (`data/...` or `metadata/...`) of a safe path.

        Raises PackagePathError for any path `resolve` rejects; does not require the file to exist.
        """
        self.resolve(path)
        return "/".join(self._safe_parts(path))

    def lexical(self, path: str) -> str:
        """The canonical package-relative form of `path` from its text alone, touching no file (fast, for
        bookkeeping such as which files a trace opened); PackagePathError for a lexically unsafe path.
        Use `resolve` before reading: only it follows links."""
        # the parts are non-empty names without `.` or `..` (`_lexical_parts`): joined, they are posix form
        return "/".join(self._safe_parts(path))

    def resolve(self, path: str) -> Path:
        """The real filesystem path of `path` inside this package's `data/` or `metadata/`.

        Accepts package-relative paths, the repository form (`REPOSITORY_PACKAGE_PREFIX` + this event
        id + `/data/...`) and a leading `./`. Raises PackagePathError for `..`, absolute paths, NUL
        bytes, hidden segments, another package's repository path, paths outside the two areas, and
        symlinks whose target leaves them. The path need not exist.
        """
        parts = self._safe_parts(path)
        try:
            real = self.root.joinpath(*parts).resolve()
        except (RuntimeError, OSError) as exc:  # symlink loops
            raise PackagePathError(path, f"it cannot be resolved ({exc})") from exc
        self._check_contained(path, real)
        return real

    def exists(self, path: str) -> bool:
        """Whether a safe path names an existing file or folder; unsafe paths raise PackagePathError."""
        return self.resolve(path).exists()

    def list_files(self, subdir: str = "", max_files: int | None = None) -> list[str]:
        """Sorted package-relative posix paths of the files under `subdir` ("" = the whole package).

        Hidden files and folders are skipped, folder links are not followed, and file links whose
        target leaves the package areas are left out. At most `max_files` paths when given.
        Raises FileNotFoundError / NotADirectoryError when `subdir` is missing or a file.
        """
        if max_files is not None and max_files < 0:
            raise ValueError(f"max_files must be >= 0, got {max_files}")
        files = sorted(path for top in self._listing_tops(subdir) for path in self._walk(top))
        return files if max_files is None else files[:max_files]

    def read_bytes(self, path: str) -> bytes:
        """The content of a package file (after `resolve`)."""
        return self.resolve(path).read_bytes()

    def open_file(self, path: str) -> BinaryIO:
        """A binary, read-only handle on a package file (after `resolve`); the caller closes it."""
        return self.resolve(path).open("rb")

    def _safe_parts(self, path: str) -> tuple[str, ...]:
        parts = self._strip_repository_prefix(path, _lexical_parts(path))
        if parts[0] not in PACKAGE_AREAS:
            raise PackagePathError(
                path, f"paths must lie under {' or '.join(a + '/' for a in PACKAGE_AREAS)}"
            )
        return parts

    def _strip_repository_prefix(self, path: str, parts: tuple[str, ...]) -> tuple[str, ...]:
        prefix = tuple(REPOSITORY_PACKAGE_PREFIX.strip("/").split("/"))
        if parts[: len(prefix)] != prefix:
            return parts
        rest = parts[len(prefix) :]
        if not rest:
            raise PackagePathError(path, "repository path names no package")
        if rest[0] != self.event_id:
            raise PackagePathError(path, f"repository path is for package {rest[0]}, not {self.event_id}")
        if len(rest) == 1:
            raise PackagePathError(path, "repository path names no file inside the package")
        return rest[1:]

    def _check_contained(self, path: str, real: Path) -> None:
        if not real.is_relative_to(self.root):
            raise PackagePathError(path, "it resolves (through a link) outside the package")
        parts = real.relative_to(self.root).parts
        if not parts or parts[0] not in PACKAGE_AREAS:
            raise PackagePathError(path, "it resolves (through a link) outside data/ and metadata/")
        if any(part.startswith(".") for part in parts):
            raise PackagePathError(path, "it resolves (through a link) to a hidden file")

    def _listing_tops(self, subdir: str) -> list[Path]:
        if not subdir.strip() or subdir.strip() in (".", "./"):
            return [self.root / area for area in PACKAGE_AREAS if (self.root / area).is_dir()]
        top = self.resolve(subdir)
        if not top.exists():
            raise FileNotFoundError(f"no such folder in package {self.event_id}: {subdir}")
        if not top.is_dir():
            raise NotADirectoryError(f"not a folder in package {self.event_id}: {subdir}")
        return [top]

    def _walk(self, top: Path) -> list[str]:
        found: list[str] = []
        for folder, dirnames, filenames in os.walk(top, followlinks=False):
            dirnames[:] = [name for name in dirnames if not name.startswith(".")]
            for name in filenames:
                relative = self._visible_file(Path(folder) / name)
                if relative is not None:
                    found.append(relative)
        return found

    def _visible_file(self, path: Path) -> str | None:
        """The package-relative path of a listed file, or None if hidden or a link leaving the areas."""
        relative = path.relative_to(self.root).as_posix()
        try:
            target = self.resolve(relative)
        except PackagePathError:
            return None
        return relative if target.is_file() else None


def _lexical_parts(path: str) -> tuple[str, ...]:
    """The non-empty segments of `path` after the checks that need no filesystem."""
    if not isinstance(path, str):
        raise PackagePathError(repr(path), "a path must be a string")
    if "\x00" in path:
        raise PackagePathError(path, "NUL byte in path")
    text = path.strip().replace("\\", "/")
    if not text:
        raise PackagePathError(path, "empty path")
    if text.startswith("/") or _DRIVE.match(text):
        raise PackagePathError(path, "absolute paths are not allowed")
    while text.startswith("./"):
        text = text[2:]
    parts = tuple(part for part in text.split("/") if part)
    if ".." in parts:
        raise PackagePathError(path, "'..' components are not allowed")
    hidden = [part for part in parts if part.startswith(".")]
    if hidden:
        raise PackagePathError(path, f"hidden component {hidden[0]!r} is not allowed")
    if not parts:
        raise PackagePathError(path, "empty path")
    return parts
