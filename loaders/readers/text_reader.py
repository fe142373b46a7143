"""Plain text files, and the generic reading for any content that decodes as text."""

from __future__ import annotations

from pathlib import Path

from loaders.readers.encoding import decode_text
from loaders.readers.registry import Reading, register
from loaders.readers.sniff import GENERIC_TEXT


@register(GENERIC_TEXT, extensions=(".txt", ".text", ".md", ".log"))
def read_text(path: Path) -> Reading:
    """The decoded text of a file (BOM, UTF-16, UTF-8, else Windows-1252 guessed); never fails on content."""
    decoded = decode_text(path.read_bytes())
    return Reading(
        format=GENERIC_TEXT,
        text=decoded.text,
        metadata={**decoded.metadata(), "line_count": len(decoded.text.splitlines())},
    )
