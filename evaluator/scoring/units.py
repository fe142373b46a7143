"""Decomposing a task's ground truth into answer units with stable ids.

A unit is one checkable claim: a number, a flag (bool), a pass/fail test, a label, an ordering, a
member of a set, or free text (judge-required, outside U). Its id is its JSON path; an item of a list
of objects with an identifying field is addressed by it (`rows[row_id=burst]`), so ids do not depend
on list order, and the identifying field itself is not a unit (it names the item).

Leaves by kind:

- bool -> flag; number -> number, with its tolerance (tolerances.py, or a `tolerance` beside it);
- strings: `pass`/`fail`, or `pass: <reason>` / `fail_<reason>` -> test (the reason is prose);
  `"true"`/`"false"` -> flag; a number with a measurement unit (`2718364.9 people`, `13.0x`) ->
  number; `name=value` / `name: about value` (`drainage_index=2.374`) -> a number named `name`;
  three words or fewer without arithmetic -> label; `a:pass;b:reject` or `x=83.97; y=200.1` (two
  or more `name:value` pairs) -> a record of those fields; anything longer -> free text;
- lists: all labels -> one ordering when the key says so (`ranked_*`, `*_order`, `sequence`), else
  one set unit per member; all strings with some prose -> every item is free text (a chain of steps
  is prose, not a set of labels); objects -> by identifying field, else by position; numbers -> by
  position.

What is not a unit, and why:

- scoring metadata of the ground truth itself: tolerance tables and `tolerance` entries,
  `acceptable_variants` (they widen the sibling label's match instead; at the top level, the
  `answer`'s only), `judge_anchors`;
- identity and schema echoes the prompt dictates or the task record already holds: `answer_type`,
  `task_id`, `event_id`, `schema_version`, `target_family`, `task_mode`, `task_family`; an echo of
  the prompt carries no information;
- measurement units (`unit`, `units`): a label of the number beside it, not a claim;
- the answer's required shape (`row_ids`, `required_fields`, `answer_schema`, ...) and the prompt's
  own constants restated (`thresholds`, `weights`, `scoring_rule`): the prompt dictates them, so
  echoing them shows nothing, and a near-miss name (`date_offset_max_days`) would align them to the
  computed value they are compared with;
- null leaves and empty containers: nothing to check;
- repeats: a ground truth often states one value several times (`shelter_stress_index` at the top,
  in `deterministic_fields` and as a `required_metrics` row); it is one claim (`distinct`).

File paths of provenance (`source_paths`, `selected_source`) are units (labels compared as paths):
where the ground truth names them, the prompt asks the agent to pick those files. Some tasks keep the
values of the prompt's answer template in `key_values` rather than `primary_gt`;
`decompose_key_values` exposes those (answer.task_units picks the ones the template asks for).
"""

from __future__ import annotations

import math
import re
from enum import StrEnum
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from evaluator.scoring.tolerances import ToleranceTable, name_tokens, task_table
from loaders.tolerances import is_number

METADATA_KEYS = frozenset(
    {
        "answer_type",
        "task_id",
        "event_id",
        "package_id",
        "schema_version",
        "target_family",
        "task_mode",
        "task_family",
        "tolerance",
        "tolerances",
        "numeric_tolerances",
        "acceptable_variants",
        "judge_anchors",
        "unit",
        "units",
        "row_ids",
        "expected_rows",
        "required_rows",
        "required_row_ids",
        "required_fields",
        "required_output_fields",
        "required_schema_keys",
        "answer_schema",
        "threshold",
        "thresholds",
        "threshold_values",
        "thr",
        "tol",
        "weights",
        "scoring_weights",
        "scoring_rule",
        "priority_scoring_rule",
    }
)
VARIANT_KEYS = ("acceptable_variants", "accepted_variants", "acceptable_labels")
ID_FIELDS = (
    "row_id",
    "test_id",
    "gate_id",
    "check_id",
    "id",
    "name",
    "metric",
    "stage",
    "step",
    "hypothesis",
    "scenario",
    "mechanism",
    "candidate",
    "label",
    "source",
    "variable",
    "rank",
    "row",
    "key",
    "field",
    "test",
    "gate",
    "check",
)
"""Fields that identify an item of a list of objects, in order of preference."""
GENERIC_VALUE_KEYS = frozenset({"value", "target", "expected", "result", "computed_value", "score", "count"})
"""Keys that say nothing of what a value is: in a list item named `x`, the value is `x`."""
ORDERED_KEY_TOKENS = frozenset({"rank", "ranked", "ranking", "order", "ordered", "sequence", "ordering"})
"""A list of labels whose key holds one of these words is an ordering; any other list is a set."""
PASS_WORDS = frozenset({"pass", "passed", "passes"})
FAIL_WORDS = frozenset({"fail", "failed", "fails", "reject", "rejected"})
MAX_LABEL_WORDS = 3
"""Strings of more words than this are free text: labels are short (snake_case tags, names, dates)."""
MAX_LABEL_CHARS = 120
MAX_UNIT_WORDS = 2
MIN_PACKED_PAIRS = 2
CACHED_CHARS = 256
"""A measurement unit after a number is at most this many words (`km/h`, `million people`)."""

_FORMULA = re.compile(r"[=*+^<>()\[\]{};]|\s/\s|(?<![\d\-.])\d+(?:\.\d+)?\s*/\s*\d")
_NAMED_NUMBER = re.compile(
    r"^\s*([A-Za-z][\w.\- ]*?)\s*[=:]\s*(?:about|approximately|approx\.?|~|≈)?\s*"
    r"([-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(\S.*)?$"
)
_QUANTITY = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\d\-/:.])\s*([^\d=<>]*?)\s*$")
_PACKED_PAIR = re.compile(r"^([A-Za-z][\w.\-]*)\s*[:=]\s*([-+]?\d[\d.]*(?:\s*[A-Za-z/%]+)?|[A-Za-z][\w\-]*)$")
_TEST_PREFIX = re.compile(r"^(pass|fail)\s*(?:[:_]|\s-\s|\s—\s)")
_CAMEL = re.compile(r"([a-z])([A-Z])")
_SEPARATORS = re.compile(r"[^0-9a-z.%+]+")
_NON_DECIMAL_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)")


class UnitKind(StrEnum):
    NUMBER = "number"
    FLAG = "flag"
    TEST = "test"
    LABEL = "label"
    ORDERING = "ordering"
    SET = "set"
    TEXT = "text"


class Selector(BaseModel):
    """A list item addressed by its identifying field (`field == value`); `index`: its place in the GT."""

    model_config = ConfigDict(frozen=True)

    field: str
    value: str
    index: int

    def __str__(self) -> str:
        return f"[{self.field}={self.value}]"


PathStep = str | int | Selector
"""A dict key, a list position, or a list item by identifying field."""


class Unit(BaseModel):
    """One answer unit of a task's ground truth."""

    model_config = ConfigDict(frozen=True)

    id: str
    path: tuple[PathStep, ...]
    key: str
    kind: UnitKind
    gt: Any
    tolerance: float | None = None
    tolerance_source: str | None = None
    variants: tuple[str, ...] = ()
    judge_required: bool = False
    source: str = "primary_gt"
    """The part of the ground truth the unit comes from: `primary_gt` or `key_values`."""

    @property
    def name(self) -> str:
        """What the unit is about: its key or, for a generic key (`value`) of a named list item, the item."""
        if (
            self.key.lower() in GENERIC_VALUE_KEYS
            and len(self.path) > 1
            and isinstance(self.path[-2], Selector)
        ):
            return self.path[-2].value
        return normalize_label(self.key)


def decompose(ground_truth: dict[str, Any]) -> list[Unit]:
    """Every distinct unit of `ground_truth["primary_gt"]`, in document order, numbers with tolerances."""
    walker = _Walker(task_table(ground_truth), _variants(_as_dict(ground_truth.get("judge_anchors"))))
    walker.walk(ground_truth.get("primary_gt"), (), "answer", {})
    return distinct(walker.units)


def decompose_key_values(ground_truth: dict[str, Any]) -> list[Unit]:
    """Every unit of the ground truth's `key_values` (the reference analysis' named values), with ids
    under `key_values.`: candidates for template fields that `primary_gt` does not hold."""
    walker = _Walker(task_table(ground_truth), ())
    walker.walk(ground_truth.get("key_values"), ("key_values",), "key_values", {})
    return [unit.model_copy(update={"source": "key_values"}) for unit in walker.units]


def distinct(units: list[Unit]) -> list[Unit]:
    """One unit per claim, the shallowest of its repeats: claims are the same when they name the same
    thing with the same value, or are the same label of two or more words."""
    kept: dict[tuple[Any, ...], Unit] = {}
    for unit in units:
        keys = _claim_keys(unit)
        known = next((kept[key] for key in keys if key in kept), None)
        if known is not None and len(unit.path) >= len(known.path):
            continue
        replaced = [key for key, value in kept.items() if value is known] if known is not None else []
        for key in replaced + keys:
            kept[key] = unit
    survivors = {id(unit) for unit in kept.values()}
    return [unit for unit in units if id(unit) in survivors]


def path_id(path: tuple[PathStep, ...]) -> str:
    """The JSON path of a unit: `a.b[2].c`, `rows[row_id=x].value` (a set member's id adds `{member}`)."""
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        elif isinstance(step, Selector):
            text += str(step)
        else:
            text += f".{step}" if text else step
    return text or "$"


def identifying_field(items: list[Any]) -> str | None:
    """The field that tells the objects of a list apart (unique, non-empty string or int values), or None."""
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    for name in ID_FIELDS:
        values = [item.get(name) for item in items]
        if not all(isinstance(value, str | int) and not isinstance(value, bool) for value in values):
            continue
        normalized = [normalize_label(value) for value in values]
        if all(normalized) and len(set(normalized)) == len(normalized):
            return name
    return None


def normalize_label(value: Any) -> str:
    """A label in canonical form: lower case, camelCase split, every run of separators as one `_`."""
    text = value if isinstance(value, str) else str(value)
    # names and labels repeat and are short; long text would only fill the cache
    return _normalize(text) if len(text) <= CACHED_CHARS else _normalize.__wrapped__(text)


class _Walker:
    """Walks a ground-truth tree and collects its units."""

    def __init__(self, table: ToleranceTable, answer_variants: tuple[str, ...]) -> None:
        self.table = table
        self.answer_variants = answer_variants
        self.units: list[Unit] = []

    def walk(self, node: Any, path: tuple[PathStep, ...], key: str, siblings: dict[str, Any]) -> None:
        if isinstance(node, dict):
            self._walk_dict(node, path)
        elif isinstance(node, list):
            self._walk_list(node, path, key)
        elif isinstance(node, bool):
            self._add(path, key, UnitKind.FLAG, node)
        elif is_number(node):
            self._number(path, key, node, siblings)
        elif isinstance(node, str):
            self._string(path, key, node, siblings)

    def _walk_dict(self, node: dict[str, Any], path: tuple[PathStep, ...]) -> None:
        for key, child in node.items():
            name = str(key).lower()
            if name not in METADATA_KEYS and not name.endswith("_tolerance"):
                self.walk(child, (*path, str(key)), str(key), node)

    def _walk_list(self, node: list[Any], path: tuple[PathStep, ...], key: str) -> None:
        if node and all(isinstance(item, str) for item in node):
            self._string_list(node, path, key)
            return
        id_field = identifying_field(node)
        for index, item in enumerate(node):
            if id_field is None:
                self.walk(item, (*path, index), key, {})
                continue
            step = Selector(field=id_field, value=normalize_label(item[id_field]), index=index)
            rest = {name: value for name, value in item.items() if name != id_field}
            self.walk(rest, (*path, step), key, rest)

    def _string_list(self, node: list[str], path: tuple[PathStep, ...], key: str) -> None:
        if all(_is_label(item) for item in node):
            if ORDERED_KEY_TOKENS & set(name_tokens(key)):
                self._add(path, key, UnitKind.ORDERING, list(node))
                return
            for member in node:
                self._add(path, key, UnitKind.SET, member, suffix=f"{{{member}}}")
            return
        for index, item in enumerate(node):
            if _NAMED_NUMBER.match(item):
                self._string((*path, index), key, item, {})
            else:
                self._add((*path, index), key, UnitKind.TEXT, item, judge_required=True)

    def _string(self, path: tuple[PathStep, ...], key: str, value: str, siblings: dict[str, Any]) -> None:
        packed = _packed_pairs(value)
        if packed is not None:
            # `a:pass;b:reject`, `x=83.97; y=200.1`: a record written as one string
            self._walk_dict(packed, path)
            return
        word = value.strip().lower()
        outcome = _TEST_PREFIX.match(word)
        quantity = _QUANTITY.match(value)
        named = _NAMED_NUMBER.match(value)
        if word in PASS_WORDS | FAIL_WORDS or outcome:
            self._add(path, key, UnitKind.TEST, (outcome.group(1) if outcome else word) in PASS_WORDS)
        elif word in ("true", "false"):
            self._add(path, key, UnitKind.FLAG, word == "true")
        elif quantity and _unit_suffix(quantity.group(2)):
            self._number(path, key, _as_written(quantity.group(1)), siblings)
        elif named and _unit_suffix(named.group(3)):
            # `drainage_index=2.374` states a number named drainage_index; its list position carries nothing
            name = named.group(1).strip()
            parent = path[:-1] if path and isinstance(path[-1], int) else path
            self._number((*parent, name), name, _as_written(named.group(2)), {})
        elif _is_label(value):
            self._add(path, key, UnitKind.LABEL, value, variants=self._label_variants(path, siblings))
        else:
            self._add(path, key, UnitKind.TEXT, value, judge_required=True)

    def _label_variants(self, path: tuple[PathStep, ...], siblings: dict[str, Any]) -> tuple[str, ...]:
        """The acceptable variants of a label: those listed beside it; at the top level, where they
        stand among every field of the answer, they and the judge anchors' vary the `answer` alone
        (`critical` as a priority band is not `immediate coastal-evacuation order`)."""
        if len(path) != 1:
            return _variants(siblings)
        return _variants(siblings) + self.answer_variants if path == ("answer",) else ()

    def _number(
        self, path: tuple[PathStep, ...], key: str, value: int | float, siblings: dict[str, Any]
    ) -> None:
        if not math.isfinite(value):
            return
        beside = siblings.get("tolerance")
        if is_number(beside) and key != "tolerance":
            tolerance, source = abs(float(beside)), "gt:tolerance"
        else:
            found = self.table.lookup(_tolerance_name(path, key), value)
            tolerance, source = found.value, found.source
        self._add(path, key, UnitKind.NUMBER, value, tolerance=tolerance, tolerance_source=source)

    def _add(
        self, path: tuple[PathStep, ...], key: str, kind: UnitKind, gt: Any, suffix: str = "", **extra: Any
    ) -> None:
        self.units.append(Unit(id=path_id(path) + suffix, path=path, key=key, kind=kind, gt=gt, **extra))


def _as_written(text: str) -> int | float:
    """A number as written: `15` a whole number, `15.0` a decimal (their precisions differ)."""
    digits = text.replace(",", "")
    return int(digits) if digits.lstrip("+-").isdigit() else float(digits)


def _packed_pairs(value: str) -> dict[str, str] | None:
    """`name:value` / `name=value` pairs joined by `;`, each value a single word or number (with a
    unit), as a record; None for anything else (formulas, prose, one pair)."""
    parts = [part.strip() for part in value.split(";") if part.strip()]
    if len(parts) < MIN_PACKED_PAIRS:
        return None
    pairs: dict[str, str] = {}
    for part in parts:
        found = _PACKED_PAIR.match(part)
        if found is None or found.group(1) in pairs:
            return None
        pairs[found.group(1)] = found.group(2)
    return pairs


def _claim_keys(unit: Unit) -> list[tuple[Any, ...]]:
    gt = unit.gt
    claim = tuple(normalize_label(item) for item in gt) if isinstance(gt, list) else gt
    keys: list[tuple[Any, ...]] = [
        (unit.kind, unit.name, normalize_label(claim) if isinstance(gt, str) else claim)
    ]
    if unit.kind is UnitKind.LABEL and "_" in normalize_label(gt):
        keys.append((unit.kind, normalize_label(gt)))
    return keys


def _tolerance_name(path: tuple[PathStep, ...], key: str) -> str:
    """The field a tolerance is stated for: the key or, for a generic key of a named list item, the item."""
    if key.lower() in GENERIC_VALUE_KEYS and len(path) > 1 and isinstance(path[-2], Selector):
        return path[-2].value
    return key


def _unit_suffix(text: str | None) -> bool:
    """Nothing, or a measurement unit after a number (`ppb`, `x`, `mm/day`): not prose, not arithmetic."""
    if text is None:
        return True
    return (
        len(text.split()) <= MAX_UNIT_WORDS
        and not _FORMULA.search(text)
        and not any(c.isdigit() for c in text)
    )


def _is_label(value: str) -> bool:
    text = value.strip()
    if not text or _FORMULA.search(text):
        return False
    return len(text.split()) <= MAX_LABEL_WORDS and len(text) <= MAX_LABEL_CHARS


@lru_cache(maxsize=65536)
def _normalize(value: str) -> str:
    spaced = _CAMEL.sub(r"\1_\2", value)
    spaced = _NON_DECIMAL_DOT.sub(" ", spaced.replace("≥", "ge").replace("≤", "le"))
    return _SEPARATORS.sub("_", spaced.lower()).strip("_")


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _variants(siblings: dict[str, Any]) -> tuple[str, ...]:
    for key in VARIANT_KEYS:
        found = siblings.get(key)
        if isinstance(found, list):
            return tuple(str(item) for item in found if isinstance(item, str))
    return ()
