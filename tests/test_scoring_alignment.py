"""Aligning submitted fields to units, reading final answers, and scoring whole answers (U), including
hostile input: huge, deep, non-JSON, NaN."""

from __future__ import annotations

import json
import time
from typing import Any

from evaluator.scoring.alignment import Aligner, SubmissionIndex
from evaluator.scoring.answer import score_answer
from evaluator.scoring.matching import Verdict
from evaluator.scoring.units import decompose
from evaluator.traces.answer_text import parse_answer


def _aligned(primary: Any, answer: Any) -> dict[str, tuple[str | None, Any, str]]:
    """unit id -> (submitted path, submitted value, alignment rule)."""
    units = decompose({"primary_gt": primary})
    aligner = Aligner(units, SubmissionIndex.build(answer))
    found = {}
    for unit in units:
        alignment = aligner.align(unit)
        path = ".".join(str(step) for step in alignment.path) if alignment.path is not None else None
        found[unit.id] = (path, alignment.value, alignment.rule)
    return found


def _verdicts(primary: Any, answer: Any, question: str | None = None) -> dict[str, Verdict]:
    report = score_answer({"primary_gt": primary}, answer, question)
    return {result.id: result.verdict for result in report.units}


def test_same_path_and_extra_wrapper_objects() -> None:
    found = _aligned({"metrics": {"peak_mm": 54.5}}, {"result": {"metrics": {"peak_mm": 54.5}}, "note": "x"})
    assert found["metrics.peak_mm"][:2] == ("result.metrics.peak_mm", 54.5)


def test_the_same_key_prefers_the_same_parent() -> None:
    primary = {"gpm": {"max_mm": 484.3}, "chirps": {"max_mm": 307.6}}
    answer = {"products": {"chirps": {"max_mm": 307.6}, "gpm": {"max_mm": 484.3}}}
    found = _aligned(primary, answer)
    assert found["gpm.max_mm"][0] == "products.gpm.max_mm"
    assert found["chirps.max_mm"][0] == "products.chirps.max_mm"


def test_flattened_and_split_keys() -> None:
    found = _aligned(
        {"basin_metrics": {"snow_cm": 0.77}, "event_window_days": 7},
        {
            "basin_metrics.snow_cm": 0.77,
            "event_window": {"days": 7},
        },
    )
    assert found["basin_metrics.snow_cm"][1] == 0.77
    assert found["event_window_days"][:2] == ("event_window.days", 7)
    joined = _aligned({"event_window": {"days": 7}}, {"event_window_days": 7})
    assert joined["event_window.days"][2] == "flattened key"


def test_a_decimal_point_in_a_key_is_not_a_flattened_path() -> None:
    """CSX-321_Q2 names a gate `annual_mean_lt_0.08`: one field, not `08` under `annual_mean_lt_0`."""
    found = _aligned({"annual_mean_lt_0.08": True}, {"annual_mean_lt_0.08": True, "basin.snow_0.5": 1})
    assert found["annual_mean_lt_0.08"] == ("annual_mean_lt_0.08", True, "key")


def test_list_items_by_identifying_field_in_any_order_or_keyed_by_it() -> None:
    primary = {"rows": [{"row_id": "burst", "value": 2.384}, {"row_id": "loading", "value": 5.127}]}
    reordered = {"rows": [{"row_id": "loading", "value": 5.127}, {"row_id": "burst", "value": 2.384}]}
    found = _aligned(primary, reordered)
    assert found["rows[row_id=burst].value"][:2] == ("rows.1.value", 2.384)
    keyed = _aligned(primary, {"rows": {"burst": {"value": 2.384}, "loading": {"value": 5.127}}})
    assert keyed["rows[row_id=loading].value"][:2] == ("rows.loading.value", 5.127)


def test_a_named_item_of_another_row_is_never_used() -> None:
    primary = {"rows": [{"row_id": "burst", "value": 2.384}, {"row_id": "loading", "value": 5.127}]}
    found = _aligned(primary, {"rows": [{"row_id": "loading", "value": 5.127}]})
    assert found["rows[row_id=burst].value"][0] is None


def test_a_generic_value_is_found_under_the_items_name() -> None:
    primary = {"anchors": [{"name": "event_duration_days", "value": 183}]}
    found = _aligned(primary, {"key_numeric_anchors": {"event_duration_days": "183"}})
    assert found["anchors[name=event_duration_days].value"][1] == "183"


def test_a_named_items_value_is_found_under_its_name_in_another_group() -> None:
    """A name of two or more words stands for its item wherever it is (CSX-316_Q1's metrics come as
    `key_metrics.event_window_years`); a one-word name needs some of its path."""
    primary = {"required_metrics": [{"name": "event_window_years", "value": 20}, {"name": "ash", "value": 2}]}
    found = _aligned(primary, {"key_metrics": {"event_window_years": "20"}, "other": {"ash": 2}})
    assert found["required_metrics[name=event_window_years].value"] == (
        "key_metrics.event_window_years",
        "20",
        "item name as key",
    )
    assert found["required_metrics[name=ash].value"][2] != "item name as key"


def test_similar_names_need_every_word_and_the_same_numbers() -> None:
    primary = {"heat": {"tmax35_run_days": 17, "local_5d_mm": 72.2}}
    answer = {"heat": {"longest_run_daily_Tmax_ge_35_C_days": 17, "local_15d_mm": 118.4}}
    found = _aligned(primary, answer)
    assert found["heat.tmax35_run_days"][2] == "similar key"
    assert found["heat.local_5d_mm"][0] is None  # 5d is not 15d


def test_a_field_named_like_another_unit_is_not_a_near_miss() -> None:
    found = _aligned({"dry_days": 27, "dry_windy_days": 9}, {"dry_windy_days": 9})
    assert found["dry_days"][0] is None
    assert found["dry_windy_days"][0] == "dry_windy_days"


def test_one_word_keys_need_some_of_their_path() -> None:
    primary = {"run_window": {"start": "2022-08-07"}}
    found = _aligned(primary, {"event_window": {"start": "2022-06-01"}})
    assert found["run_window.start"][0] is None


def test_value_search_for_distinctive_values_and_within_the_container() -> None:
    primary = {"totals": {"event_total_mm": 287.6, "wet_days": 4}}
    answer = {"totals": {"seven_day_sum": 287.6, "rainy_days": 4}, "other": {"count": 4}}
    found = _aligned(primary, answer)
    assert found["totals.event_total_mm"][:3] == ("totals.seven_day_sum", 287.6, "value search")
    assert found["totals.wet_days"][0] == "totals.rainy_days"


def test_a_common_value_is_found_in_its_container_only_as_written() -> None:
    """A count of 9 is not the 9.12 hours beside it, nor a share of 1.0 the 0.93 of another score:
    nearness does not tell which field a common value is; equality at the stated precision does."""
    primary = {"sequence": {"event_count": 9, "share": 1.0, "peak_share": 0.3}}
    answer = {"sequence": {"gap_hours": 9.12, "wind_score": 0.93, "peak_fraction": 0.304}}
    found = _aligned(primary, answer)
    assert found["sequence.event_count"][0] is None and found["sequence.share"][0] is None
    assert found["sequence.peak_share"][:3] == ("sequence.peak_fraction", 0.304, "value search")
    assert _aligned(primary, {"sequence": {"events": 9}})["sequence.event_count"][0] == "sequence.events"


def test_a_row_is_not_an_item_named_with_none_of_its_words() -> None:
    """Rows the agent names itself: `max_surge_height_cm` may stand for `maximum_surge_cm`; the first item
    `outage_hours` is not every row, nor is any item the row because its value happens to be right."""
    primary = {
        "anchors": [
            {"name": "total_outage_hours", "value": 36},
            {"name": "maximum_surge_cm", "value": 250},
            {"name": "linked_archive_records", "value": 0},
        ]
    }
    answer = {
        "anchors": [
            {"name": "outage_hours", "value": 36},
            {"name": "max_surge_height_cm", "value": 250},
            {"name": "radar_scene_count", "value": 0},
        ]
    }
    found = _aligned(primary, answer)
    assert found["anchors[name=total_outage_hours].value"][:2] == ("anchors.0.value", 36)
    assert found["anchors[name=maximum_surge_cm].value"][:2] == ("anchors.1.value", 250)
    assert found["anchors[name=linked_archive_records].value"][0] is None
    assert (
        _aligned(primary, {"anchors": [{"name": "outage_hours", "value": 36}]})[
            "anchors[name=maximum_surge_cm].value"
        ][0]
        is None
    )


def test_a_specific_number_written_in_a_sentence() -> None:
    answer = {"summary": "GPM peaks at 484.25 mm on 2021-07-20, CHIRPS at 307.6 mm."}
    found = _aligned({"precip": {"gpm_max_mm": 484.25}}, answer)
    assert found["precip.gpm_max_mm"][1:] == (484.25, "value stated in text")
    assert _aligned({"count": 12}, {"summary": "12 stations reported"})["count"][0] is None  # not specific


def test_a_record_field_matches_the_list_item_named_like_it() -> None:
    primary = {"row_results": "burst:pass;loading:reject"}
    answer = {"ledger": [{"row_id": "burst", "result": "PASS"}, {"row_id": "loading", "result": "reject"}]}
    assert _verdicts(primary, answer) == {
        "row_results.burst": Verdict.CORRECT,
        "row_results.loading": Verdict.CORRECT,
    }


def test_a_numeric_answer_is_the_one_top_level_score() -> None:
    """A ground truth whose `answer` is the computed score: the prompt calls it `score` or `total_score`;
    with two top-level scores, which one answers is not known."""
    answer = {"component_scores": {"heat_core": 6}, "total_score": 19, "class_label": "x"}
    assert _aligned({"answer": 19}, answer)["answer"] == ("total_score", 19, "answer score")
    assert _verdicts({"answer": 92.0, "tolerance": 0.1}, {"score": 83.9})["answer"] is Verdict.INCORRECT
    assert _aligned({"answer": 19}, {"heat_score": 19, "dry_score": 5})["answer"][0] is None


def test_the_answer_under_another_top_level_name_and_inside_an_object() -> None:
    found = _aligned({"answer": "point_dry_heat"}, {"mechanism_ruling": "point_dry_heat"})
    assert found["answer"][2] == "answer field"
    inside = _aligned(
        {"answer": "point_dry_heat"}, {"answer": {"days": 3, "classification": "point_dry_heat"}}
    )
    assert inside["answer"][:2] == ("answer.classification", "point_dry_heat")


def test_formula_symbols_stand_for_their_variables() -> None:
    found = _aligned({"inputs": {"E_early_active_days": 4}}, {"inputs": {"A": 3, "E": 10}})
    assert found["inputs.E_early_active_days"][:2] == ("inputs.E", 10)


def test_parse_answer_strings() -> None:
    assert parse_answer('{"a": 1}').value == {"a": 1}
    assert parse_answer('Here:\n```json\n{"a": 2}\n```\nDone.').value == {"a": 2}
    assert parse_answer('{"a": 3}\nThe ledger supports it.').value == {"a": 3}
    assert parse_answer("CO ratio: 13.0x\nPriority: smoke health").value == {
        "CO ratio": "13.0x",
        "Priority": "smoke health",
    }
    prose = parse_answer("The event was a flood.")
    assert prose.value is None and prose.note
    assert parse_answer({"a": 4}).source == "object"


def test_score_answer_counts_correct_over_scorable() -> None:
    primary = {
        "answer": "persistent_signal_supported",
        "event_window_days": 41,
        "rain_rate_mm_day": 38.614,
        "threshold_state": "pass",
        "explanation": "Five checks pass, so the persistent heavy-rainfall flood signal is supported.",
    }
    answer = {"answer": "persistent_signal_supported", "event_window_days": 41, "rain_rate_mm_day": 19.1}
    report = score_answer({"primary_gt": primary}, answer)
    assert (report.correct, report.scorable, report.missing, report.judge_required) == (2, 4, 1, 1)
    assert report.u == 50.0
    wrong = next(unit for unit in report.units if unit.id == "rain_rate_mm_day")
    assert wrong.verdict is Verdict.INCORRECT and wrong.submitted_path == "rain_rate_mm_day"
    assert wrong.tolerance is not None and wrong.reason.startswith("off by")


def test_with_the_prompt_unasked_unanswered_units_leave_u() -> None:
    primary = {"answer": "x_y", "peak_mm": 54.5, "audit_counter": 12}
    question = "Report `peak_mm` and your answer as JSON."
    verdicts = _verdicts(primary, {"answer": "x_y", "peak_mm": 54.5}, question)
    assert verdicts["audit_counter"] is Verdict.UNREQUESTED
    assert score_answer({"primary_gt": primary}, {"answer": "x_y", "peak_mm": 54.5}, question).u == 100.0
    assert _verdicts(primary, {}, question)["peak_mm"] is Verdict.MISSING
    assert _verdicts(primary, {}, question)["answer"] is Verdict.MISSING


def test_a_null_field_is_missing() -> None:
    assert _verdicts({"peak_mm": 54.5}, {"peak_mm": None}) == {"peak_mm": Verdict.MISSING}


def test_a_failed_run_scores_zero() -> None:
    primary = {"answer": "x_y", "peak_mm": 54.5}
    report = score_answer({"primary_gt": primary}, {"answer": None, "status": "budget_exhausted"})
    assert report.u == 0.0 and report.missing == 2


def test_no_scorable_unit_leaves_u_undefined() -> None:
    report = score_answer(
        {"primary_gt": {"rationale": "A long explanation of the whole mechanism chain."}}, {}
    )
    assert report.u is None and report.judge_required == 1


def test_hostile_answers_never_crash_and_stay_fast() -> None:
    primary = {"answer": "x_y", "peak_mm": 54.5, "rows": [{"row_id": "a", "value": 1.5}]}
    ground_truth = {"primary_gt": primary}
    deep: Any = 54.5
    for _ in range(100_000):
        deep = {"peak_mm": deep}
    wide = {f"field_{index}": index for index in range(200_000)}
    hostile = [
        "x" * 50_000_000,
        '{"peak_mm": ' + "[" * 100_000 + "]" * 100_000 + "}",
        {"peak_mm": float("nan"), "answer": float("inf")},
        {"peak_mm": {1, 2}, "answer": b"bytes", "rows": object()},
        deep,
        wide,
        json.dumps({"peak_mm": "NaN"}),
        None,
        12,
    ]
    started = time.perf_counter()
    for answer in hostile:
        report = score_answer(ground_truth, answer)
        assert report.u is not None and 0 <= report.u <= 100
        assert all(unit.verdict is not Verdict.CORRECT for unit in report.units if unit.id == "peak_mm")
    assert time.perf_counter() - started < 10
    assert score_answer(ground_truth, wide).notes
