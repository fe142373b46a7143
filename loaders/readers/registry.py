"""The reader registry: what a reading is, how a reader fails, and how reader modules register.

Each format module decorates its read function with `register(...)`, declaring the reader's name,
the file extensions it claims and, optionally, a content sniffer over the head of a file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Reading(BaseModel):
    """A package file turned into agent-readable text plus, where there is one, a parsed structure."""

    model_config = ConfigDict(extra="forbid")

    format: str = Field(description="Name of the reader that produced this reading.")
    text: str = Field(description="Human/agent-readable rendering of the file.")
    structure: Any | None = Field(default=None, description="The parsed object, where the format has one.")
    metadata: dict[str, Any] = Field(default_factory=dict)


class ReaderError(ValueError):
    """A file that the chosen reader cannot read (corrupt, truncated or not of that format)."""

    def __init__(self, path: Path, format: str, reason: str) -> None:
        # The file name, not the full path: messages reach agents and traces, host paths must not.
        super().__init__(f"cannot read {path.name} as {format}: {reason}")
        self.path = path
        self.format = format
        self.reason = reason

    def __reduce__(self) -> tuple[type[ReaderError], tuple[Path, str, str]]:
        # Rebuilt from the constructor's arguments, so the error survives pickling across processes.
        return (type(self), (self.path, self.format, self.reason))


SAMPLE_BYTES = 64 * 1024
"""How much of a file the sniffers see."""


@dataclass(frozen=True)
class Sample:
    """The head of a file, as the sniffers see it."""

    head: bytes
    complete: bool

    @classmethod
    def of(cls, path: Path) -> Sample:
        with path.open("rb") as handle:
            head = handle.read(SAMPLE_BYTES + 1)
        return cls(head=head[:SAMPLE_BYTES], complete=len(head) <= SAMPLE_BYTES)

    @cached_property
    def lead(self) -> str:
        """The first 4 KiB as lower-cased text without BOM or leading whitespace, for markup sniffing."""
        return self.head[:4096].decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n").lower()


class SniffOrder(IntEnum):
    """The order in which sniffers are asked; the first that claims a sample names its format."""

    SIGNATURE = 0
    """Binary magic numbers: unambiguous."""
    MARKUP = 1
    """HTML, asked before XML because XHTML is also XML."""
    STRUCTURED_TEXT = 2
    """XML and JSON."""


ReadFunction = Callable[[Path], Reading]
SniffFunction = Callable[[Sample], bool]


@dataclass(frozen=True)
class ReaderSpec:
    name: str
    read: ReadFunction
    extensions: tuple[str, ...]
    sniff: SniffFunction | None
    sniff_order: SniffOrder


_READERS: dict[str, ReaderSpec] = {}
_EXTENSIONS: dict[str, str] = {}


def register(
    name: str,
    *,
    extensions: tuple[str, ...] = (),
    sniff: SniffFunction | None = None,
    sniff_order: SniffOrder = SniffOrder.STRUCTURED_TEXT,
) -> Callable[[ReadFunction], ReadFunction]:
    """Register the decorated function as the reader `name`; names and extensions must be unique."""

    def decorate(read: ReadFunction) -> ReadFunction:
        if name in _READERS:
            raise ValueError(f"reader {name!r} is already registered")
        claimed = [ext for ext in extensions if ext.lower() in _EXTENSIONS]
        if claimed:
            raise ValueError(f"extensions {claimed} already belong to {_EXTENSIONS[claimed[0].lower()]!r}")
        _READERS[name] = ReaderSpec(name, read, tuple(e.lower() for e in extensions), sniff, sniff_order)
        _EXTENSIONS.update({ext.lower(): name for ext in extensions})
        return read

    return decorate


def get_reader(name: str) -> ReaderSpec:
    """The registered reader `name`; ValueError naming the known readers otherwise."""
    spec = _READERS.get(name)
    if spec is None:
        raise ValueError(f"unknown reader format {name!r}; known: {', '.join(sorted(_READERS))}")
    return spec


def reader_names() -> list[str]:
    """The names of all registered readers, sorted."""
    return sorted(_READERS)


def reader_for_extension(path: Path) -> str | None:
    """The reader that claims the file's (last) extension, if any."""
    return _EXTENSIONS.get(path.suffix.lower())


def sniffers() -> list[ReaderSpec]:
    """Readers that have a sniffer, in the order they are asked."""
    return sorted((spec for spec in _READERS.values() if spec.sniff), key=lambda spec: spec.sniff_order)
