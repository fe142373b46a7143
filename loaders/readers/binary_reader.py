"""Opaque files: size and a hex dump of the first bytes, never an error."""

from __future__ import annotations

from pathlib import Path

from loaders.readers.registry import Reading, register
from loaders.readers.sniff import GENERIC_BINARY

HEX_HEAD_BYTES = 64


@register(GENERIC_BINARY)
def read_binary(path: Path) -> Reading:
    """Size and the first HEX_HEAD_BYTES bytes in hex of any file."""
    with path.open("rb") as handle:
        head = handle.read(HEX_HEAD_BYTES)
    size = path.stat().st_size
    hex_head = head.hex(" ")
    return Reading(
        format=GENERIC_BINARY,
        text=f"binary file, {size} bytes; first {len(head)} bytes: {hex_head}",
        structure={"size_bytes": size, "hex_head": hex_head},
    )
