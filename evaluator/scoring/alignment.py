"""Aligning a submitted answer's fields to the ground truth's units.

Submissions nest their fields differently from the ground truth: extra wrapper objects, renamed
parents, flattened keys (`basin_metrics.snow_cm`, `event_window_days`, or the reverse: the ground
truth's `event_window_days` as `event_window.days`; a dot between digits, `annual_mean_lt_0.08`, is a
decimal point), lists of objects in another order, objects keyed by the id the ground truth keeps
in a field. A unit is aligned to the submitted field that best matches its path:

1. candidates are the fields whose name equals the unit's key (after normalisation), a flattened
   suffix of its path, or, for `rows[name=x].value`, the item's name `x` (a name of two or more
   words stands for the item under any parent: `key_metrics.event_window_years`); else a list item
   whose identifying field equals the key (`{"burst": "pass"}` ~ `[{"row_id": "burst", "result": "PASS"}]`)
   or the formula symbol that leads the key (`E` for `E_early_active_days`); else fields whose
   name holds every word of the key (`tmax35_run_days` ~ `longest_run_tmax_ge_35_run_days`, numbers
   in names must agree), of a compatible type, not named exactly like another unit (that field is the
   other unit's), and under the field named like the unit's parent when the submission has one;
   for the task's top-level `answer` label, last, a top-level field the prompt may call the answer
   (`diagnosis`, `final_label`, ...), and for a numeric `answer`, the one top-level score (`score`,
   `total_score`);
2. each candidate scores by how much of the unit's path it sits under, in order (a weighted longest
   common subsequence of path steps: same parent names, list items with the same identifying value,
   the same position among items that carry no name); a candidate inside the item of *another*
   ground-truth row is excluded, and so is one inside an item of the row's list named with none of the
   row's words (the agent's own row names), and a one-word key (`start`, `mean`) needs some of its path
   to agree;
3. the best candidate wins; among equally good ones, the one holding a right value; an object found
   for a label or number gives the field inside it that holds the value (`{"classification": x}`);
4. with no candidate by name, the value itself is looked for: anywhere when it is too specific to
   coincide (a number of three or more significant digits, a label of two or more words), otherwise
   only among the fields of the container the unit belongs to, and there a number only as the ground
   truth writes it (rounded to its decimals; whole for a whole number); a specific number may also be
   written inside a sentence (`"peak 484.25 mm at the coast"`). Such an alignment is marked `by_value`.

The submission is indexed once (`SubmissionIndex`), with caps on depth, size and string length, so a
hostile answer costs bounded time and memory.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from evaluator.scoring.matching import as_number, is_correct, numbers_in_text, significant_digits
from evaluator.scoring.tolerances import FLOAT_NOISE, name_tokens, stated_decimals
from evaluator.scoring.units import ID_FIELDS, METADATA_KEYS, Selector, Unit, UnitKind, normalize_label

MAX_DEPTH = 40
MAX_NODES = 20_000
MAX_STRING_CHARS = 20_000
"""Submitted strings are read up to this many characters: no answer field is longer in earnest."""
MAX_LABEL_CHARS = 200
MAX_SENTENCE_CHARS = 1000
FUZZY_MIN_COVERAGE = 1.0
FUZZY_MIN_JACCARD = 0.34
DISTINCTIVE_DIGITS = 3
_KEY_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)")
"""A dot that separates the parts of a flattened key, not a decimal point."""
_SYMBOL_KEY = re.compile(r"^([A-Za-z]{1,2})_[A-Za-z]")
"""A key led by a formula symbol (`E_early_active_days` for `E` in the prompt's formula)."""
ANSWER_ALIASES = frozenset(
    {
        "answer_label",
        "final_answer",
        "final_label",
        "label",
        "diagnosis",
        "diagnosis_label",
        "classification",
        "final_classification",
        "class_label",
        "decision",
        "conclusion",
        "ruling",
        "mechanism_ruling",
        "priority",
        "verdict",
    }
)
"""Names a prompt gives the main answer label, which the ground truth calls `answer`."""


@dataclass(eq=False, slots=True)
class Node:
    """One submitted value with its place: key (or list position), parent, and the ids it carries."""

    key: str | int | None
    value: Any
    parent: Node | None
    depth: int
    norm: str = ""
    tokens: frozenset[str] = frozenset()
    ids: frozenset[str] = frozenset()
    prefix: tuple[str, ...] = ()
    order: int = 0
    number: float | None = None
    label: str | None = None
    children: list[Node] = field(default_factory=list)
    ancestry: list[tuple[str, Any, frozenset[str]]] | None = None
    """`steps()`, worked out on first use: every unit of a task compares its path with it."""
    stated: list[float] | None = None
    """`stated_numbers()`, worked out on first use."""

    def path(self) -> tuple[str | int, ...]:
        steps: list[str | int] = []
        node: Node | None = self
        while node is not None and node.key is not None:
            steps.append(node.key)
            node = node.parent
        return tuple(reversed(steps))

    def ancestors(self) -> list[Node]:
        chain: list[Node] = []
        node = self.parent
        while node is not None and node.key is not None:
            chain.append(node)
            node = node.parent
        return list(reversed(chain))

    def steps(self) -> list[tuple[str, Any, frozenset[str]]]:
        """The node's ancestry as path steps (see `_steps`)."""
        if self.ancestry is None:
            self.ancestry = _steps(self.ancestors(), self.prefix)
        return self.ancestry

    def stated_numbers(self) -> list[float]:
        """The numbers the node's text states (see `_text_numbers`)."""
        if self.stated is None:
            self.stated = _text_numbers(self)
        return self.stated


@dataclass
class SubmissionIndex:
    """Every field of a submitted answer, by normalised name, built once per answer."""

    root: Node
    nodes: list[Node] = field(default_factory=list)
    by_name: dict[str, list[Node]] = field(default_factory=dict)
    by_joined: dict[str, list[Node]] = field(default_factory=dict)
    by_item_id: dict[str, list[Node]] = field(default_factory=dict)
    truncated: bool = False

    @classmethod
    def build(cls, answer: Any) -> SubmissionIndex:
        """Index `answer`; deeper than MAX_DEPTH or beyond MAX_NODES fields is left out (and flagged)."""
        root = Node(key=None, value=answer, parent=None, depth=0)
        index = cls(root=root)
        stack = [root]
        while stack:
            node = stack.pop()
            if node.depth >= MAX_DEPTH:
                index.truncated = True
                continue
            room = MAX_NODES - len(index.nodes)
            children = list(itertools.islice(_children(node), room + 1))
            if len(children) > room:
                index.truncated = True
                children = children[:room]
            node.children = children
            for child in children:
                child.order = len(index.nodes)
                _read_scalar(child)
                index.nodes.append(child)
                if child.norm:
                    index.by_name.setdefault(child.norm, []).append(child)
                if child.norm and node.norm:
                    index.by_joined.setdefault(f"{node.norm}_{child.norm}", []).append(child)
                for item_id in child.ids if isinstance(child.key, int) else ():
                    index.by_item_id.setdefault(item_id, []).append(child)
            stack.extend(reversed(children))
        return index


def _read_scalar(node: Node) -> None:
    """Pre-read a leaf as a number and as a label, for value search."""
    if isinstance(node.value, str) and len(node.value) <= MAX_LABEL_CHARS:
        node.label = normalize_label(node.value)
    if not isinstance(node.value, dict | list):
        node.number = as_number(node.value)


def _children(node: Node) -> Iterator[Node]:
    value, depth = node.value, node.depth + 1
    if isinstance(value, dict):
        for key, child in value.items():
            yield _keyed(str(key)[:MAX_LABEL_CHARS], _bounded(child), node, depth)
    elif isinstance(value, list):
        for position, child in enumerate(value):
            yield Node(key=position, value=_bounded(child), parent=node, depth=depth, ids=_item_ids(child))


def _bounded(value: Any) -> Any:
    return value[:MAX_STRING_CHARS] if isinstance(value, str) else value


def _keyed(key: str, value: Any, parent: Node, depth: int) -> Node:
    # a flattened key (`basin_metrics.snow_cm`) is the field `snow_cm` under `basin_metrics`; a dot
    # between digits is a decimal point (`annual_mean_lt_0.08`)
    parts = [part for part in _KEY_DOT.split(key) if part] if "." in key and not _numeric(key) else [key]
    last = parts[-1] if parts else key
    norm = normalize_label(last)
    prefix = tuple(normalize_label(part) for part in parts[:-1])
    return Node(
        key=key,
        value=value,
        parent=parent,
        depth=depth,
        norm=norm,
        tokens=frozenset(name_tokens(last)),
        ids=_item_ids(value),
        prefix=prefix,
    )


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _item_ids(value: Any) -> frozenset[str]:
    if not isinstance(value, dict):
        return frozenset()
    found = {normalize_label(value[key]) for key in ID_FIELDS if isinstance(value.get(key), str | int)}
    return frozenset(item for item in found if item and not isinstance(value.get(item), bool))


class Alignment(BaseModel):
    """Where a unit's value was found in the submission, and by which rule (None: nothing aligned)."""

    path: tuple[str | int, ...] | None = None
    value: Any = None
    rule: str = "missing"
    found: bool = False
    by_value: bool = False
    """Found by its value alone (no name led to it)."""


class Aligner:
    """Aligns the units of one task to one submitted answer."""

    def __init__(self, units: list[Unit], index: SubmissionIndex) -> None:
        self.index = index
        self.row_ids = {step.value for unit in units for step in unit.path if isinstance(step, Selector)}
        # a field named exactly like some unit belongs to that unit, not to another unit's near-miss name
        self.claimed = {
            id(node) for unit in units for node in index.by_name.get(normalize_label(unit.key), ())
        }
        self._fuzzy_cache: dict[str, list[tuple[float, str]]] = {}
        self._by_token: dict[str, set[str]] | None = None

    def align(self, unit: Unit) -> Alignment:
        """The submitted field for `unit` (see the module docstring for the rules)."""
        anchor_at = _anchor_position(unit)
        if anchor_at is None:
            return Alignment(path=(), value=self.index.root.value, rule="whole answer", found=True)
        scope = unit.path[:anchor_at]
        tail = unit.path[anchor_at + 1 :]
        best = self._best(unit, self._candidates(unit, anchor_at), scope, tail)
        if best is None:
            return self._value_search(unit, scope, self.index.nodes)
        node, rule = best
        if tail and _apply_tail(node.value, tail) is None:
            # the named list is there but not as a list: look for the value inside what is there
            return self._value_search(unit, unit.path[: anchor_at + 1], _descendants(node))
        inner = _inner_field(unit, node) if not tail else None
        if inner is not None:
            return _aligned(inner, None, f"{rule}, field inside")
        return _aligned(node, _apply_tail(node.value, tail), rule)

    def _candidates(self, unit: Unit, anchor_at: int) -> list[tuple[Node, float, int, str]]:
        """(node, name quality, path steps the name itself covers, rule) for every name-matching field."""
        names = [step for step in unit.path[: anchor_at + 1] if isinstance(step, str)]
        found: list[tuple[Node, float, int, str]] = []
        for covered in range(len(names)):
            joined = normalize_label("_".join(names[len(names) - 1 - covered :]))
            for node in self.index.by_name.get(joined, ()):
                found.append((node, 2.0, covered, "key" if covered == 0 else "flattened key"))
            for node in self.index.by_joined.get(joined, ()) if covered == 0 else ():
                found.append((node, 2.0, 0, "split key"))
        alias = _item_name(unit, anchor_at)
        # a name of two or more words (`event_window_years`) is specific enough to stand for its item
        named_item = 1 if alias and "_" in alias else 0
        for node in self.index.by_name.get(alias, ()) if alias else ():
            found.append((node, 2.0, named_item, "item name as key"))
        for node in self.index.by_item_id.get(normalize_label(unit.key), ()) if not found else ():
            found.append((node, 1.8, 1, "list item named like the key"))
        symbol = _SYMBOL_KEY.match(unit.key)
        for node in self.index.by_name.get(symbol.group(1).lower(), ()) if symbol and not found else ():
            found.append((node, 1.5, 0, "formula symbol"))
        if found:
            return found
        parent = self._parent_field(unit, anchor_at)
        for quality, name in self._fuzzy_names(names[-1]):
            for node in self.index.by_name.get(name, ()):
                found.append((node, quality, 0, "similar key"))
            for node in self.index.by_joined.get(name, ()):
                found.append((node, quality, 0, "similar split key"))
        found = [item for item in found if self._near_miss_allowed(item[0], parent)]
        if found or unit.path[:1] != ("answer",) or anchor_at != 0:
            return found
        if unit.kind is UnitKind.NUMBER:
            return [(node, 1.0, 0, "answer score") for node in self._answer_score()]
        if unit.kind is UnitKind.LABEL:
            return [(node, 1.0, 0, "answer field") for node in self._answer_fields()]
        return found

    def _near_miss_allowed(self, node: Node, parent: list[Node]) -> bool:
        """A near-miss name may align unless its field is another unit's namesake, an echo of the
        prompt's metadata (`answer_type`), or outside the field named like the unit's parent."""
        return id(node) not in self.claimed and node.norm not in METADATA_KEYS and _under(node, parent)

    def _parent_field(self, unit: Unit, anchor_at: int) -> list[Node]:
        """The submitted fields named like the unit's parent: a near-miss name must sit under one of them."""
        parent = unit.path[anchor_at - 1] if anchor_at > 0 else None
        return list(self.index.by_name.get(normalize_label(parent), ())) if isinstance(parent, str) else []

    def _answer_fields(self) -> list[Node]:
        """Top-level fields that hold the answer under another name (`diagnosis`, `final_label`, ...)."""
        return [
            node
            for node in self.index.nodes
            if node.parent is self.index.root and isinstance(node.value, str) and node.norm in ANSWER_ALIASES
        ]

    def _answer_score(self) -> list[Node]:
        """The one top-level score (`score`, `total_score`) of an answer whose ground truth is a number:
        the task's computed result under the name its prompt gives it; with several, none is the answer."""
        scores = [
            node
            for node in self.index.nodes
            if node.parent is self.index.root
            and node.number is not None
            and (node.norm == "score" or node.norm.endswith("_score"))
        ]
        return scores if len(scores) == 1 else []

    def _fuzzy_names(self, key: str) -> list[tuple[float, str]]:
        """Submitted names holding every word of `key` (FUZZY_MIN_COVERAGE is 1), with their similarity."""
        if key in self._fuzzy_cache:
            return self._fuzzy_cache[key]
        wanted = set(name_tokens(key))
        holders = [self._names_with(token) for token in wanted]
        names = set.intersection(*holders) if holders else set()
        # in name order: equal candidates must rank alike in every process (a set follows the hash seed)
        matches = [
            (similarity, name) for name in sorted(names) if (similarity := _similarity(wanted, _tokens(name)))
        ]
        self._fuzzy_cache[key] = matches
        return matches

    def _names_with(self, token: str) -> set[str]:
        if self._by_token is None:
            self._by_token = {}
            for name in (*self.index.by_name, *self.index.by_joined):
                for word in _tokens(name):
                    self._by_token.setdefault(word, set()).add(name)
        return self._by_token.get(token, set())

    def _best(
        self,
        unit: Unit,
        candidates: list[tuple[Node, float, int, str]],
        scope: tuple[Any, ...],
        tail: tuple[Any, ...],
    ) -> tuple[Node, str] | None:
        own_rows = {step.value for step in unit.path if isinstance(step, Selector)}
        foreign = self.row_ids - own_rows
        lists = _row_lists(unit)
        # a one-word key (`start`, `mean`) says little alone: it must sit under something of its path
        loose = "_" not in normalize_label(unit.key) and bool(scope)
        ranked: list[tuple[float, Node, str]] = []
        for node, quality, covered, rule in candidates:
            if quality < 2.0 and not _compatible(unit, node.value):
                continue
            chain = node.ancestors()
            if foreign and _inside_rows(chain, foreign, own_rows):
                continue
            if lists and _named_otherwise(chain, lists):
                continue
            context = scope[: len(scope) - covered] if covered else scope
            fit = _path_fit(context, node.steps())
            if loose and not covered and fit <= 0:
                continue
            ranked.append((quality + fit - 0.01 * len(chain), node, rule))
        if not ranked:
            return None
        top = max(score for score, _, _ in ranked)
        # ties go to a field holding a right value, then to the first field: checked for the tied only
        tied = [(node, rule) for score, node, rule in ranked if score == top]

        def preference(pair: tuple[Node, str]) -> tuple[bool, int]:
            return is_correct(unit, _apply_tail(pair[0].value, tail)), -pair[0].order

        return max(tied, key=preference)

    def _value_search(self, unit: Unit, scope: tuple[Any, ...], space: Iterable[Node]) -> Alignment:
        """A field anywhere in `space` holding the unit's value, if the value is too specific to coincide
        or the field sits directly in the container the unit belongs to."""
        distinctive = _distinctive(unit)
        if not distinctive and not _scoped_searchable(unit, scope):
            return Alignment()
        space = list(space)
        ranked: list[tuple[float, int, Node]] = []
        for node in _plausible(unit, space):
            near = bool(scope) and node.parent is not None and _parent_fit(scope[-1], node.parent) >= 1.0
            if not (distinctive or near):
                continue
            # a common value found by itself must be the ground truth as written, not merely near it
            if is_correct(unit, node.value) and (distinctive or _is_gt_as_written(unit, node.number)):
                ranked.append((_path_fit(scope, node.steps()), -node.order, node))
        if not ranked:
            return self._stated_in_text(unit, scope, space) if distinctive else Alignment()
        found = _aligned(max(ranked, key=lambda item: item[:2])[2], None, "value search")
        return found.model_copy(update={"by_value": True})

    def _stated_in_text(self, unit: Unit, scope: tuple[Any, ...], space: list[Node]) -> Alignment:
        """A distinctive number written inside a submitted sentence (`"peak 484.25 mm at the coast"`)."""
        if unit.kind is not UnitKind.NUMBER:
            return Alignment()
        ranked: list[tuple[float, int, Node, float]] = []
        for node in space:
            for number in node.stated_numbers():
                if is_correct(unit, number):
                    ranked.append((_path_fit(scope, node.steps()), -node.order, node, number))
                    break
        if not ranked:
            return Alignment()
        _, _, node, number = max(ranked, key=lambda item: item[:2])
        found = _aligned(node, number, "value stated in text")
        return found.model_copy(update={"by_value": True})


def _compatible(unit: Unit, value: Any) -> bool:
    """Whether a value could be an answer of the unit's kind (a yes/no is not a number, nor the reverse)."""
    if unit.kind in (UnitKind.FLAG, UnitKind.TEST):
        return not isinstance(value, int | float) or isinstance(value, bool)
    if unit.kind is UnitKind.NUMBER:
        return not isinstance(value, bool)
    return True


def _is_gt_as_written(unit: Unit, number: float | None) -> bool:
    """Whether a number is the unit's ground truth as written: rounded to the decimals the ground truth
    states, and whole where the ground truth is a whole number (a count of 9 is not 9.12 hours)."""
    if unit.kind is not UnitKind.NUMBER:
        return True
    if number is None:
        return False
    gt = unit.gt
    noise = FLOAT_NOISE * max(1.0, abs(float(gt)))
    half_step = 0.0 if isinstance(gt, int) else 0.5 * 10.0 ** -stated_decimals(gt)
    return abs(number - gt) <= half_step + noise


def _inner_field(unit: Unit, node: Node) -> Node | None:
    """For a label or number aligned to an object (`"answer": {"classification": "x"}`,
    `"era5": {"max": 261.6, "mean": 214.3}`), the field of the object that holds the unit's value."""
    if unit.kind not in (UnitKind.LABEL, UnitKind.NUMBER) or not isinstance(node.value, dict):
        return None
    if unit.kind is UnitKind.NUMBER and as_number(node.value) is not None:
        return None
    fields = [child for child in node.children if not isinstance(child.value, dict | list)]
    right = [child for child in fields if is_correct(unit, child.value)]
    named = [
        child for child in fields if child.norm in ANSWER_ALIASES or child.norm == normalize_label(unit.key)
    ]
    return (right or named or [None])[0]


def _text_numbers(node: Node) -> list[float]:
    """The numbers a submitted sentence states (not a bare number: that one is `node.number`); longer
    text is a document (a program, a log) whose numbers are not statements of the answer."""
    if not isinstance(node.value, str) or node.number is not None or len(node.value) > MAX_SENTENCE_CHARS:
        return []
    return numbers_in_text(node.value)


def _plausible(unit: Unit, space: Iterable[Node]) -> Iterator[Node]:
    """A cheap pre-filter of value-search candidates: near numbers, equal labels, lists for set members."""
    if unit.kind is UnitKind.NUMBER:
        gt, slack = float(unit.gt), (unit.tolerance or 0.0) + 1e-6 * max(1.0, abs(float(unit.gt)))
        return (node for node in space if node.number is not None and abs(node.number - gt) <= slack)
    if unit.kind is UnitKind.LABEL:
        wanted = {normalize_label(unit.gt), *(normalize_label(variant) for variant in unit.variants)}
        return (node for node in space if node.label is not None and node.label in wanted)
    if unit.kind is UnitKind.SET:
        return (node for node in space if isinstance(node.value, list))
    return iter(())


def _aligned(node: Node, value: Any, rule: str) -> Alignment:
    return Alignment(path=node.path(), value=node.value if value is None else value, rule=rule, found=True)


def _under(node: Node, parents: list[Node]) -> bool:
    """Whether `node` lies under one of `parents` (vacuously true when there are none)."""
    if not parents:
        return True
    ancestors = {id(ancestor) for ancestor in node.ancestors()}
    return any(id(parent) in ancestors for parent in parents)


def _descendants(node: Node) -> Iterator[Node]:
    stack = list(node.children)
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _scoped_searchable(unit: Unit, scope: tuple[Any, ...]) -> bool:
    """Values worth looking for among a container's fields: numbers other than 0, and labels."""
    if not scope:
        return False
    if unit.kind is UnitKind.NUMBER:
        return float(unit.gt) != 0
    return unit.kind in (UnitKind.LABEL, UnitKind.SET)


def _parent_fit(wanted: Any, parent: Node) -> float:
    step = (
        ("item", parent.key, parent.ids) if isinstance(parent.key, int) else ("key", parent.norm, parent.ids)
    )
    return _step_fit(wanted, step)


def _item_name(unit: Unit, anchor_at: int) -> str | None:
    """For `rows[name=x].value`, the item's name `x`: a submission may key the value by it."""
    name = unit.name
    return name if name != normalize_label(unit.key) and anchor_at > 0 else None


def _anchor_position(unit: Unit) -> int | None:
    """Where in the unit's path its key is: the last dict key (list positions after it are the tail)."""
    for position in range(len(unit.path) - 1, -1, -1):
        if isinstance(unit.path[position], str):
            return position
    return None


def _apply_tail(value: Any, tail: tuple[Any, ...]) -> Any:
    for step in tail:
        if isinstance(step, int) and isinstance(value, list) and step < len(value):
            value = value[step]
        else:
            return None
    return value


@lru_cache(maxsize=65536)
def _tokens(name: str) -> frozenset[str]:
    return frozenset(name_tokens(name))


def _similarity(wanted: set[str], tokens: frozenset[str]) -> float | None:
    """How well a submitted name covers a wanted name's words, or None when too little."""
    if not wanted or not tokens:
        return None
    if any(token.isdigit() and token not in tokens for token in wanted):
        return None  # `local_5d_mm` is not `local_15d_mm`: numbers in names must agree
    shared = len(wanted & tokens)
    coverage = shared / len(wanted)
    jaccard = shared / len(wanted | tokens)
    if len(wanted) < 2 or coverage < FUZZY_MIN_COVERAGE or jaccard < FUZZY_MIN_JACCARD:
        return None  # a one-word name (`answer`, `mean`) is too generic to match by its words
    return coverage * 0.5 + jaccard * 0.5


def _steps(chain: list[Node], prefix: tuple[str, ...]) -> list[tuple[str, Any, frozenset[str]]]:
    """A candidate's ancestry as (kind, name or position, ids) steps, flattened-key prefixes included."""
    steps: list[tuple[str, Any, frozenset[str]]] = []
    for node in chain:
        steps.extend(("key", part, frozenset()) for part in node.prefix)
        if isinstance(node.key, int):
            steps.append(("item", node.key, node.ids))
        else:
            steps.append(("key", node.norm, node.ids))
    steps.extend(("key", part, frozenset()) for part in prefix)
    return steps


def _path_fit(scope: tuple[Any, ...], steps: list[tuple[str, Any, frozenset[str]]]) -> float:
    """Weighted longest common subsequence of the unit's scope and a candidate's ancestry."""
    if not scope or not steps:
        return 0.0
    previous = [0.0] * (len(steps) + 1)
    for wanted in scope:
        current = [0.0] * (len(steps) + 1)
        for position, step in enumerate(steps, start=1):
            pair = previous[position - 1] + _step_fit(wanted, step)
            current[position] = max(current[position - 1], previous[position], pair)
        previous = current
    return previous[-1]


def _step_fit(wanted: Any, step: tuple[str, Any, frozenset[str]]) -> float:
    kind, name, ids = step
    if isinstance(wanted, Selector):
        if wanted.value in ids or (kind == "key" and name == wanted.value):
            return 1.0
        # by position only among items that carry no name: a named item is another row
        return 0.4 if kind == "item" and name == wanted.index and not ids else 0.0
    if isinstance(wanted, int):
        return 0.5 if kind == "item" and name == wanted else 0.0
    normalized = normalize_label(wanted)
    if kind == "key" and name == normalized:
        return 1.0
    if kind == "item" and normalized in ids:
        return 1.0
    if kind == "key":
        similarity = _similarity(set(_tokens(wanted)), _tokens(name))
        return 0.5 if similarity is not None else 0.0
    return 0.0


def _row_lists(unit: Unit) -> dict[str, Selector]:
    """The lists a unit's path picks a row of, by name: `anchors[name=x].value` -> anchors: [name=x]."""
    steps = unit.path
    return {
        normalize_label(steps[at - 1]): step
        for at, step in enumerate(steps)
        if isinstance(step, Selector) and at > 0 and isinstance(steps[at - 1], str)
    }


def _named_otherwise(chain: list[Node], lists: dict[str, Selector]) -> bool:
    """Whether a candidate sits in an item of one of the unit's row lists named with none of the row's
    words: the row `peak_surge_height_m` may be `{"name": "max_surge_height_m"}`, never `{"name": "days"}`."""
    for node in chain:
        row = lists.get(node.parent.norm) if isinstance(node.key, int) and node.parent else None
        if row is not None and node.ids and not any(_tokens(row.value) & _tokens(name) for name in node.ids):
            return True
    return False


def _inside_rows(chain: list[Node], foreign: set[str], own: set[str]) -> bool:
    """Whether a candidate sits inside the submitted item of a different ground-truth row."""
    for node in chain:
        if node.ids & own:
            return False
        if node.ids & foreign or (isinstance(node.key, str) and node.norm in foreign):
            return True
    return False


def _distinctive(unit: Unit) -> bool:
    """Values too specific to coincide: numbers of 3+ significant digits, labels of 2+ words."""
    if unit.kind is UnitKind.NUMBER:
        return significant_digits(float(unit.gt)) >= DISTINCTIVE_DIGITS
    if unit.kind in (UnitKind.LABEL, UnitKind.SET):
        return normalize_label(unit.gt).count("_") >= 1
    return False
