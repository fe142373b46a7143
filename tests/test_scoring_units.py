"""Decomposing a ground truth into answer units: kinds, ids, metadata, repeats and tolerances."""

from __future__ import annotations

from typing import Any

from evaluator.scoring.answer import task_units
from evaluator.scoring.tolerances import precision_tolerance, stated_decimals, task_table
from evaluator.scoring.units import Selector, UnitKind, decompose, decompose_key_values, normalize_label


def _units(primary: Any, **extra: Any) -> dict[str, Any]:
    return {unit.id: unit for unit in decompose({"primary_gt": primary, **extra})}


def test_leaves_get_their_kinds() -> None:
    units = _units(
        {
            "answer": "compound_heat_water_stress",
            "event_window_days": 41,
            "rain_rate_mm_day": 38.614,
            "surface_change": True,
            "threshold_state": "pass",
            "explanation": "The record shows persistent heat with failed night recovery over the window.",
        }
    )
    assert units["answer"].kind is UnitKind.LABEL
    assert units["event_window_days"].kind is UnitKind.NUMBER
    assert units["rain_rate_mm_day"].gt == 38.614
    assert units["surface_change"].kind is UnitKind.FLAG
    assert units["threshold_state"].kind is UnitKind.TEST and units["threshold_state"].gt is True
    assert units["explanation"].kind is UnitKind.TEXT and units["explanation"].judge_required


def test_strings_that_state_tests_numbers_and_records() -> None:
    units = _units(
        {
            "decision": "pass: all four basin means exceed 150 mm",
            "route": "fail_two_day_only",
            "population_context": "2470512.3 people",
            "ratio_text": "13.0x",
            "flag_text": "false",
            "rows": "burst:pass;loading:reject",
            "required_metrics": ["drainage_ratio=2.384", "five_day_to_crest=5.127"],
        }
    )
    assert units["decision"].kind is UnitKind.TEST and units["decision"].gt is True
    assert units["route"].kind is UnitKind.TEST and units["route"].gt is False
    assert units["population_context"].gt == 2470512.3
    assert units["ratio_text"].gt == 13.0
    assert units["flag_text"].kind is UnitKind.FLAG and units["flag_text"].gt is False
    assert units["rows.burst"].gt is True and units["rows.loading"].gt is False
    assert units["required_metrics.drainage_ratio"].kind is UnitKind.NUMBER
    assert units["required_metrics.five_day_to_crest"].gt == 5.127


def test_formulas_and_prose_are_free_text() -> None:
    units = _units(
        {"formula": "231.4/265.9 and 34.5/265.9", "rule": "score >= 5", "window": "2019-08-03/2019-08-09"}
    )
    assert units["formula"].judge_required and units["rule"].judge_required
    assert units["window"].kind is UnitKind.LABEL  # a date range, not arithmetic


def test_lists_of_labels_are_sets_or_orderings() -> None:
    units = _units(
        {
            "rejected_alternatives": ["coastal_surge_only", "regional_only"],
            "ranked_control_points": ["timing", "accumulation", "damage"],
            "mechanism_chain": ["storm loading", "terrain routing of the water toward the river"],
            "snow_range_ft": [1, 3],
        }
    )
    assert units["rejected_alternatives{coastal_surge_only}"].kind is UnitKind.SET
    assert units["rejected_alternatives{regional_only}"].path == ("rejected_alternatives",)
    assert units["ranked_control_points"].kind is UnitKind.ORDERING
    assert units["ranked_control_points"].gt == ["timing", "accumulation", "damage"]
    assert all(units[f"mechanism_chain[{index}]"].judge_required for index in (0, 1))
    assert units["snow_range_ft[1]"].gt == 3


def test_list_items_are_addressed_by_their_identifying_field_whatever_their_order() -> None:
    rows = [{"row_id": "burst", "value": 2.4}, {"row_id": "loading", "value": 5.1}]
    forward = _units({"rows": rows})
    backward = _units({"rows": list(reversed(rows))})
    assert set(forward) == set(backward) == {"rows[row_id=burst].value", "rows[row_id=loading].value"}
    step = forward["rows[row_id=burst].value"].path[1]
    assert isinstance(step, Selector) and step.value == "burst"
    assert "rows[row_id=burst].row_id" not in forward  # the id names the item, it is not a claim


def test_metadata_is_not_answer_content() -> None:
    units = _units(
        {
            "answer": "x_label",
            "answer_type": "ledger",
            "task_mode": "deep_mechanism_diagnosis",
            "target_family": "family",
            "tolerances": {"ratio": 0.01},
            "row_ids": ["a", "b"],
            "thresholds": {"min_days": 30},
            "acceptable_variants": ["y_label"],
            "metric": {"value": 3.2, "unit": "mm", "tolerance": 0.1},
            "missing": None,
            "empty": [],
        }
    )
    assert set(units) == {"answer", "metric.value"}
    assert units["answer"].variants == ("y_label",)
    assert units["metric.value"].tolerance == 0.1 and units["metric.value"].tolerance_source == "gt:tolerance"


def test_repeated_claims_are_one_unit_the_shallowest() -> None:
    units = _units(
        {
            "answer": "cold_dry_shelter_risk",
            "deterministic_fields": {"answer": "cold_dry_shelter_risk", "shelter_stress_index": 93.5},
            "required_metrics": [{"name": "shelter_stress_index", "value": 93.5, "tolerance": 0.2}],
            "shelter_stress_index": 93.5,
        }
    )
    assert set(units) == {"answer", "shelter_stress_index"}


def test_judge_anchor_variants_widen_the_top_level_answer() -> None:
    units = _units({"answer": "a_b_c"}, judge_anchors={"acceptable_variants": ["a_b", "c_d"]})
    assert units["answer"].variants == ("a_b", "c_d")


def test_top_level_variants_vary_the_answer_alone(source_release) -> None:
    """CSX-240_Q1 lists the answer's variants beside `priority_band`: they are not the band's."""
    record = next(record for record in source_release.records if record.task_id == "CSX-240_Q1")
    units = {unit.id: unit for unit in decompose(record.ground_truth)}
    assert units["answer"].variants and not units["priority_band"].variants
    synthetic = _units(
        {"answer": "a_b", "band": "high", "acceptable_variants": ["c_d"]},
        judge_anchors={"acceptable_variants": ["e_f"]},
    )
    assert synthetic["answer"].variants == ("c_d", "e_f") and synthetic["band"].variants == ()


def test_tolerances_by_name_by_class_and_by_precision() -> None:
    ground_truth = {
        "numeric_tolerances": {
            "melt_rate_mm_day": {"absolute_tolerance": 0.001, "target": 38.614},
            "ratios": 0.01,
            "precip_mm_abs": 0.2,
        },
        "tolerances": {"population": {"relative": 0.001, "unit": "persons"}},
        "primary_gt": {
            "melt_rate_mm_day": 38.614,
            "spread_ratio": 3.417,
            "max_precip_mm": 134.5,
            "population": 200000,
            "mean_temp_c": 33.9,
            "days": 41,
        },
    }
    units = {unit.id: unit for unit in decompose(ground_truth)}
    assert units["melt_rate_mm_day"].tolerance == 0.001
    assert (
        units["spread_ratio"].tolerance == 0.01 and units["spread_ratio"].tolerance_source == "class:ratios"
    )
    assert units["max_precip_mm"].tolerance == 0.2
    assert units["population"].tolerance == 200.0
    assert abs(units["mean_temp_c"].tolerance - 0.1) < 1e-12
    assert units["days"].tolerance == 0.5


def test_precision_tolerance_is_one_unit_of_the_last_decimal_with_a_relative_floor() -> None:
    assert stated_decimals(33.9) == 1 and stated_decimals(2.5e-05) == 6 and stated_decimals(183) == 0
    assert abs(precision_tolerance(33.9).value - 0.1) < 1e-12
    assert precision_tolerance(183).value == 0.5
    assert abs(precision_tolerance(5.731952).value - 0.002 * 5.731952) < 1e-12


def test_a_decimal_written_with_a_zero_decimal_is_not_a_whole_number() -> None:
    """`1.0` states one decimal: a component score of 1.0 is not matched by 0.7, as a count of 1 would
    be by 1.4; a whole number written in a string (`15 days`) stays exact to the unit."""
    assert stated_decimals(1.0) == 1 and stated_decimals(100.0) == 1 and stated_decimals(1e20) == 0
    units = _units({"score": 1.0, "count": 9, "window": "15 days", "depth": "2.0 m"})
    assert abs(units["score"].tolerance - 0.1) < 1e-12 and units["count"].tolerance == 0.5
    assert units["window"].tolerance == 0.5 and abs(units["depth"].tolerance - 0.1) < 1e-12


def test_the_whole_number_class_applies_to_whole_numbers_only() -> None:
    table = task_table({"tolerances": {"integer_fields": 0}, "primary_gt": {}})
    assert table.lookup("hot_hours", 12).value == 0
    assert table.lookup("mean_rh", 12.47).source == "precision"


def test_key_values_fill_template_fields_primary_gt_lacks() -> None:
    ground_truth = {
        "primary_gt": {"answer": "severe_smoke"},
        "key_values": {"derived": {"aod_excess_load": 3.2, "unrelated_value": 7}},
    }
    question = 'Return:\n```json\n{"aod_excess_load": 0.0, "diagnosis": "short_label"}\n```'
    units = {unit.id: unit for unit in task_units(ground_truth, question)}
    assert set(units) == {"answer", "key_values.derived.aod_excess_load"}
    assert units["key_values.derived.aod_excess_load"].source == "key_values"
    assert {unit.id for unit in decompose_key_values(ground_truth)} >= {"key_values.derived.unrelated_value"}
    assert set(unit.id for unit in task_units(ground_truth)) == {"answer"}


def test_key_values_do_not_repeat_a_named_item_of_primary_gt(source_release) -> None:
    """CSX-316_Q1 holds `event_window_years` as `required_metrics[name=event_window_years].value` and
    again in `key_values`: one claim, scored once."""
    record = next(record for record in source_release.records if record.task_id == "CSX-316_Q1")
    ids = {unit.id for unit in task_units(record.ground_truth, record.question)}
    assert "required_metrics[name=event_window_years].value" in ids
    assert "key_values.event_window_years" not in ids


def test_normalize_label() -> None:
    assert normalize_label("Compound-Heat  Water_Stress") == "compound_heat_water_stress"
    assert normalize_label("peakGustKmh") == "peak_gust_kmh"
    assert normalize_label("ratio 1.25.") == "ratio_1.25"
