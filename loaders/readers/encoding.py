"""Decoding the bytes of a text file: BOMs first, then UTF-8, then Windows-1252 as the lenient fallback."""

from __future__ import annotations

import codecs
from typing import NamedTuple

# UTF-32 LE before UTF-16 LE: its BOM starts with the UTF-16 LE one.
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


class DecodedText(NamedTuple):
    text: str
    encoding: str


def bom_encoding(data: bytes) -> str | None:
    """The encoding a byte-order mark at the start of `data` announces, if any."""
    return next((encoding for bom, encoding in _BOMS if data.startswith(bom)), None)


def decode_text(data: bytes) -> DecodedText:
    """The text of `data` without its BOM; never fails (undecodable bytes become U+FFFD)."""
    announced = bom_encoding(data)
    if announced is not None:
        return DecodedText(data.decode(announced, errors="replace"), announced)
    try:
        return DecodedText(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        return DecodedText(data.decode("cp1252", errors="replace"), "cp1252")
