"""Gate 3, task authoring: the public question reveals no package file name or path and no
answer-bearing value.

A value is answer-bearing when the question states a number the ground truth derives (non-integer,
three or more significant digits, at the ground truth's precision, not a parameter the task sets and
not a number the package evidence itself states). Labels of the ground truth that the question names
(usually as allowed options) are listed for review but do not fail the gate: telling them apart from
revealed answers needs a person.
"""

from __future__ import annotations

import re
from typing import Any

from dataset.gates.base import GateResult, TaskInputs, failed, passed
from loaders.json_leaves import leaves

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w|\.\d)")
LABEL = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
PARAMETER_KEY = re.compile(
    r"threshold|toleran|multiplier|weight|perturb|factor|cap|limit|cutoff|rounding|parameter|input|assum|scenario"
)
MIN_SIGNIFICANT_DIGITS = 3


def check(inputs: TaskInputs) -> GateResult:
    question = inputs.record.question
    revealed_paths = _revealed_paths(question, inputs.record.event_files)
    revealed_values = _revealed_values(question, inputs)
    labels = sorted(
        {
            value
            for _, value in leaves(inputs.record.ground_truth.get("primary_gt"))
            if isinstance(value, str) and LABEL.fullmatch(value) and value in question
        }
    )
    problems = [f"names package file {path}" for path in revealed_paths]
    problems += [f"states the derived value {value} of {path}" for path, value in revealed_values]
    if problems:
        return failed(problems, labels_named=labels)
    return passed("no file names, paths or derived values in the question", labels_named=labels)


def _revealed_paths(question: str, manifest: list[dict[str, Any]]) -> list[str]:
    found = []
    for entry in manifest:
        path = entry.get("relative_path", "")
        name = path.rsplit("/", 1)[-1]
        if path and (path in question or name in question):
            found.append(path)
    return found


def _revealed_values(question: str, inputs: TaskInputs) -> list[tuple[str, str]]:
    stated = set(NUMBER.findall(question))
    candidates = [
        (path, repr(value))
        for path, value in leaves(inputs.record.ground_truth.get("primary_gt"))
        if _answer_like_number(path, value) and repr(value) in stated
    ]
    if not candidates:
        return []
    evidence = _evidence_numbers(inputs)
    return [(path, value) for path, value in candidates if value not in evidence]


def _answer_like_number(path: str, value: Any) -> bool:
    if not isinstance(value, float) or value.is_integer() or PARAMETER_KEY.search(path):
        return False
    return len(repr(abs(value)).replace(".", "").lstrip("0")) >= MIN_SIGNIFICANT_DIGITS


def _evidence_numbers(inputs: TaskInputs) -> set[str]:
    numbers: set[str] = set()
    for path in sorted((inputs.package_root / "data").rglob("*")):
        if path.is_file() and not path.is_symlink():
            numbers.update(NUMBER.findall(path.read_bytes().decode("utf-8", errors="replace")))
    return numbers
