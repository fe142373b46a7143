"""The tolerances a task's ground truth states, as the data model reads them."""

from __future__ import annotations

from loaders.tolerances import is_number, task_tolerances


def test_tolerances_come_from_both_tables():
    ground_truth = {
        "numeric_tolerances": {"peak": {"value": 1.0, "tolerance": 0.2}},
        "tolerances": {"ratio": 0.05, "note": "relative"},
    }
    assert task_tolerances(ground_truth) == {"peak": 0.2, "ratio": 0.05}


def test_a_negative_tolerance_is_its_magnitude_and_non_numbers_are_skipped():
    ground_truth = {"tolerances": {"drop": -0.5, "flag": True, "label": "exact", "rows": None}}
    assert task_tolerances(ground_truth) == {"drop": 0.5}


def test_booleans_are_not_numbers():
    assert is_number(3) and is_number(2.5) and not is_number(True) and not is_number("3")
