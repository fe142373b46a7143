"""Value matching, one rule at a time: numbers, yes/no, labels, paths, dates, orderings, sets, phrases."""

from __future__ import annotations

from typing import Any

import pytest

from evaluator.scoring.matching import Verdict, as_boolean, as_number, match, match_phrase, written_step
from evaluator.scoring.units import Unit, UnitKind


def _unit(kind: UnitKind, gt: Any, **extra: Any) -> Unit:
    return Unit(id="field", path=("field",), key="field", kind=kind, gt=gt, **extra)


def _number(gt: float, tolerance: float, source: str = "task:field") -> Unit:
    return _unit(UnitKind.NUMBER, gt, tolerance=tolerance, tolerance_source=source)


def _verdict(unit: Unit, submitted: Any) -> Verdict:
    return match(unit, submitted).verdict


@pytest.mark.parametrize(
    ("submitted", "verdict"),
    [
        (38.614, Verdict.CORRECT),
        (38.6145, Verdict.CORRECT),
        (38.616, Verdict.INCORRECT),
        ("38.614 mm/day", Verdict.CORRECT),
        ("~38.614", Verdict.CORRECT),
        ({"value": 38.614, "unit": "mm/day"}, Verdict.CORRECT),
        ([38.614], Verdict.CORRECT),
        (True, Verdict.INCORRECT),
        ("about forty", Verdict.INCORRECT),
        (float("nan"), Verdict.INCORRECT),
        (float("inf"), Verdict.INCORRECT),
        (None, Verdict.INCORRECT),
    ],
)
def test_numbers_within_the_stated_tolerance(submitted: Any, verdict: Verdict) -> None:
    assert _verdict(_number(38.614, 0.001), submitted) is verdict


def test_numbers_in_text_thousands_and_short_phrases() -> None:
    assert as_number("1,000 people") == 1000
    assert as_number("cold night, mean min 3.0 C") == 3.0
    assert as_number("2023-08-20") is None
    assert as_number("between 3 and 5 days") is None  # two numbers: which one is meant is unclear


def test_a_scale_word_multiplies_or_is_the_ground_truths_own_scale() -> None:
    """`10.2 million` is 10200000 (rounded to the hundred thousand); `30 million tons` is also 30 where
    the ground truth counts in million tons; a magnitude `6.7M` is not scaled."""
    assert _verdict(_number(10200000, 0.5, "precision"), "10.2 million") is Verdict.CORRECT
    assert _verdict(_number(2470512.3, 0.05, "precision"), "approx. 2.47 million people") is Verdict.CORRECT
    assert _verdict(_number(1574261, 0.5, "precision"), "~1.6 million") is Verdict.INCORRECT
    assert _verdict(_number(30.0, 0.1), "30 million tons") is Verdict.CORRECT
    assert _verdict(_number(6.7, 0.05), "6.7M") is Verdict.CORRECT
    assert _verdict(_number(10200000, 0.5, "precision"), "10.2 thousand") is Verdict.INCORRECT


def test_an_object_states_its_one_number_named_like_the_unit() -> None:
    """CSX-001_Q2 lists daily Tmax as `{"date": ..., "tmax_c": 30.1}` items of `daily_tmax_c`."""
    unit = Unit(
        id="daily_tmax_c[1]",
        path=("daily_tmax_c", 1),
        key="daily_tmax_c",
        kind=UnitKind.NUMBER,
        gt=30.1,
        tolerance=0.1,
        tolerance_source="task:daily_tmax_c",
    )
    assert _verdict(unit, {"date": "2021-06-26", "tmax_c": 30.1}) is Verdict.CORRECT
    assert _verdict(unit, {"date": "2021-06-26", "rank": 30.1}) is Verdict.INCORRECT
    assert _verdict(unit, {"tmax_c": 30.1, "c": 5.0}) is Verdict.INCORRECT


def test_percent_for_fraction_is_not_accepted_and_says_so() -> None:
    result = match(_number(57.75, 0.01, "precision"), 0.5775)
    assert result.verdict is Verdict.INCORRECT
    assert "x100" in result.reason


def test_coarser_rounding_is_accepted_for_precision_tolerances_only() -> None:
    raw = _number(517.382, 0.001, "precision")
    assert _verdict(raw, 517.38) is Verdict.CORRECT
    assert _verdict(raw, 517.4) is Verdict.CORRECT
    assert _verdict(raw, 520) is Verdict.INCORRECT  # two significant digits: too coarse
    assert _verdict(_number(517.382, 0.001, "task:field"), 517.4) is Verdict.INCORRECT
    assert written_step(21.95) == pytest.approx(0.01) and written_step("2470000") == 10000


@pytest.mark.parametrize(
    ("submitted", "value"),
    [
        (True, True),
        ("yes", True),
        ("PASS: normalized runoff index exceeds 1", True),
        ("rejected: the 0.45 m inverse-barometer share is small", False),
        ("support", True),
        ("reject: peak wind stays below the cutoff", False),
        ("4 countries affected (pass)", True),
        ({"values": {"n": 3}, "gate_passed": False}, False),
        ({"supported": True, "evidence_path": "data/event_reports/r.json"}, True),
        (1, None),
        ("maybe", None),
    ],
)
def test_yes_no_values(submitted: Any, value: bool | None) -> None:
    assert as_boolean(submitted) is value


def test_flags_and_tests_compare_the_outcome() -> None:
    assert _verdict(_unit(UnitKind.TEST, True), "pass") is Verdict.CORRECT
    assert _verdict(_unit(UnitKind.TEST, False), "FAIL") is Verdict.CORRECT
    assert _verdict(_unit(UnitKind.FLAG, True), "false") is Verdict.INCORRECT
    assert _verdict(_unit(UnitKind.FLAG, True), 1) is Verdict.INCORRECT


@pytest.mark.parametrize(
    ("submitted", "verdict"),
    [
        ("compound_heat_water_stress", Verdict.CORRECT),
        ("Compound heat-water stress", Verdict.CORRECT),
        ("compound_heat_water_stress: persistent daytime heat and failed recovery", Verdict.CORRECT),
        ("supported compound heat water stress", Verdict.CORRECT),
        ("not compound heat water stress", Verdict.INCORRECT),
        ("the record rejects compound_heat_water_stress", Verdict.INCORRECT),
        ("heat_only", Verdict.INCORRECT),
        ({"classification": "compound_heat_water_stress"}, Verdict.INCORRECT),
        ({"label": "compound_heat_water_stress"}, Verdict.CORRECT),
    ],
)
def test_labels_after_normalisation(submitted: Any, verdict: Verdict) -> None:
    assert _verdict(_unit(UnitKind.LABEL, "compound_heat_water_stress"), submitted) is verdict


def test_labels_accept_the_ground_truths_variants() -> None:
    unit = _unit(UnitKind.LABEL, "slow_onset_priority", variants=("long_term_monitoring_priority",))
    result = match(unit, "Long-term monitoring priority")
    assert result.verdict is Verdict.CORRECT and result.rule == "label variant"


def test_paths_compare_package_relative_or_by_file_name() -> None:
    unit = _unit(UnitKind.LABEL, "data/physical_hazard/physical_hazard_001_Open-Meteo.json")
    repository = "event_packages/standard_event_packages/packages/CSX-006/" + unit.gt
    assert _verdict(unit, repository) is Verdict.CORRECT
    assert _verdict(unit, "physical_hazard_001_Open-Meteo.json") is Verdict.CORRECT
    assert _verdict(unit, "data/physical_hazard/physical_hazard_002_ERA5.json") is Verdict.INCORRECT


def test_dates_and_date_ranges_however_written() -> None:
    window = _unit(UnitKind.LABEL, "2014-05-03_to_2014-06-19")
    assert _verdict(window, {"start": "2014-05-03", "end": "2014-06-19"}) is Verdict.CORRECT
    assert _verdict(window, "2014-05-03 through 2014-06-19") is Verdict.CORRECT
    assert _verdict(window, "2014-05-03 to 2014-06-20") is Verdict.INCORRECT
    assert _verdict(_unit(UnitKind.LABEL, "2022-08-07"), "YYYY-MM-DD") is Verdict.INCORRECT
    window_end = _unit(UnitKind.SET, "2021-07-01")  # a window's dates as a set: a range holds both
    assert _verdict(window_end, "2021-06-25 to 2021-07-01") is Verdict.CORRECT
    assert _verdict(window_end, "2021-06-25 to 2021-07-02") is Verdict.INCORRECT
    assert _verdict(_unit(UnitKind.LABEL, "2017-08-14"), "2017-08-14 (antecedent from 2017-07-01)") is (
        Verdict.CORRECT
    )


def test_date_times_however_written() -> None:
    """A `T` or a space, zero seconds, a fraction of the last stated second and a UTC designator write
    the same instant; another minute or hour does not."""
    origin = _unit(UnitKind.LABEL, "2011-06-14T03:47:21")
    assert _verdict(origin, "2011-06-14T03:47:21Z") is Verdict.CORRECT
    assert _verdict(origin, "2011-06-14 03:47:21.342 UTC") is Verdict.CORRECT
    assert _verdict(origin, "2011-06-14T03:00:00Z") is Verdict.INCORRECT
    window = _unit(UnitKind.LABEL, "2019-11-04T00:00 to 2019-11-05T08:00")
    assert _verdict(window, "2019-11-04 00:00:00 to 2019-11-05 08:00 GMT") is Verdict.CORRECT
    assert _verdict(window, "2019-11-04 00:00 to 2019-11-05 09:00") is Verdict.INCORRECT
    peaks = _unit(UnitKind.SET, "2015-02-09T13:00")
    assert _verdict(peaks, ["2015-02-05T04:00Z", "2015-02-09T13:00+00:00"]) is Verdict.CORRECT


def test_orderings_in_sequence() -> None:
    unit = _unit(UnitKind.ORDERING, ["timing", "accumulation", "damage"])
    assert _verdict(unit, ["Timing", "accumulation", "damage"]) is Verdict.CORRECT
    assert (
        _verdict(unit, [{"name": "timing"}, {"name": "accumulation"}, {"name": "damage"}]) is Verdict.CORRECT
    )
    assert _verdict(unit, "timing > accumulation > damage") is Verdict.CORRECT
    assert _verdict(unit, ["accumulation", "timing", "damage"]) is Verdict.INCORRECT


def test_set_members_whatever_the_order_or_container() -> None:
    unit = _unit(UnitKind.SET, "coastal_surge_only")
    assert _verdict(unit, ["regional_only", "Coastal surge only"]) is Verdict.CORRECT
    assert _verdict(unit, {"coastal_surge_only": "rejected because ..."}) is Verdict.CORRECT
    assert _verdict(unit, [{"id": "regional_only"}]) is Verdict.INCORRECT
    paths = _unit(UnitKind.SET, "metadata/event.json")
    assert _verdict(paths, ["event_packages/standard_event_packages/packages/CSX-1/metadata/event.json"]) is (
        Verdict.CORRECT
    )


def test_open_vocabulary_labels_match_as_phrases() -> None:
    unit = _unit(UnitKind.LABEL, "heat_led_dry_continental_iberia_es_pathway")
    assert match_phrase(unit, "heat-led dry-continental impact").verdict is Verdict.CORRECT
    assert match_phrase(unit, "rainfall flooding").verdict is Verdict.INCORRECT
    assert match_phrase(unit, "not heat-led dry-continental impact").verdict is Verdict.INCORRECT
    assert match_phrase(_unit(UnitKind.LABEL, "score_4_of_4"), "score unresolved of 4").verdict is (
        Verdict.INCORRECT
    )
    prose = " ".join(["the storm"] * 20)
    assert match_phrase(unit, prose).verdict is Verdict.JUDGE_REQUIRED


def test_open_vocabulary_labels_match_the_phrase_of_a_variant() -> None:
    unit = _unit(
        UnitKind.LABEL, "smoke_haze_indoor_refuge_risk", variants=("smoke_haze_outdoor_refuge_priority",)
    )
    assert match_phrase(unit, "Smoke-Haze-Outdoor Priority").verdict is Verdict.CORRECT
    assert match_phrase(unit, "heat stress priority").verdict is Verdict.INCORRECT


def test_an_open_label_answered_with_nothing_or_no_text_is_incorrect() -> None:
    """Only prose goes to the judge: an empty list, a yes/no or an object of numbers states no label."""
    unit = _unit(UnitKind.LABEL, "heat_led_dry_continental_iberia_es_pathway")
    for submitted in ([], False, {"max_dnbr": 0.294, "mean_dnbr": -0.017}):
        assert match_phrase(unit, submitted).verdict is Verdict.INCORRECT, submitted
    prose = " ".join(["the storm"] * 20)
    assert match_phrase(unit, {"finding": prose, "evidence": prose}).verdict is Verdict.JUDGE_REQUIRED
    assert match_phrase(unit, {"finding": "heat-led dry-continental impact"}).verdict is Verdict.CORRECT


def test_free_text_is_judge_required() -> None:
    unit = _unit(UnitKind.TEXT, "A long explanation.", judge_required=True)
    assert _verdict(unit, "anything") is Verdict.JUDGE_REQUIRED
