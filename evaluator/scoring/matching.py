"""Value matching: is a submitted value right for one answer unit?

Rules, by unit kind:

- number: within the unit's tolerance (stated by the task, else the ground truth's precision); a
  number may come as a string with a unit (`"81.8 %"`, `"12.3 mm"`, `"1,000"`) or as an object with a
  `value` field or a single number field named with words of the unit's name (`{"date": ...,
  "tmax_c": 30.1}` for `daily_tmax_c`); a scale word after it (`"10.2 million"`) multiplies it, or
  is the scale the ground truth counts in (`30` for `"30 million tons"`). A value off by exactly
  x100 (percent for fraction or back) is NOT accepted: the task names the scale (`_pct`,
  `_fraction`, `_share`) and the other scale is a different number; the result says so in its reason.
- flag / test: booleans, or strings whose first word is yes/no/true/false/pass/fail/support/reject
  (and inflections).
  Numbers 0/1 are not read as booleans: a count of 1 is not "true".
- label: equal after normalisation (case, separators, whitespace; a date-time with `T` or a space,
  with or without zero seconds, a fraction of the last second or a UTC designator), or equal to one
  of the ground truth's acceptable variants, or stated verbatim as a whole phrase inside a longer
  submitted string (`"compound_heat_water_stress: persistent ..."`) when the label has at least two
  words. File paths compare by their package-relative path or, file names being unique in a package,
  by file name.
- ordering: the same sequence of normalised labels.
- set member: the member is among the submitted list's items (or an object's keys / names, or the
  dates of a submitted date range).
- text: not matched here; judge-required.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from enum import StrEnum
from typing import Any, NamedTuple

from evaluator.scoring.tolerances import FLOAT_NOISE, name_tokens
from evaluator.scoring.units import ID_FIELDS, Unit, UnitKind, normalize_label
from loaders.tolerances import is_number

VALUE_KEYS = ("value", "val", "score", "result", "estimate", "amount", "computed_value", "computed")
"""Keys under which a submitted object carries its number (`{"value": 17, "unit": "days"}`)."""
TRUE_WORDS = frozenset(
    {
        "true",
        "yes",
        "y",
        "pass",
        "passed",
        "passes",
        "met",
        "satisfied",
        "support",
        "supports",
        "supported",
        "confirmed",
    }
)
FALSE_WORDS = frozenset(
    {
        "false",
        "no",
        "n",
        "fail",
        "failed",
        "fails",
        "not",
        "unmet",
        "none",
        "reject",
        "rejects",
        "rejected",
        "unsupported",
    }
)
OUTCOME_PASS = frozenset({"pass", "passed", "passes"})
OUTCOME_FAIL = frozenset({"fail", "failed", "fails", "reject", "rejected"})
OUTCOME_KEY_WORDS = frozenset(
    {"value", "pass", "passed", "passes", "result", "status", "outcome", "met", "verdict", "supported"}
)
"""Words that mark an object's field as its outcome (`result`, `gate_pass`, `test_status`)."""
SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
MAX_TEXT_SCAN = 2000
MIN_PHRASE_TOKENS = 2
PHRASE_COVERAGE = 0.5
PHRASE_STEM = 5
MAX_PHRASE_WORDS = 16
"""Longer submitted text is prose, not a phrase naming the concept."""
STOP_WORDS = frozenset(
    {
        "and",
        "or",
        "the",
        "of",
        "to",
        "with",
        "for",
        "a",
        "an",
        "in",
        "on",
        "by",
        "as",
        "at",
        "from",
        "vs",
        "is",
    }
)
COARSE_MIN_DIGITS = 3
MAX_QUALIFIERS = 2
NEGATIONS = frozenset(
    {
        "not",
        "no",
        "non",
        "without",
        "un",
        "insufficient",
        "rejected",
        "unsupported",
        "absent",
        "weak",
        "unlikely",
    }
)
_NUMBER_PREFIX = re.compile(
    r"^\s*[~≈]?\s*([-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\d\-/:])\s*(.*)$"
)
_NEGATION_STEMS = frozenset(word[:PHRASE_STEM] for word in NEGATIONS)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_OR_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?|\b\d{1,2}:\d{2}\b")
_SCALE_WORD = re.compile(r"\s*(thousand|million|billion|trillion)\b", re.IGNORECASE)
_SCALE_NAME = re.compile(r"thousand|million|billion|trillion", re.IGNORECASE)
_ANY_NUMBER = re.compile(r"(?<![\w.])[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w.])")
_TIMESTAMP = re.compile(
    r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?(?:\.\d+)?(?:\s*(?:Z|UTC|GMT|\+00:?00)(?![\w:]))?",
    re.IGNORECASE,
)
_DATE_JOINER = re.compile(r"[\s/_\-–—]*(?:(?:to|through|until|and)[\s/_\-–—]*)?")
"""What may stand between the dates of a date range: `2003-04-02_to_2003-05-19`, `2019-08-03/2019-08-09`."""
_REPOSITORY_PREFIX = re.compile(r"^.*?/packages/CSX-\d+/")
_WORDS = re.compile(r"[a-z]+")


class Verdict(StrEnum):
    CORRECT = "correct"
    INCORRECT = "incorrect"
    MISSING = "missing"
    JUDGE_REQUIRED = "judge_required"
    UNREQUESTED = "unrequested"


class Match(NamedTuple):
    """The outcome of comparing one submitted value with one unit: the verdict and the rule that decided.

    A plain tuple, not a model: alignment compares candidates by the thousand; answer.UnitResult is the
    validated record."""

    verdict: Verdict
    rule: str
    reason: str = ""


def match(unit: Unit, submitted: Any) -> Match:
    """Compare `submitted` (already aligned to `unit`) with the unit's ground truth; never raises."""
    if unit.judge_required:
        return Match(verdict=Verdict.JUDGE_REQUIRED, rule="judge")
    checker = _CHECKERS[unit.kind]
    return checker(unit, submitted)


def is_correct(unit: Unit, submitted: Any) -> bool:
    """Whether `submitted` is right for `unit` (the verdict of `match` is correct)."""
    return match(unit, submitted).verdict is Verdict.CORRECT


def _verdict(ok: bool, rule: str, reason: str = "") -> Match:
    return Match(verdict=Verdict.CORRECT if ok else Verdict.INCORRECT, rule=rule, reason=reason)


def _match_number(unit: Unit, submitted: Any) -> Match:
    value = as_number(submitted)
    if value is None and isinstance(submitted, dict):
        value = _named_number(unit, submitted)
    tolerance = unit.tolerance or 0.0
    rule = f"number ±{tolerance:g} ({unit.tolerance_source})"
    if value is None:
        return _verdict(False, rule, f"not a number: {_brief(submitted)}")
    if not math.isfinite(value):
        return _verdict(False, rule, "not a finite number")
    gt = float(unit.gt)
    noise = FLOAT_NOISE * max(1.0, abs(gt))
    if abs(value - gt) <= tolerance + noise:
        return _verdict(True, rule)
    scale = _scale_word(submitted)
    if scale != 1.0 and abs(value * scale - gt) <= tolerance + noise:
        return _verdict(True, "number with its scale word")
    if unit.tolerance_source == "precision" and (
        _coarser_rounding(value, gt, submitted, tolerance, noise)
        or (scale != 1.0 and _coarser_rounding(value * scale, gt, submitted, tolerance, noise, scale))
    ):
        return _verdict(True, "number rounded coarser (3+ significant digits)")
    if value != 0 and (
        abs(value * 100 - gt) <= tolerance + noise or abs(value / 100 - gt) <= tolerance + noise
    ):
        return _verdict(False, rule, "off by x100 (percent vs fraction), not accepted")
    return _verdict(False, rule, f"off by {value - gt:+.6g}")


def _named_number(unit: Unit, submitted: dict[str, Any]) -> float | None:
    """The one number of an object whose field is named with words of the unit's name: a list item
    `{"date": "2021-06-26", "tmax_c": 30.1}` of `daily_tmax_c` states 30.1."""
    wanted = set(name_tokens(unit.name))
    numbers = [
        float(value)
        for key, value in submitted.items()
        if is_number(value) and not isinstance(value, bool) and set(name_tokens(key)) <= wanted
    ]
    return numbers[0] if len(numbers) == 1 else None


def _coarser_rounding(
    value: float, gt: float, submitted: Any, tolerance: float, noise: float, scale: float = 1.0
) -> bool:
    """The submitted value is the ground truth rounded to fewer decimals, still 3+ significant digits
    (`scale`: the written number's scale word, `1.09 million` is rounded to the ten thousand)."""
    step = written_step(submitted)
    if step is None or step * scale <= 2 * tolerance or significant_digits(value) < COARSE_MIN_DIGITS:
        return False
    return abs(value - gt) <= step * scale / 2 + noise


def _scale_word(submitted: Any) -> float:
    """The multiple a scale word right after a submitted number states (`"10.2 million people"`), else 1.
    The number is also read without it: the ground truth may be counted in that scale (`30` for
    `"30 million tons"` of a mass in million tons)."""
    if not isinstance(submitted, str) or not _SCALE_NAME.search(submitted):
        return 1.0  # the cheap test first: numbers are compared by the thousand while aligning
    found = _written_number(submitted)
    word = _SCALE_WORD.match(found[1]) if found is not None else None
    return SCALE_WORDS[word.group(1).lower()] if word else 1.0


def written_step(submitted: Any) -> float | None:
    """The rounding step a number is written with: 21.95 -> 0.01, 2720000 -> 10000, "3.2 mm" -> 0.1."""
    text = submitted if isinstance(submitted, str) else repr(submitted) if is_number(submitted) else None
    found = _written_number(text) if text is not None else None
    if found is None:
        return None
    digits = found[0].replace(",", "").lstrip("+-−").lower()
    if "e" in digits:
        return None
    whole, _, decimals = digits.partition(".")
    if decimals.strip("0"):
        return 10.0 ** -len(decimals.rstrip("0"))
    return 10.0 ** (len(whole) - len(whole.rstrip("0"))) if whole.strip("0") else None


def significant_digits(value: float) -> int:
    """Significant digits of a number as written (shortest repr): 21.95 -> 4, 1090000 -> 3, 0.005 -> 1."""
    if value == 0 or not math.isfinite(value):
        return 0
    mantissa = repr(abs(value)).lower().split("e")[0]
    whole, _, decimals = mantissa.partition(".")
    digits = (whole + decimals.rstrip("0")).lstrip("0") if decimals.rstrip("0") else whole.strip("0")
    return len(digits)


def as_number(submitted: Any) -> float | None:
    """A submitted value read as a number: a number, a numeric string with a unit, or an object's `value`."""
    if isinstance(submitted, bool):
        return None
    if is_number(submitted):
        try:
            return float(submitted)  # NaN and infinities stay, to be judged "not a finite number"
        except OverflowError:  # an integer beyond any float states no measurement
            return None
    if isinstance(submitted, str):
        return _number_from_text(submitted)
    if isinstance(submitted, dict):
        for key in VALUE_KEYS:
            if key in submitted:
                return as_number(submitted[key])
    if isinstance(submitted, list) and len(submitted) == 1:
        return as_number(submitted[0])
    return None


def _number_from_text(text: str) -> float | None:
    """The number a text states: its leading number (`"81.8 %"`), or the only number of a short phrase
    (`"cold night, mean min 3.0 C"`); dates and times are not numbers."""
    found = _written_number(text)
    return _float(found[0]) if found is not None else None


def _written_number(text: str) -> tuple[str, str] | None:
    """The number a text states as written, and the text after it (see `_number_from_text`)."""
    found = _NUMBER_PREFIX.match(text)
    if found:
        return found.group(1), text[found.end(1) :]
    if len(text.split()) > MAX_PHRASE_WORDS:
        return None
    undated = _DATE_OR_TIME.sub(" ", text)
    numbers = list(itertools.islice(_ANY_NUMBER.finditer(undated), 2))
    return (numbers[0].group(), undated[numbers[0].end() :]) if len(numbers) == 1 else None


def numbers_in_text(text: str) -> list[float]:
    """Every number a text states, dates and times left out: "484.25 mm on 2021-07-20" -> [484.25]."""
    found = _ANY_NUMBER.findall(_DATE_OR_TIME.sub(" ", text[:MAX_TEXT_SCAN]))
    return [number for piece in found if (number := _float(piece)) is not None]


def _float(text: str) -> float | None:
    try:
        return float(text.replace(",", "").replace("−", "-"))
    except ValueError:
        return None


def as_boolean(submitted: Any) -> bool | None:
    """A submitted value read as yes/no: a bool; a string whose first word says so, or a short phrase
    holding one pass/fail word (`"4 countries affected (pass)"`); an object's outcome field
    (`{"values": {...}, "passed": true}`)."""
    if isinstance(submitted, bool):
        return submitted
    if isinstance(submitted, dict):
        return _outcome_field(submitted)
    if not isinstance(submitted, str):
        return None
    words = _WORDS.findall(submitted[:MAX_TEXT_SCAN].lower())
    if not words:
        return None
    if words[0] in TRUE_WORDS | FALSE_WORDS:
        return words[0] in TRUE_WORDS
    if len(words) > MAX_PHRASE_WORDS:
        return None
    outcomes = {word in OUTCOME_PASS for word in words if word in OUTCOME_PASS | OUTCOME_FAIL}
    return outcomes.pop() if len(outcomes) == 1 else None


def _outcome_field(submitted: dict[str, Any]) -> bool | None:
    for key, value in submitted.items():
        if isinstance(value, dict | list):
            continue
        if OUTCOME_KEY_WORDS & set(normalize_label(key).split("_")):
            found = as_boolean(value)
            if found is not None:
                return found
    return None


def _match_boolean(unit: Unit, submitted: Any) -> Match:
    value = as_boolean(submitted)
    rule = "test" if unit.kind is UnitKind.TEST else "flag"
    if value is None:
        return _verdict(False, rule, f"not a yes/no value: {_brief(submitted)}")
    return _verdict(value is bool(unit.gt), rule)


def _match_label(unit: Unit, submitted: Any) -> Match:
    gt = str(unit.gt)
    if _is_dates(gt):
        return _match_dates(gt, submitted)
    text = submitted if isinstance(submitted, str | int | float) and not isinstance(submitted, bool) else None
    text = _scalar_of(submitted) if text is None else text
    if text is None:
        return _verdict(False, "label", f"not a label: {_brief(submitted)}")
    if _is_path(gt):
        return _verdict(_same_path(gt, str(text)), "path")
    expected = [_label_form(gt), *(_label_form(variant) for variant in unit.variants)]
    given = _label_form(text)
    if given in expected:
        return _verdict(True, "label" if given == expected[0] else "label variant")
    if any(_opens_with(given, label) for label in expected):
        return _verdict(True, "label stated first")
    if any(_qualified(given, label) for label in expected):
        return _verdict(True, "label with qualifiers")
    return _verdict(False, "label", f"{_brief(text)} is not {gt!r}")


def _label_form(value: Any) -> str:
    """A label in canonical form (`normalize_label`), its date-times written one way: `T` between date
    and time, no zero seconds, no fraction of the last second stated, no UTC designator
    (`1998-07-14 09:12:40Z` and `1998-07-14T09:12:40.317` are `1998-07-14T09:12:40`)."""
    text = value if isinstance(value, str) else str(value)
    return normalize_label(_TIMESTAMP.sub(_timestamp, text) if ":" in text else text)


def _timestamp(found: re.Match[str]) -> str:
    seconds = found.group(3) or ""
    return f"{found.group(1)}T{found.group(2)}{'' if seconds == ':00' else seconds}"


def _is_dates(text: str) -> bool:
    """Whether a text is a date or a date range and nothing else (`2003-04-02_to_2003-05-19`)."""
    return bool(_DATE.search(text)) and bool(_DATE_JOINER.fullmatch(_DATE.sub(" ", text)))


def _match_dates(gt: str, submitted: Any) -> Match:
    """A date or date range: the submission states the same dates first, in the same order, however
    written or nested one level (`"2017-08-14 (antecedent period from 2017-07-01)"`)."""
    wanted = _DATE.findall(gt)
    given = [date for piece in _texts(submitted) for date in _DATE.findall(piece)]
    same = given[: len(wanted)] == wanted
    return _verdict(same, "dates", "" if same else f"dates {given[:4]} for {wanted}")


def _scalar_of(submitted: Any) -> Any:
    if isinstance(submitted, dict):
        for key in (*VALUE_KEYS, "label", "name", "id"):
            if isinstance(submitted.get(key), str | int | float):
                return submitted[key]
    if isinstance(submitted, list) and len(submitted) == 1:
        return _scalar_of(submitted[0]) if isinstance(submitted[0], dict | list) else submitted[0]
    return None


def _opens_with(text: str, label: str) -> bool:
    """The text opens with the label (`"compound_heat_water_stress: persistent ..."`): stated, not listed."""
    if label.count("_") + 1 < MIN_PHRASE_TOKENS:
        return False
    return f"{text}_".startswith(f"{label}_")


def _qualified(given: str, label: str) -> bool:
    """Every word of the label, in order, with at most MAX_QUALIFIERS added words and no negation."""
    words, wanted = given.split("_"), label.split("_")
    if len(wanted) < MIN_PHRASE_TOKENS or len(words) > len(wanted) + MAX_QUALIFIERS:
        return False
    position = 0
    for word in words:
        if position < len(wanted) and word == wanted[position]:
            position += 1
        elif word in NEGATIONS:
            return False
    return position == len(wanted)


def match_phrase(unit: Unit, submitted: Any) -> Match:
    """An open-vocabulary label (one the agent must phrase itself): the strict label rules, else the
    submitted phrase carries at least half of the content words of the label or of one of its
    acceptable variants (compared by their first PHRASE_STEM letters: dominant ~ dominance) and adds
    no negation."""
    strict = match(unit, submitted)
    if strict.verdict is Verdict.CORRECT:
        return strict
    phrases = [item for item in _phrases(submitted) if isinstance(item, str)]
    labels = (str(unit.gt), *unit.variants)
    if any(_same_concept(label, phrase) for label in labels for phrase in phrases):
        return _verdict(True, "phrase")
    if phrases and all(_word_count(phrase) > MAX_PHRASE_WORDS for phrase in phrases):
        # prose, not a phrase: whether it states the concept is for the judge
        return Match(verdict=Verdict.JUDGE_REQUIRED, rule="phrase", reason="submitted as prose")
    return _verdict(False, "phrase", f"{_brief(submitted)} does not state {unit.gt!r}")


def _phrases(submitted: Any) -> list[Any]:
    """What a submission states as phrases: itself, a list's items (an object item by its name), an
    object's value field or else its text fields (`{"finding": "...", "evidence": "..."}`)."""
    if isinstance(submitted, list):
        return [_item_name(item) if isinstance(item, dict) else item for item in submitted]
    if isinstance(submitted, dict):
        scalar = _scalar_of(submitted)
        return [scalar] if scalar is not None else _texts(submitted)
    return [submitted]


def _same_concept(label: str, phrase: str) -> bool:
    wanted = _content_words(label)
    given = _content_words(phrase)
    if not wanted or not given or _word_count(phrase) > MAX_PHRASE_WORDS:
        return False
    if (given - wanted) & _NEGATION_STEMS or _numbers_of(label) - _numbers_of(phrase):
        return False  # a negation, or other numbers (`grade_4_of_4` is not `grade_3_of_4`)
    return len(wanted & given) / len(wanted) >= PHRASE_COVERAGE


def _numbers_of(text: str) -> Counter[str]:
    return Counter(word for word in normalize_label(text[:MAX_TEXT_SCAN]).split("_") if word.isdigit())


def _word_count(text: str) -> int:
    return normalize_label(text[:MAX_TEXT_SCAN]).count("_") + 1


def _content_words(text: str) -> set[str]:
    words = normalize_label(text).split("_")
    return {word[:PHRASE_STEM] for word in words if word and word not in STOP_WORDS and not word.isdigit()}


def _is_path(value: str) -> bool:
    return "/" in value and " " not in value and bool(re.search(r"\.\w{2,5}$", value))


def _same_path(expected: str, given: str) -> bool:
    want = _REPOSITORY_PREFIX.sub("", expected.strip()).lstrip("./")
    got = _REPOSITORY_PREFIX.sub("", given.strip()).lstrip("./")
    return got == want or got.rsplit("/", 1)[-1] == want.rsplit("/", 1)[-1]


def _texts(submitted: Any) -> list[str]:
    """The strings of a submitted value: itself, a list's items, an object's values (one level)."""
    if isinstance(submitted, str):
        return [submitted]
    if isinstance(submitted, dict):
        return [value for value in submitted.values() if isinstance(value, str)]
    if isinstance(submitted, list):
        return [item for item in submitted if isinstance(item, str)]
    return []


def _items(submitted: Any) -> list[str]:
    """The normalised items of a submitted collection (list items, an item's name, an object's keys and
    text values: `{"start": "2019-09-01", ...}` holds the date)."""
    if isinstance(submitted, dict):
        keys = [normalize_label(key) for key in submitted]
        return keys + [_label_form(value) for value in submitted.values() if isinstance(value, str)]
    if isinstance(submitted, str) and _is_dates(submitted):
        # a date range (`2016-05-02 to 2016-05-09`) holds both its dates
        return [_label_form(date) for date in _DATE.findall(submitted)]
    if isinstance(submitted, str):
        return [_label_form(part) for part in re.split(r"\s*(?:[,;|]|->|→|>)\s*", submitted) if part]
    if not isinstance(submitted, list):
        return []
    items: list[str] = []
    for item in submitted:
        if isinstance(item, dict):
            item = _item_name(item)
        if isinstance(item, str | int | float) and not isinstance(item, bool):
            items.append(_label_form(item))
    return items


def _item_name(item: dict[str, Any]) -> Any:
    """An object's name as a list item: its identifying field, else its first string field."""
    named = next((item[key] for key in ID_FIELDS if isinstance(item.get(key), str)), None)
    return (
        named
        if named is not None
        else next((value for value in item.values() if isinstance(value, str)), None)
    )


def _match_ordering(unit: Unit, submitted: Any) -> Match:
    expected = [_label_form(item) for item in unit.gt]
    given = _items(submitted)
    if not given:
        return _verdict(False, "ordering", f"not a list: {_brief(submitted)}")
    return _verdict(given == expected, "ordering", "" if given == expected else f"order {given}")


def _match_member(unit: Unit, submitted: Any) -> Match:
    if _is_path(str(unit.gt)):
        found = any(_same_path(str(unit.gt), text) for text in _texts(submitted))
        return _verdict(found, "path in set", "" if found else f"{unit.gt!r} not among the submitted paths")
    member = _label_form(unit.gt)
    given = _items(submitted)
    if member in given:
        return _verdict(True, "set member")
    if isinstance(submitted, str) and _opens_with(_label_form(submitted), member):
        return _verdict(True, "set member stated first")
    return _verdict(False, "set member", f"{unit.gt!r} not among {len(given)} items")


def _match_text(unit: Unit, submitted: Any) -> Match:
    return Match(verdict=Verdict.JUDGE_REQUIRED, rule="judge")


def _brief(value: Any, limit: int = 80) -> str:
    """A short description of a submitted value for a reason; never walks a large container."""
    if isinstance(value, dict):
        return f"an object of {len(value)} fields"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    text = repr(value[: limit + 1] if isinstance(value, str) else value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_CHECKERS = {
    UnitKind.NUMBER: _match_number,
    UnitKind.FLAG: _match_boolean,
    UnitKind.TEST: _match_boolean,
    UnitKind.LABEL: _match_label,
    UnitKind.ORDERING: _match_ordering,
    UnitKind.SET: _match_member,
    UnitKind.TEXT: _match_text,
}
