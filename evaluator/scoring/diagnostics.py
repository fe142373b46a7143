"""Judge-free process diagnostics, reported beside the rubric score P.

- evidence recall: share of the reference analysis's provenance files that the agent opened;
- citation validity: share of the files the answer cites that exist in the package and were opened;
- answer-in-trace: share of the numbers in the submitted answer that appear, at the answer's own
  precision, in a tool observation or a python result.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel, Field

from evaluator.traces.schema import Trace
from loaders.json_leaves import leaves
from loaders.package import EventPackage, PackagePathError
from loaders.tolerances import as_finite

OPENING_ACTIONS = frozenset({"read_text_file", "summarize_table_or_json", "inspect_image", "python_exec"})
"""Steps whose evidence files the agent actually read (a search or a listing only names files)."""
PATH_ARGUMENT = "path"
NUMBER = re.compile(r"(?:-\d|\d)\d*(?:\.\d+)?(?:[eE][-+]?\d+)?")
r"""`-?\d+...` written so that the scan rejects a position on its first character: a third faster on
observations of megabytes, same matches."""
MAX_DECIMALS = 6


class ProcessDiagnostics(BaseModel):
    """Three shares in 0..100, each None when it has no denominator, with the counts behind them."""

    evidence_recall: float | None = Field(description="Provenance files opened / provenance files.")
    citation_validity: float | None = Field(description="Cited files in the package and opened / cited.")
    answer_in_trace: float | None = Field(description="Answer numbers seen in observations / numbers.")
    provenance_files: int
    provenance_opened: int
    cited_files: int
    cited_valid: int
    answer_numbers: int
    answer_numbers_seen: int


def diagnose(
    trace: Trace, provenance_files: Iterable[str], package: EventPackage, package_files: frozenset[str]
) -> ProcessDiagnostics:
    """The three diagnostics of one trace against its task's provenance and its package, whose files
    (`package.list_files()`) are passed in so that many traces of one package list it once."""
    opened = opened_files(trace, package)
    provenance = {path for path in (_relative(path, package) for path in provenance_files) if path}
    # An unsafe cited path stays as written: it counts as cited, and can never be valid.
    cited = {_relative(path, package) or path for path in _cited_paths(trace)}
    valid = {path for path in cited if path in opened and path in package_files}
    numbers = list(_numbers(trace.final_answer.parsed))
    found = _seen_count(numbers, trace)
    return ProcessDiagnostics(
        evidence_recall=_share(len(provenance & opened), len(provenance)),
        citation_validity=_share(len(valid), len(cited)),
        answer_in_trace=_share(found, len(numbers)),
        provenance_files=len(provenance),
        provenance_opened=len(provenance & opened),
        cited_files=len(cited),
        cited_valid=len(valid),
        answer_numbers=len(numbers),
        answer_numbers_seen=found,
    )


def opened_files(trace: Trace, package: EventPackage) -> set[str]:
    """Package-relative paths of the files the agent opened: read, summarized, inspected or read in python."""
    opened: set[str] = set()
    for step in trace.steps:
        if step.action not in OPENING_ACTIONS:
            continue
        candidates = [*step.evidence_files, step.arguments.get(PATH_ARGUMENT)]
        relative = (_relative(candidate, package) for candidate in candidates if isinstance(candidate, str))
        opened.update(path for path in relative if path)
    return opened


def _seen_count(numbers: list[float], trace: Trace) -> int:
    """How many of `numbers` the trace's observations show (its text is not read when there are none)."""
    if not numbers:
        return 0
    seen = ObservedNumbers(trace)
    return sum(1 for number in numbers if seen.contains(number))


def _cited_paths(trace: Trace) -> Iterator[str]:
    for item in trace.final_answer.evidence:
        sources = item.source_file if isinstance(item.source_file, list) else [item.source_file]
        yield from (source for source in sources if isinstance(source, str) and source.strip())


def _relative(path: str, package: EventPackage) -> str | None:
    try:
        return package.lexical(path)
    except PackagePathError:
        return None


def _numbers(value: Any) -> Iterator[float]:
    """Every finite number in a JSON value (booleans are flags, not numbers)."""
    for _, leaf in leaves(value):
        number = as_finite(leaf)
        if number is not None:
            yield number


class ObservedNumbers:
    """The numbers of a trace's observations and python output, looked up at a given precision."""

    def __init__(self, trace: Trace) -> None:
        tokens = {
            token
            for step in trace.steps
            for block in (step.observation, step.stdout)
            if block is not None and block.text
            for token in NUMBER.findall(block.text)
        }
        self._values = sorted({float(token) for token in tokens})

    def contains(self, number: float) -> bool:
        """Whether some observed number rounds to `number` at `number`'s own precision."""
        decimals = _decimals(number)
        # only values within one step of `number` can round to it: found by bisection, then checked
        step = 10.0**-decimals
        start = bisect.bisect_left(self._values, number - step)
        stop = bisect.bisect_right(self._values, number + step)
        return any(value == number or round(value, decimals) == number for value in self._values[start:stop])


def _decimals(number: float) -> int:
    text = repr(number)
    if "e" in text or "." not in text:
        return 0
    return min(len(text.split(".", 1)[1].rstrip("0")), MAX_DECIMALS)


def _share(part: int, whole: int) -> float | None:
    return None if whole == 0 else round(100.0 * part / whole, 2)
