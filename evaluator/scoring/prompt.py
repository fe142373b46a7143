"""What a task's public prompt asks for, and in whose words; the prompt is public, so reading it is fair.

Requested units. The ground truth often carries more than the prompt asks an agent to return: the
authors' ledger rows, intermediate values, audit fields. An agent cannot be expected to return a
field the prompt never names. So a unit is *requested* when the prompt names its key or, for a
one-word key (`days`, `value`, `result`), its parent: the key joined to the parent's
(`event_window_days`), the parent (`event_window`), or the row it belongs to (`rows[row_id=burst]`).
The task's top-level `answer` is always requested. A unit neither requested nor answered is left out
of U (`unrequested`); one the submission does answer is scored whether requested or not. A date the
prompt itself gives (`Use the package event window from 2015-10-01 through 2016-03-31`) and the
answer does not restate is left out too: an input, not a result.

Open vocabulary. A label the prompt offers as a label, quoted, in code or as a snake_case word
(`Set threshold_state to "pass" or "partial"`, `classify it as point_evidence_dry_hot_not_humid_dominated`),
must be used as written. A label in the authors' own words that the prompt never gives
(`"answer": "<compact_priority_label>"`) the agent must phrase itself; such a unit is matched as a
phrase (matching.match_phrase). The same words in the prompt's prose or title (`# Sustained Marine
Heat-Stress Diagnosis`) describe the task; they do not give the label.

Template. The prompt's fenced JSON answer template names the fields it wants (`shapes`); answer.py
uses it to pick the `key_values` entries of tasks that keep templated values there.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from evaluator.scoring.units import Selector, Unit, UnitKind, normalize_label


class Prompt:
    """A task's prompt, normalised once for name look-ups."""

    def __init__(self, question: str) -> None:
        self.text = f"_{normalize_label(question)}_"
        self.dates = frozenset(_ISO_DATE.findall(question))
        self.template_keys = frozenset(
            normalize_label(key) for block in _FENCE.findall(question) for key in _JSON_KEY.findall(block)
        )
        spans = (*map("".join, _QUOTED.findall(question)), *_SNAKE.findall(question))
        pieces = (piece for span in spans for piece in _OPTION_SEPARATOR.split(span))
        self.offered = frozenset(label for piece in pieces if (label := normalize_label(piece)))

    def shapes(self, unit: Unit) -> bool:
        """Whether the prompt's answer template has the unit's field (`"rain_rate_mm_day": 0`); a
        one-word field (`days`) only under a templated parent (`event_window`)."""
        keys = [normalize_label(step) for step in unit.path if isinstance(step, str)]
        if not keys or keys[-1] not in self.template_keys:
            return False
        return not _one_word(keys[-1]) or (len(keys) > 1 and keys[-2] in self.template_keys)

    def names(self, name: str) -> bool:
        """Whether the prompt states `name` as a whole word sequence (`rain_rate_mm_day`, `event window`)."""
        wanted = normalize_label(name)
        return bool(wanted) and f"_{wanted}_" in self.text

    def requests(self, unit: Unit) -> bool:
        """Whether the prompt asks for this unit (see the module docstring)."""
        keys = [step for step in unit.path if isinstance(step, str)]
        if keys == ["answer"]:
            return True
        if not keys:
            return False
        key = keys[-1]
        if not _one_word(key):
            return self.names(key)
        parent = unit.path[-2] if len(unit.path) > 1 else None
        if isinstance(parent, Selector):
            return self.names(parent.value)
        return isinstance(parent, str) and (self.names(f"{parent}_{key}") or self.names(parent))

    def gives(self, unit: Unit) -> bool:
        """Whether the prompt itself states the unit's value as an input: a date it gives (`Use the
        package event window from 2015-10-01 through 2016-03-31`)."""
        return isinstance(unit.gt, str) and unit.gt.strip() in self.dates

    def leaves_open(self, unit: Unit) -> bool:
        """Whether a label unit uses vocabulary the prompt does not give: an authored concept tag or
        phrase (`glacier_outburst_cascade`, `Orange ash advisory`) the agent must phrase itself.
        The ground truth's acceptable variants widen what matches; they do not make the vocabulary given."""
        if unit.kind not in (UnitKind.LABEL, UnitKind.SET, UnitKind.ORDERING):
            return False
        values = unit.gt if isinstance(unit.gt, list) else [unit.gt]
        if any(self.offers(variant) for variant in unit.variants):
            return False
        return any(_authored(value) and not self.offers(value) for value in values)

    def offers(self, label: str) -> bool:
        """Whether the prompt gives `label` as a label: quoted, in code, or as a snake_case word."""
        return normalize_label(label) in self.offered


@lru_cache(maxsize=1024)
def prompt_of(question: str) -> Prompt:
    """A task's prompt, read once: it serves every answer scored against the task."""
    return Prompt(question)


_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_FENCE = re.compile(r"```[a-zA-Z]*\s*\n(.*?)```", re.DOTALL)
_JSON_KEY = re.compile(r'"([^"\n]{1,80})"\s*:')
_QUOTED = re.compile(r'`([^`\n]{1,200})`|"([^"\n]{1,200})"|“([^”\n]{1,200})”')
_SNAKE = re.compile(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+")
_OPTION_SEPARATOR = re.compile(r"\s*(?:[|,;/]|\bor\b)\s*")


def _authored(value: Any) -> bool:
    """A concept tag or phrase of the authors' own words: two or more words, no digits, no proper names
    or acronyms (a capital letter beyond the first), as opposed to an extracted name, date, path or
    field (`daily.soil_moisture_index`)."""
    text = str(value).strip()
    if not text or any(char.isdigit() for char in text) or "/" in text or "." in text:
        return False
    return text[1:] == text[1:].lower() and "_" in normalize_label(text)


def _one_word(key: str) -> bool:
    return "_" not in normalize_label(key)
