"""Withholding hidden material from what the task explorer shows of a trace.

A submitted trace may quote the hidden reference (a correct answer, a solution's figures, a rubric's
wording). Every text shown from a trace is checked against the hidden needles of every task, the
release leak scan's own (`dataset.leaks.HiddenIndex`: 8-token shingles of the hidden material plus
whole short labels, minus every n-gram of the public records). A text holding any needle is withheld.
"""

from __future__ import annotations

import threading

from dataset.leaks import HiddenIndex, release_public_texts
from loaders.release import HiddenRecord, Release

WITHHELD = "[withheld: this text overlaps the task's hidden reference]"


class Redactor:
    """The hidden n-grams of every task (minus public ones); `clean` withholds any text holding one.

    All tasks, not only the trace's own: sibling tasks share a package, and a run on one may well
    quote what another's solution computes.
    """

    def __init__(self, release: Release, records: dict[str, HiddenRecord]) -> None:
        self._release = release
        self._records = records
        self._index: HiddenIndex | None = None
        self._lock = threading.Lock()
        self._warming: threading.Thread | None = None

    def clean(self, text: str) -> str:
        """`text`, or WITHHELD when it holds hidden material of any task."""
        return WITHHELD if self.holds_hidden(text) else text

    def holds_hidden(self, text: str) -> bool:
        return bool(text) and self.index().holds_hidden(text)

    def clean_row(self, cells: list[str]) -> list[str]:
        """Cells shown side by side: each cleaned, and all withheld when their joint text still holds
        hidden material (an n-gram may run from one cell into the next)."""
        cleaned = [self.clean(cell) for cell in cells]
        if self.holds_hidden(" ".join(cleaned)):
            return [WITHHELD if cell else cell for cell in cleaned]
        return cleaned

    def warm_up(self) -> None:
        """Build the index in the background, so that the first trace shown does not wait."""
        self._warming = threading.Thread(target=self.index, name="redaction-warm-up", daemon=True)
        self._warming.start()

    def close(self) -> None:
        """Wait for a warm-up still building the index: no thread may be mid-build when the process ends."""
        if self._warming is not None:
            self._warming.join()

    def index(self) -> HiddenIndex:
        """The hidden needles of every task, built once (the app warms this up at start)."""
        with self._lock:
            if self._index is None:
                self._index = HiddenIndex.from_records(self._records, release_public_texts(self._release))
            return self._index
