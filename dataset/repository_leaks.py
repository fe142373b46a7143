"""Hidden answers in the project's own files: is any task's ground-truth value written in the code, the
tests or the docs? The repository is public (and the Space ships its code), so examples there must be
invented, never copied from a task's answer.

A value is a needle when it is distinctive enough not to coincide: a number written with at least
MIN_DECIMAL_DIGITS significant digits when it has a decimal part, MIN_WHOLE_DIGITS when it is whole,
or a label of at least MIN_LABEL_CHARS characters and MIN_LABEL_WORDS words (`snake_case`, spaced or
hyphenated). Numbers written inside the ground truth's strings (`"2718364.9 people"`) count as numbers,
and numbers are compared as values (`4,512,907.0` is `4512907`).
Values that any public record states (a prompt, a task or event record, a manifest) are not needles:
the release shows them to everyone.

Hidden passages (a solution, a rubric, a ground-truth program) are found by the release's n-gram scanner
(`dataset.leaks.HiddenIndex`); `copied_passages` asks for enough matching runs of one task's text in one
file that a shared phrase or a common code idiom is not taken for a copy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from pydantic import BaseModel

from dataset.leaks import TEXT_KINDS, HiddenIndex, LeakFinding, LeakKind, release_public_texts
from loaders.json_leaves import leaves
from loaders.release import HiddenRecord, Release, open_release, read_hidden_records

MIN_DECIMAL_DIGITS = 4
MIN_WHOLE_DIGITS = 5
MIN_LABEL_CHARS = 12
MIN_LABEL_WORDS = 3
MIN_PASSAGE_MATCHES: dict[LeakKind, int] = {**dict.fromkeys(TEXT_KINDS, 2), "compute_gt": 16}
"""Hidden n-grams (8-word runs, or a whole short label) of one task's text in one file that make a copy:
one can be a shared phrase, label or field name, and the ground-truth programs share idioms with any
Python (imports, reading JSON; up to 7 runs in one file of this repository), while a copied block of
three lines gives 16."""
_NUMBER = re.compile(r"(?<![\w.,])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")
_WORD = re.compile(r"[A-Za-z0-9]+")


class ValueLeak(BaseModel):
    """A hidden answer value found in a file: where, what, and which task's answer it is."""

    file: str
    line: int
    value: str
    task_id: str


class HiddenValues(BaseModel):
    """The distinctive answer values of a release's tasks that no public record states."""

    numbers: dict[float, str]
    """Number -> the first task (by id) whose answer holds it."""
    labels: dict[str, str]
    """Label -> the first task (by id) whose answer holds it."""

    @classmethod
    def of(cls, records: dict[str, HiddenRecord], public_texts: Iterable[bytes]) -> HiddenValues:
        """The needles of every task's `primary_gt`, minus the numbers and labels of `public_texts`."""
        public = _Public([text.decode("utf-8", "replace") for text in public_texts])
        numbers: dict[float, str] = {}
        labels: dict[str, str] = {}
        for task_id in sorted(records):
            for _, value in leaves(records[task_id].ground_truth.get("primary_gt")):
                for number in _distinctive_numbers(value):
                    if number not in public.numbers:
                        numbers.setdefault(number, task_id)
                if _distinctive_label(value) and not public.states(value):
                    labels.setdefault(value, task_id)
        return cls(numbers=numbers, labels=labels)

    @classmethod
    def of_release(cls, out: Path) -> HiddenValues:
        """The needles of the built release at `out`, against everything it makes public."""
        return cls.of(read_hidden_records(out), public_texts(open_release(out)))

    def find(self, files: Mapping[str, Path]) -> list[ValueLeak]:
        """Every needle written in the text `files` (the name to report -> the file, as
        `HiddenIndex.scan_files` takes them), in name and line order."""
        return [leak for name in sorted(files) for leak in self._in_file(files[name], name)]

    def _in_file(self, path: Path, name: str) -> list[ValueLeak]:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        return [
            leak
            for number, line in enumerate(text.splitlines(), start=1)
            for leak in self._in_line(name, number, line)
        ]

    def _in_line(self, relative: str, number: int, line: str) -> list[ValueLeak]:
        leaks = [
            ValueLeak(file=relative, line=number, value=token, task_id=self.numbers[_value(token)])
            for token in _NUMBER.findall(line)
            if _significant_digits(token) >= _needed_digits(token) and _value(token) in self.numbers
        ]
        leaks += [
            ValueLeak(file=relative, line=number, value=label, task_id=task_id)
            for label, task_id in self.labels.items()
            if label in line
        ]
        return leaks


def copied_passages(index: HiddenIndex, files: Mapping[str, Path]) -> list[LeakFinding]:
    """Every passage of a task's hidden text copied into the text `files` (name -> file; see
    MIN_PASSAGE_MATCHES). Report a finding by its file, task and `printable`, never its excerpt."""
    return index.scan_files(files, MIN_PASSAGE_MATCHES)


class _Public:
    """Public texts, indexed so that asking whether one of them states a label reads only the texts
    holding every word of it."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.numbers = {_value(token) for text in texts for token in _NUMBER.findall(text)}
        self._holders: dict[str, set[int]] = {}
        for index, text in enumerate(texts):
            for word in set(_WORD.findall(text)):
                self._holders.setdefault(word, set()).add(index)

    def states(self, label: str) -> bool:
        holders = set.intersection(*(self._holders.get(word, set()) for word in _WORD.findall(label)))
        return any(label in self.texts[index] for index in holders)


def public_texts(release: Release) -> Iterator[bytes]:
    """What a release shows everyone: its public records and the path of every package file."""
    yield from release_public_texts(release)
    for event_id in release.events:
        yield "\n".join(release.package(event_id).list_files(".")).encode("utf-8")


def _distinctive_numbers(value: object) -> list[float]:
    """The distinctive numbers a ground-truth leaf states: itself, or those written in its text."""
    if isinstance(value, str):
        written = _NUMBER.findall(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        # exponents, inf and nan are not numbers as prose writes them
        written = [repr(value)] if _NUMBER.fullmatch(repr(value)) else []
    else:
        return []
    return [_value(token) for token in written if _significant_digits(token) >= _needed_digits(token)]


def _value(token: str) -> float:
    return float(token.replace(",", ""))


def _distinctive_label(value: object) -> bool:
    if not isinstance(value, str) or len(value) < MIN_LABEL_CHARS:
        return False
    return len(_WORD.findall(value)) >= MIN_LABEL_WORDS and any(character.isalpha() for character in value)


def _needed_digits(written: str) -> int:
    return MIN_DECIMAL_DIGITS if "." in written else MIN_WHOLE_DIGITS


def _significant_digits(written: str) -> int:
    """Significant digits of a number as written: `042.50` -> 4, `18000` -> 2, `0.0031` -> 2."""
    whole, _, fraction = written.lstrip("-").replace(",", "").partition(".")
    digits = (whole + fraction).lstrip("0")
    return len(digits if fraction else digits.rstrip("0"))
