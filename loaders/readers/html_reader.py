"""HTML pages: readable text (scripts and styles dropped, blocks on their own lines) and the title."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from loaders.readers.encoding import decode_text
from loaders.readers.registry import Reading, Sample, SniffOrder, register

_HTML_MARKERS = re.compile(r"<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]")
# Fragments without <html>/<body> still open on an HTML element; XML documents do not.
_FRAGMENT_START = re.compile(
    r"<(?:a|br|div|form|h[1-6]|iframe|img|link|meta|ol|p|script|section|span|style|table|ul)[\s/>]"
)
_SKIPPED = frozenset({"script", "style", "noscript", "template"})
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt",
        "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
        "li", "main", "nav", "ol", "p", "pre", "section", "title", "ul",
    }
)  # fmt: skip
_CELLS = frozenset({"td", "th"})
_SPACES = re.compile(r"\s+")
_BLANK_RUNS = re.compile(r"\n{3,}")


def looks_like_html(sample: Sample) -> bool:
    lead = sample.lead
    return lead.startswith("<") and (
        _HTML_MARKERS.search(lead) is not None or _FRAGMENT_START.match(lead) is not None
    )


class _TextExtractor(HTMLParser):
    """Collects visible text; whitespace is collapsed except inside <pre>, where tables often live."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self.title_chunks: list[str] = []
        self._skip_depth = 0
        self._pre_depth = 0
        self._cell_depth = 0
        self._in_title = False
        self._title_seen = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._enter(tag, +1)

    def handle_endtag(self, tag: str) -> None:
        self._enter(tag, -1)

    def _enter(self, tag: str, step: int) -> None:
        if tag in _SKIPPED:
            self._skip_depth = max(0, self._skip_depth + step)
        elif tag == "pre":
            self._pre_depth = max(0, self._pre_depth + step)
        elif tag in _CELLS:
            self._cell_depth = max(0, self._cell_depth + step)
        if tag == "title" and not self._title_seen:
            # Only the first <title> is the page's; later ones label inline SVG icons.
            self._in_title = step > 0
            self._title_seen = step < 0
        if tag in _CELLS and step > 0:
            self._separate("\t")
        elif tag == "table" or (tag == "tr" and step > 0):
            self._separate("\n")
        elif tag in _BLOCKS:
            # Paragraphs inside a table cell must not split the table row across lines.
            self._separate(" " if self._cell_depth else "\n")

    def _separate(self, separator: str) -> None:
        """Append a line break, cell tab or word space without doubling whitespace inside a line."""
        if separator == "\n":
            self.chunks.append(separator)
            return
        if not self.chunks or self.chunks[-1].endswith(("\n", "\t")):
            return
        if self.chunks[-1].endswith(" "):
            if separator == " ":
                return
            self.chunks[-1] = self.chunks[-1][:-1]
        self.chunks.append(separator)

    def handle_data(self, data: str) -> None:
        if self._skip_depth:
            return
        if self._in_title:
            self.title_chunks.append(data)
        if self._pre_depth:
            self.chunks.append(data)
            return
        collapsed = _SPACES.sub(" ", data)
        if not self.chunks or self.chunks[-1][-1:].isspace():
            collapsed = collapsed.lstrip()
        if collapsed:
            self.chunks.append(collapsed)

    def text(self) -> str:
        lines = (line.rstrip() for line in "".join(self.chunks).split("\n"))
        return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip("\n")


@register(
    "html",
    extensions=(".html", ".htm", ".xhtml", ".shtml"),
    sniff=looks_like_html,
    sniff_order=SniffOrder.MARKUP,
)
def read_html(path: Path) -> Reading:
    """The visible text of an HTML page and its <title>; malformed markup is read as far as it goes."""
    decoded = decode_text(path.read_bytes())
    extractor = _TextExtractor()
    extractor.feed(decoded.text)
    extractor.close()
    title = _SPACES.sub(" ", "".join(extractor.title_chunks)).strip()
    return Reading(format="html", text=extractor.text(), metadata={"title": title, **decoded.metadata()})
