"""Decoding the bytes of a text file: BOMs first, then BOM-less UTF-16, then UTF-8, then Windows-1252
as the lenient fallback (flagged as a guess)."""

from __future__ import annotations

import codecs
import re
from typing import NamedTuple

from loaders.readers.registry import SAMPLE_BYTES

# UTF-32 LE before UTF-16 LE: its BOM starts with the UTF-16 LE one.
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

MAX_CONTROL_SHARE = 0.01
"""Most control characters text may hold, as a share of its characters (or bytes)."""

# Where each UTF-16 byte order puts the high byte of a code unit (zero for ASCII characters).
_HIGH_BYTE_OFFSET = {"utf-16-le": 1, "utf-16-be": 0}
# Text in Latin script, or with digits and spaces, is a quarter ASCII or more; binary read as UTF-16 is not.
_MIN_ASCII_SHARE = 0.25
_ASCII_TEXT = re.compile("[\t\n\r -~]")
# Characters with a zero low byte (U+0100, U+0400, ...) are rare; data with zeros on both sides is binary.
_MAX_ZERO_LOW_SHARE = 0.01
# What binary read as UTF-16 turns into and text almost never holds: controls other than whitespace
# and ESC, C1 controls, private-use characters and noncharacters.
_NOT_TEXT = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\ue000-\uf8ff\ufdd0-\ufdef\ufffe\uffff]")


class DecodedText(NamedTuple):
    """The text, its codec, and whether nothing vouched for that codec (no BOM, no clean decoding), so
    that the text may be mojibake."""

    text: str
    encoding: str
    guessed: bool = False

    def metadata(self) -> dict[str, str | bool]:
        """The encoding and whether it was guessed, as a text reading's metadata states them."""
        return {"encoding": self.encoding, "encoding_guessed": self.guessed}


def bom_encoding(data: bytes) -> str | None:
    """The encoding a byte-order mark at the start of `data` announces, if any."""
    return next((encoding for bom, encoding in _BOMS if data.startswith(bom)), None)


def utf16_encoding(head: bytes, *, complete: bool = True) -> str | None:
    """The codec ("utf-16-le" or "utf-16-be") of `head` when it is BOM-less UTF-16 text, else None.

    Told by where the zero bytes fall: many code units with a zero high byte, almost none with a zero
    low byte. The head must then decode cleanly to text at least a quarter ASCII (so only text mostly
    in Latin script, or with digits and spaces, is found) with almost no control characters.
    `complete` says whether `head` is the whole file: a whole file of odd length is not UTF-16, a cut
    head may end mid-character.
    """
    even = head[: len(head) - len(head) % 2]
    if not even or (complete and len(even) != len(head)):
        return None
    codec = next((codec for codec, high in _HIGH_BYTE_OFFSET.items() if _zeros_on_one_side(even, high)), None)
    if codec is None:
        return None
    try:
        text = codecs.getincrementaldecoder(codec)().decode(even, final=complete)
    except UnicodeDecodeError:
        return None
    return codec if _reads_as_text(text) else None


def _zeros_on_one_side(data: bytes, high: int) -> bool:
    # Cheap before decoding: every ASCII character has a zero high byte.
    units = len(data) // 2
    zero_high, zero_low = data[high::2].count(0), data[1 - high :: 2].count(0)
    return zero_high >= _MIN_ASCII_SHARE * units and zero_low <= _MAX_ZERO_LOW_SHARE * units


def _reads_as_text(text: str) -> bool:
    ascii_enough = len(_ASCII_TEXT.findall(text)) >= _MIN_ASCII_SHARE * len(text)
    return ascii_enough and len(_NOT_TEXT.findall(text)) <= MAX_CONTROL_SHARE * len(text)


def decode_text(data: bytes) -> DecodedText:
    """The text of `data` without its BOM; never fails (undecodable bytes become U+FFFD).

    The encoding is the one a BOM announces, else BOM-less UTF-16 (`utf16_encoding` of the head the
    sniffers see), else UTF-8 when the bytes are valid UTF-8. Any other bytes are read as Windows-1252
    with `guessed` set: that is mojibake for other legacy encodings (GBK, Shift-JIS, ...), which no rule
    tells apart reliably.
    """
    # The head alone, as sniffing judged it: a text file is text whatever its tail holds.
    announced = bom_encoding(data) or utf16_encoding(data[:SAMPLE_BYTES], complete=len(data) <= SAMPLE_BYTES)
    if announced is not None:
        return DecodedText(data.decode(announced, errors="replace"), announced)
    try:
        return DecodedText(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        return DecodedText(data.decode("cp1252", errors="replace"), "cp1252", guessed=True)
