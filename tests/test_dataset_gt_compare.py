from __future__ import annotations

import math

from dataset.gt_compare import compare


def test_equal_structures_have_no_differences():
    value = {"a": [1, 2.5, {"b": "x"}], "c": True, "d": None}
    assert compare(value, value, {}) == []


def test_int_and_float_of_the_same_number_agree():
    assert compare({"rows": 7}, {"rows": 7.0}, {}) == []


def test_number_within_field_tolerance_agrees_and_outside_differs():
    tolerances = {"peak_c": 0.1}
    assert compare({"x": {"peak_c": 35.5}}, {"x": {"peak_c": 35.58}}, tolerances) == []
    [difference] = compare({"x": {"peak_c": 35.5}}, {"x": {"peak_c": 35.7}}, tolerances)
    assert difference.path == "x.peak_c" and difference.tolerance == 0.1


def test_number_without_tolerance_allows_only_float_noise():
    assert compare(0.1 + 0.2, 0.3, {}) == []
    [difference] = compare({"v": 6.142}, {"v": 6.141}, {})
    assert difference.path == "v" and difference.recorded == "6.142" and difference.regenerated == "6.141"


def test_missing_extra_and_retyped_fields_are_reported_by_path():
    differences = compare({"a": 1, "b": [1, 2]}, {"b": [1, "2"], "c": 3}, {})
    assert [(d.path, d.recorded, d.regenerated) for d in differences] == [
        ("a", "1", "<missing>"),
        ("b[1]", "2", "'2'"),
        ("c", "<missing>", "3"),
    ]


def test_bool_is_not_a_number_and_nan_equals_nan():
    assert compare(True, 1, {}) != []
    assert compare(math.nan, math.nan, {}) == []


def test_lists_of_different_length_differ_as_a_whole():
    [difference] = compare({"l": [1, 2]}, {"l": [1]}, {})
    assert difference.path == "l"
