from __future__ import annotations

import pytest

from evaluator.scoring.diagnostics import diagnose, opened_files
from evaluator.traces.recorded import read_recorded_trace
from loaders.package import EventPackage
from loaders.release import open_ground_truth


@pytest.fixture(scope="module")
def hidden(built_release):
    return open_ground_truth(built_release)


def _run(source_release, system, task_id):
    return read_recorded_trace(source_release.trajectories_dir / system / f"{task_id}.json")


def _package(built_release, event_id):
    return EventPackage(built_release / "packages" / event_id, event_id)


def test_a_recorded_run_opens_provenance_files_and_cites_what_it_read(source_release, built_release, hidden):
    trace = _run(source_release, "gpt-5-5", "CSX-003_Q2")
    package = _package(built_release, "CSX-003")
    provenance = hidden["CSX-003_Q2"].ground_truth.provenance.source_files
    result = diagnose(trace, provenance, package, frozenset(package.list_files()))
    opened = opened_files(trace, package)
    assert result.provenance_files == len({p for p in provenance})
    assert result.provenance_opened == len(set(provenance) & opened)
    assert 0 < result.evidence_recall <= 100
    assert result.cited_files > 0 and result.cited_valid <= result.cited_files
    assert result.answer_numbers > 0 and 0 < result.answer_in_trace <= 100


def test_numbers_invented_outside_the_trace_are_not_in_it(source_release, built_release, hidden):
    trace = _run(source_release, "gpt-5-5", "CSX-003_Q2")
    package = _package(built_release, "CSX-003")
    invented = trace.final_answer.model_copy(
        update={"parsed": {"a": 123456.789, "b": -98765.4321, "flag": True}}
    )
    result = diagnose(trace.model_copy(update={"final_answer": invented}), [], package, frozenset())
    assert result.answer_numbers == 2 and result.answer_numbers_seen == 0 and result.answer_in_trace == 0
    assert result.evidence_recall is None


def test_a_number_counts_when_an_observation_rounds_to_it(source_release, built_release):
    trace = _run(source_release, "gpt-5-5", "CSX-003_Q2")
    package = _package(built_release, "CSX-003")
    step = trace.steps[0].model_copy(
        update={"observation": trace.steps[0].observation.model_copy(update={"text": "peak 35.4987 C"})}
    )
    answer = trace.final_answer.model_copy(update={"parsed": {"peak": 35.5, "other": 35.6}})
    probe = trace.model_copy(update={"steps": [step], "final_answer": answer})
    result = diagnose(probe, [], package, frozenset(package.list_files()))
    assert (result.answer_numbers, result.answer_numbers_seen) == (2, 1)


def test_cited_files_that_do_not_exist_or_were_not_opened_are_invalid(source_release, built_release):
    trace = _run(source_release, "gpt-5-5", "CSX-003_Q2")
    package = _package(built_release, "CSX-003")
    evidence = trace.final_answer.evidence[0]
    fake = [
        evidence.model_copy(update={"source_file": "data/event_reports/never_there.json"}),
        evidence.model_copy(update={"source_file": "../../../etc/passwd"}),
    ]
    probe = trace.model_copy(
        update={"final_answer": trace.final_answer.model_copy(update={"evidence": fake})}
    )
    result = diagnose(probe, [], package, frozenset(package.list_files()))
    assert result.cited_files == 2 and result.cited_valid == 0 and result.citation_validity == 0
