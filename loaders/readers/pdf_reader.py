"""PDF documents (pypdf): page count and the extracted text of each page."""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfReader

from loaders.readers.registry import ReaderError, Reading, Sample, SniffOrder, register

MAX_PAGES = 300
"""Pages whose text is extracted; longer documents are cut (metadata `pages_read`)."""

_EOF_MARKER = b"%%EOF"
_TAIL_BYTES = 2048


def looks_like_pdf(sample: Sample) -> bool:
    # The PDF header may follow up to 1 KiB of junk.
    return b"%PDF-" in sample.head[:1024]


@register("pdf", extensions=(".pdf",), sniff=looks_like_pdf, sniff_order=SniffOrder.SIGNATURE)
def read_pdf(path: Path) -> Reading:
    """Text per page of a PDF; a PDF pypdf cannot open raises ReaderError (naming truncation if seen)."""
    try:
        pages = _page_texts(path)
    except Exception as exc:  # pypdf raises assorted exception types on malformed files
        raise ReaderError(path, "pdf", _failure_reason(path, exc)) from exc
    page_count, texts = pages
    text = "\n\n".join(f"[page {number}]\n{page}" for number, page in enumerate(texts, start=1))
    return Reading(
        format="pdf",
        text=text,
        structure={"pages": texts},
        metadata={"page_count": page_count, "pages_read": len(texts)},
    )


def _page_texts(path: Path) -> tuple[int, list[str]]:
    reader = PdfReader(path)
    if reader.is_encrypted:
        reader.decrypt("")
    pages = reader.pages
    return len(pages), [(pages[index].extract_text() or "") for index in range(min(len(pages), MAX_PAGES))]


def _failure_reason(path: Path, exc: Exception) -> str:
    reason = f"{type(exc).__name__}: {exc}"
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - _TAIL_BYTES))
        tail = handle.read()
    return reason if _EOF_MARKER in tail else f"{reason} (file truncated: no %%EOF marker)"
