"""Choosing a reader for a file and running it: explicit format, content signature, extension, fallback."""

from __future__ import annotations

from pathlib import Path

from loaders.readers.registry import (
    ReaderError,
    ReaderSpec,
    Reading,
    Sample,
    get_reader,
    reader_for_extension,
)
from loaders.readers.sniff import GENERIC_FORMATS, sniff_sample

MANIFEST_FORMAT_READERS: dict[str, str] = {
    "json": "json",
    "html": "html",
    "tiff": "geotiff",
    "image": "image",
    "text": "text",
    "xml": "xml",
    "archive": "zip",
    "pdf": "pdf",
    "binary": "binary",
}
"""The reader for each `format` label of the release manifest (labels are often wrong; see read_file)."""


def read_file(path: Path, format: str | None = None) -> Reading:
    """Read a file with the reader `format` if given, else with the one its content and name call for.

    Raises FileNotFoundError/IsADirectoryError for a missing path or a folder, ValueError for an
    unknown `format`, and ReaderError when the file is corrupt: the explicit reader failed, or every
    candidate did (a failing candidate falls through to the next). Files that no content signature
    claims always read, as text or binary, whatever their extension says.
    `metadata` gains `size_bytes` and `detected_by` (explicit, content or extension).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"a folder, not a file: {path}")
    if format is not None:
        return _read_as(get_reader(format), path, "explicit")
    by_extension = reader_for_extension(path)
    errors: list[ReaderError] = []
    for name in _candidates(sniff_sample(Sample.of(path)), by_extension):
        try:
            return _read_as(get_reader(name), path, "extension" if name == by_extension else "content")
        except ReaderError as exc:
            errors.append(exc)
    if len(errors) == 1:
        raise errors[0]
    tried = " or ".join(error.format for error in errors)
    raise ReaderError(path, tried, "; ".join(f"{error.format}: {error.reason}" for error in errors))


def _candidates(sniffed: str, by_extension: str | None) -> list[str]:
    # Precedence: content signature > extension > generic text/binary (only when no signature matched).
    ordered = [by_extension, sniffed] if sniffed in GENERIC_FORMATS else [sniffed, by_extension]
    return list(dict.fromkeys(name for name in ordered if name is not None))


def _read_as(spec: ReaderSpec, path: Path, detected_by: str) -> Reading:
    try:
        reading = spec.read(path)
    except ReaderError:
        raise
    except Exception as exc:  # third-party parsers raise assorted exception types on malformed input
        # Parsers quote the path they were given; only the file name may reach an agent.
        reason = str(exc).replace(str(path), path.name)
        raise ReaderError(path, spec.name, f"{type(exc).__name__}: {reason}") from exc
    reading.metadata.update(size_bytes=path.stat().st_size, detected_by=detected_by)
    return reading
