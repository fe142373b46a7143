"""Scoring one submitted answer against one task's ground truth, unit by unit: U = 100 x correct / scorable.

Verdicts: `correct`, `incorrect`, `missing` (nothing aligned; counts against U like incorrect: a
solver failure scores zero, it is never dropped from the denominator), `judge_required` (free text,
and open-vocabulary labels the submission states in prose: reported, outside U) and `unrequested`
(a ground-truth unit the prompt does not ask for, or a date the prompt gives, and the answer does
not hold: outside U, see prompt.py). U is None when no unit is scorable; the judge then decides alone.

Per unit, in order: free text is judge-required; the unit is aligned (alignment.py); an unaligned
unit is unrequested or missing, and so is one whose field is null; a label of open vocabulary
(prompt.py) is matched as a phrase (matching.match_phrase); anything else by its kind's rule
(matching.py). Pass the task's `question`: without it every unit counts and labels are matched strictly.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

from pydantic import BaseModel, Field

from evaluator.scoring.alignment import Aligner, Alignment, SubmissionIndex
from evaluator.scoring.matching import Match, Verdict, match, match_phrase
from evaluator.scoring.prompt import Prompt, prompt_of
from evaluator.scoring.units import Unit, UnitKind, decompose, decompose_key_values, normalize_label, path_id
from evaluator.traces.answer_text import parse_answer

SHOWN_CHARS = 300
"""Submitted values are shown in reports up to this many characters."""
UNASKED = "the prompt does not ask for it and the answer does not hold it"
GIVEN = "the prompt gives this date and the answer does not restate it"
SHOWN_DEPTH = 3
SHOWN_ITEMS = 12


class UnitResult(BaseModel):
    """One unit's outcome: what the ground truth says, what was submitted where, and the verdict."""

    id: str
    kind: UnitKind
    gt: Any
    submitted: Any = None
    submitted_path: str | None = None
    alignment: str = "missing"
    rule: str = ""
    tolerance: float | None = None
    verdict: Verdict
    reason: str = ""


class AnswerUnitReport(BaseModel):
    """Every unit of a task scored against one answer, with the totals and U (None: no scorable unit)."""

    units: list[UnitResult]
    correct: int = Field(ge=0)
    scorable: int = Field(ge=0)
    missing: int = Field(ge=0)
    judge_required: int = Field(ge=0)
    unrequested: int = Field(default=0, ge=0)
    u: float | None = Field(default=None, ge=0, le=100)
    answer_source: str = ""
    notes: list[str] = Field(default_factory=list)


def score_answer(ground_truth: dict[str, Any], answer: Any, question: str | None = None) -> AnswerUnitReport:
    """Score `answer` (a JSON value or a string) against the task's units (`task_units`).

    With the task's `question`, units the prompt does not ask for and the answer does not hold are left
    out of U (`unrequested`); without it, every unit counts."""
    return score_units(task_units(ground_truth, question), answer, question)


def task_units(ground_truth: dict[str, Any], question: str | None = None) -> list[Unit]:
    """The units of a task: those of `primary_gt`, plus, given the prompt, the `key_values` entries for
    fields the prompt's answer template asks for and `primary_gt` does not hold (some tasks keep the
    templated values only there)."""
    units = decompose(ground_truth)
    if not question:
        return units
    prompt = prompt_of(question)
    # a value `primary_gt` holds as a named item (`required_metrics[name=x].value`) is held as `x` too
    held = {name for unit in units for name in (normalize_label(unit.key), unit.name)}
    extra = [
        unit
        for unit in decompose_key_values(ground_truth)
        if prompt.shapes(unit) and normalize_label(unit.key) not in held
    ]
    return units + _first_per_key(extra)


def _first_per_key(units: list[Unit]) -> list[Unit]:
    """One unit per field name: `key_values` repeats a value under several groups."""
    seen: set[str] = set()
    kept: list[Unit] = []
    for unit in units:
        name = normalize_label(unit.key)
        if name not in seen:
            seen.add(name)
            kept.append(unit)
    return kept


def score_units(units: list[Unit], answer: Any, question: str | None = None) -> AnswerUnitReport:
    """Score `answer` against already decomposed units (decompose once per task, score many answers)."""
    parsed = parse_answer(answer)
    notes = [parsed.note] if parsed.note else []
    index = SubmissionIndex.build(parsed.value)
    if index.truncated:
        notes.append("answer too large or too deep: only its first fields were read")
    aligner = Aligner(units, index)
    prompt = prompt_of(question) if question else None
    results = [_score_unit(unit, aligner, prompt) for unit in units]
    return _report(results, parsed.source, notes)


def _score_unit(unit: Unit, aligner: Aligner, prompt: Prompt | None) -> UnitResult:
    if unit.judge_required:
        return _result(unit, Alignment(), Match(verdict=Verdict.JUDGE_REQUIRED, rule="judge"))
    alignment = aligner.align(unit)
    if not alignment.found and prompt is not None and not prompt.requests(unit):
        return _result(unit, alignment, Match(verdict=Verdict.UNREQUESTED, rule="prompt", reason=UNASKED))
    if not alignment.found and prompt is not None and prompt.gives(unit):
        return _result(unit, alignment, Match(verdict=Verdict.UNREQUESTED, rule="prompt", reason=GIVEN))
    if not alignment.found or alignment.value is None:
        reason = "no field aligned" if not alignment.found else "the field is null"
        return _result(unit, alignment, Match(verdict=Verdict.MISSING, rule="", reason=reason))
    if prompt is not None and prompt.leaves_open(unit):
        return _result(unit, alignment, match_phrase(unit, alignment.value))
    return _result(unit, alignment, match(unit, alignment.value))


def _result(unit: Unit, alignment: Alignment, outcome: Match) -> UnitResult:
    return UnitResult(
        id=unit.id,
        kind=unit.kind,
        gt=unit.gt,
        submitted=_shown(alignment.value) if alignment.found else None,
        submitted_path=path_id(alignment.path) if alignment.path is not None else None,
        alignment=alignment.rule,
        rule=outcome.rule,
        tolerance=unit.tolerance,
        verdict=outcome.verdict,
        reason=outcome.reason,
    )


def _report(results: list[UnitResult], source: str, notes: list[str]) -> AnswerUnitReport:
    counts = {verdict: 0 for verdict in Verdict}
    for result in results:
        counts[result.verdict] += 1
    scorable = len(results) - counts[Verdict.JUDGE_REQUIRED] - counts[Verdict.UNREQUESTED]
    u = 100.0 * counts[Verdict.CORRECT] / scorable if scorable else None
    return AnswerUnitReport(
        units=results,
        correct=counts[Verdict.CORRECT],
        scorable=scorable,
        missing=counts[Verdict.MISSING],
        judge_required=counts[Verdict.JUDGE_REQUIRED],
        unrequested=counts[Verdict.UNREQUESTED],
        u=u,
        answer_source=source,
        notes=notes,
    )


def _shown(value: Any) -> Any:
    """A submitted value small enough for a report: scalars as they are, long text and containers cut."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, dict | list):
        return _cut(_preview(value, SHOWN_DEPTH))
    return value


def _preview(value: Any, depth: int) -> str:
    """JSON-like text of a container, at most SHOWN_DEPTH levels and about SHOWN_CHARS characters."""
    if isinstance(value, dict):
        if depth == 0:
            return "{...}"
        parts = [
            f"{json.dumps(str(key))}: {_preview(child, depth - 1)}" for key, child in _first(value.items())
        ]
        return "{" + ", ".join(parts) + (", ..." if len(value) > SHOWN_ITEMS else "") + "}"
    if isinstance(value, list):
        if depth == 0:
            return "[...]"
        parts = [_preview(child, depth - 1) for child in _first(value)]
        return "[" + ", ".join(parts) + (", ..." if len(value) > SHOWN_ITEMS else "") + "]"
    if isinstance(value, str):
        return json.dumps(_cut(value))
    return json.dumps(value) if value is None or isinstance(value, bool | int) else repr(value)


def _first(items: Any) -> list[Any]:
    return list(itertools.islice(items, SHOWN_ITEMS))


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."
