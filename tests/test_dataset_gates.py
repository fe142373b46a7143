"""Each gate on real records of the built release, and on records broken on purpose."""

from __future__ import annotations

import copy
import json

import pytest

from dataset.gates import GATE_NAMES, TaskInputs, anchoring, authoring, reference, rubric, run_gates
from dataset.gt_runner import GroundingResult
from dataset.package_audit import audit_package
from loaders import layout


@pytest.fixture(scope="module")
def records(source_release):
    return {record.task_id: record for record in source_release.records}


def _inputs(records, built_release, task_id, **changes):
    record = records[task_id]
    if changes:
        data = copy.deepcopy(record.model_dump())
        data.update(changes)
        record = type(record).model_validate(data)
    root = layout.package_dir(built_release, record.event_id)
    audit = audit_package(root, record.event_id, record.manifest())
    grounding = GroundingResult(task_id=task_id, status="regenerated")
    return TaskInputs(record=record, out=built_release, package=audit, grounding=grounding)


def test_a_sound_task_passes_every_gate(records, built_release):
    results = run_gates(_inputs(records, built_release, "CSX-001_Q1"))
    assert tuple(results) == GATE_NAMES
    assert {name: result.passed for name, result in results.items()} == dict.fromkeys(GATE_NAMES, True)
    assert results["event_anchoring"].details["window"] == {
        "start_date": "2021-06-25",
        "end_date": "2021-07-01",
    }


def test_anchoring_catches_a_hazard_family_the_anchor_file_contradicts(records, built_release):
    result = anchoring.check(_inputs(records, built_release, "CSX-027_Q1"))
    assert not result.passed
    assert "hazard_family 'heat_wave_urban_heat' differs from the task's 'heat_wave_drought'" in result.reason


def test_anchoring_ignores_punctuation_in_event_names(records, built_release):
    assert anchoring.check(_inputs(records, built_release, "CSX-202_Q1")).passed


def test_anchoring_catches_an_event_record_of_another_event(records, built_release):
    event = {**records["CSX-001_Q1"].event, "package_id": "CSX-002"}
    inputs = _inputs(records, built_release, "CSX-001_Q1", event=event)
    assert "package_id 'CSX-002' is not the task's event 'CSX-001'" in anchoring.check(inputs).reason


def test_anchoring_catches_a_task_whose_event_record_differs_from_its_package(records, built_release):
    event = {**records["CSX-001_Q1"].event, "region": "Antarctica"}
    result = anchoring.check(_inputs(records, built_release, "CSX-001_Q1", event=event))
    assert not result.passed and "differs from the package's metadata/event.json" in result.reason


def test_authoring_catches_a_question_that_states_a_derived_answer(records, built_release):
    result = authoring.check(_inputs(records, built_release, "CSX-070_Q1"))
    assert not result.passed and "17.9 of airport_runoff_mm" in result.reason


def test_authoring_catches_a_file_name_in_the_question(records, built_release):
    record = records["CSX-001_Q1"]
    name = record.event_files[3]["relative_path"].rsplit("/", 1)[-1]
    inputs = _inputs(records, built_release, "CSX-001_Q1", question=record.question + f"\nRead {name}.")
    result = authoring.check(inputs)
    assert not result.passed and name in result.reason


def test_reference_catches_a_withheld_source_file(records, built_release):
    record = records["CSX-063_Q2"]
    result = reference.check(_inputs(records, built_release, "CSX-063_Q2"))
    withheld = [path for path in record.ground_truth["provenance"]["source_files"] if path.endswith(".zip")]
    assert withheld and not result.passed and withheld[0] in result.reason and "withheld" in result.reason


def test_rubric_requires_partial_credit_and_twenty_points(records, built_release):
    assert rubric.check(_inputs(records, built_release, "CSX-001_Q1")).passed
    ground_truth = json.loads(json.dumps(records["CSX-001_Q1"].ground_truth))
    ground_truth["rubric"]["criteria"][0]["points"] += 1
    del ground_truth["rubric"]["criteria"][1]["partial_credit"]
    result = rubric.check(_inputs(records, built_release, "CSX-001_Q1", ground_truth=ground_truth))
    assert not result.passed
    assert "lacks partial_credit" in result.reason and "points sum to 21, not 20" in result.reason


def test_final_review_lists_the_failing_gates(records, built_release):
    results = run_gates(_inputs(records, built_release, "CSX-027_Q1"))
    assert not results["final_review"].passed
    assert "event_anchoring" in results["final_review"].reason
