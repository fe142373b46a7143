"""Content sniffing: which reader a file's bytes call for, whatever its name says."""

from __future__ import annotations

import codecs
from pathlib import Path

from loaders.readers.encoding import MAX_CONTROL_SHARE, bom_encoding, utf16_encoding
from loaders.readers.registry import Sample, sniffers

GENERIC_TEXT = "text"
GENERIC_BINARY = "binary"
GENERIC_FORMATS = (GENERIC_TEXT, GENERIC_BINARY)
"""What a file is when no sniffer claims it: readable text, or opaque bytes."""

_TEXT_CONTROLS = bytes(range(32)).translate(None, b"\t\n\r\f\v\x1b")


def sniff_format(path: Path) -> str:
    """The reader name the content of `path` calls for: a registered signature, else text or binary."""
    return sniff_sample(Sample.of(Path(path)))


def sniff_sample(sample: Sample) -> str:
    """The reader name for a file head: the first sniffer that claims it, else text or binary."""
    claimed = next((spec.name for spec in sniffers() if spec.sniff and spec.sniff(sample)), None)
    if claimed is not None:
        return claimed
    return GENERIC_TEXT if looks_like_text(sample) else GENERIC_BINARY


def looks_like_text(sample: Sample) -> bool:
    """Whether a head decodes as text: a BOM, BOM-less UTF-16, valid UTF-8, or (legacy 8-bit) almost no
    control bytes."""
    head = sample.head
    if bom_encoding(head) is not None or utf16_encoding(head, complete=sample.complete) is not None:
        return True
    if b"\x00" in head:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=sample.complete)
    except UnicodeDecodeError:
        controls = len(head) - len(head.translate(None, _TEXT_CONTROLS))
        return controls <= MAX_CONTROL_SHARE * len(head)
    return True
