from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest
from pydantic import ValidationError

from evaluator.traces import Submission, SubmissionMetadata, Trace, TraceFormatError
from evaluator.traces.answer_text import parse_answer
from evaluator.traces.io import read_submission, write_submission
from evaluator.traces.recorded import (
    read_recorded_trace,
    recorded_to_trace,
    trace_to_recorded,
)

RECORDED_RUNS = 1591
REPOSITORY_PREFIX = "event_packages/standard_event_packages/packages/"
EVIDENCE_KEYS_REORDERED = {"gemini-3-1-flash-lite/CSX-049_Q1"}
"""The one run whose evidence items list `support_type` before `source_file`; dicts do not keep order."""


def _run_path(source_release, run: str) -> Path:
    return source_release.trajectories_dir / f"{run}.json"


def _source_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _exact_text(data: dict) -> str:
    # Unlike ==, equal text also means equal key order and equal types (1 vs 1.0, true vs 1).
    return json.dumps(data, ensure_ascii=False)


def _metadata(system_id: str) -> SubmissionMetadata:
    return SubmissionMetadata(
        system_name=system_id,
        system_id=system_id,
        model="unknown",
        harness="unknown",
        organisation="unknown",
        contact="unknown",
        dataset_version="test",
    )


def test_every_recorded_run_round_trips_through_disk_without_loss(source_release, tmp_path):
    paths = sorted((source_release.trajectories_dir).glob("*/*.json"))
    assert len(paths) == RECORDED_RUNS
    by_system: dict[str, list[Trace]] = defaultdict(list)
    for path in paths:
        by_system[path.parent.name].append(read_recorded_trace(path))
    for system_id, traces in by_system.items():
        write_submission(
            tmp_path / f"{system_id}.jsonl", Submission(metadata=_metadata(system_id), traces=traces)
        )
    read_back = {
        f"{system_id}/{trace.task_id}": trace
        for system_id in by_system
        for trace in read_submission(tmp_path / f"{system_id}.jsonl").traces
    }
    assert len(by_system) == 25 and len(read_back) == RECORDED_RUNS
    unequal, reordered = [], set()
    for path in paths:
        run = f"{path.parent.name}/{path.stem}"
        original = _source_json(path)
        recovered = trace_to_recorded(read_back[run])
        if recovered != original:
            unequal.append(run)
        if _exact_text(recovered) != _exact_text(original):
            reordered.add(run)
    assert unequal == []
    assert reordered == EVIDENCE_KEYS_REORDERED


def test_a_recorded_run_maps_onto_the_trace_fields(source_release):
    path = _run_path(source_release, "gpt-5-5/CSX-321_Q2")
    source = _source_json(path)
    trace = read_recorded_trace(path, dataset_version="v-test")
    assert (trace.task_id, trace.event_id, trace.dataset_version) == ("CSX-321_Q2", "CSX-321", "v-test")
    assert (trace.system.system_id, trace.system.system_name) == ("gpt-5-5", "GPT-5.5")
    assert trace.run_status == "ok" and trace.termination_reason == "model_final"
    assert trace.totals.rounds == source["diagnostics"]["model_rounds"] == 8
    assert trace.totals.cost_source == "unpriced" and trace.totals.cost_usd is None
    assert [step.action for step in trace.steps] == [call["tool"] for call in source["tool_calls"]]
    first = trace.steps[0]
    assert first.index == 1 and first.arguments == {"subdir": ".", "max_files": 120}
    assert first.code is None and first.stdout is None and first.started_at is None
    python_step = next(step for step in trace.steps if step.action == "python_exec")
    assert python_step.code is not None and python_step.code.text.strip()
    assert trace.final_answer.status == "parsed" and trace.final_answer.raw_text_origin == "canonical_json"
    assert trace.final_answer.parsed == source["final_answer"]
    assert json.loads(trace.final_answer.raw_text) == source["final_answer"]
    assert len(trace.final_answer.evidence) == len(source["evidence"]) == 9
    assert trace.final_answer.research_summary == source["reasoning_summary"]
    assert trace.final_answer.limitations == source["unsupported_or_unresolved"]
    assert trace.recorded is not None and trace.recorded.overall == 92.95
    assert trace.recorded.judge_rationale.critical_errors == source["judge_rationale"]["critical_errors"]
    assert trace.extra == {}


def test_repository_form_paths_are_kept_as_recorded(source_release):
    trace = read_recorded_trace(_run_path(source_release, "gpt-5-5/CSX-321_Q2"))
    read_step = trace.steps[1]
    assert read_step.arguments["path"].startswith(f"{REPOSITORY_PREFIX}CSX-321/data/event_reports/")
    assert all(path.startswith(REPOSITORY_PREFIX) for path in read_step.evidence_files)


def test_a_string_answer_with_a_fenced_json_block_is_parsed(source_release):
    path = _run_path(source_release, "gpt-5-6-sol/CSX-118_Q1")
    source_answer = _source_json(path)["final_answer"]
    answer = read_recorded_trace(path).final_answer
    assert source_answer.startswith("```json")
    assert (answer.status, answer.raw_text_origin, answer.raw_text) == ("parsed", "model", source_answer)
    assert answer.parsed["classification"] == "wind-pressure timing core"
    fenced = json.loads(source_answer.removeprefix("```json").split("```", 1)[0])
    assert isinstance(answer.parsed["peak_gust_kmh"], float) and answer.parsed == fenced


def test_a_string_answer_of_field_lines_is_parsed_as_scored_and_comes_back_verbatim(source_release):
    path = _run_path(source_release, "claude-fable-5/CSX-263_Q2")
    trace = read_recorded_trace(path)
    assert trace.final_answer.status == "parsed"
    assert trace.final_answer.parsed["CO ratio"] == "13.0x"
    assert trace.final_answer.parsed == parse_answer(_source_json(path)["final_answer"]).value
    assert trace_to_recorded(trace)["final_answer"] == _source_json(path)["final_answer"]


def test_a_string_answer_that_is_whole_json_stays_a_string(source_release):
    path = _run_path(source_release, "kimi-k2-5/CSX-283_Q2")
    trace = read_recorded_trace(path)
    assert trace.final_answer.status == "parsed" and trace.final_answer.raw_text_origin == "model"
    assert trace_to_recorded(trace)["final_answer"] == _source_json(path)["final_answer"]


def test_recorded_quirks_are_mapped_and_restored(source_release):
    unreported = read_recorded_trace(_run_path(source_release, "openresearcher/CSX-001_Q1"))
    assert unreported.totals.total_tokens is None and unreported.termination_reason is None
    assert trace_to_recorded(unreported)["diagnostics"]["total_tokens"] == ""
    odd_tools = read_recorded_trace(_run_path(source_release, "qwen-3-7-plus/CSX-175_Q1"))
    assert "" in [step.action for step in odd_tools.steps]
    no_support_type = read_recorded_trace(_run_path(source_release, "gpt-4o/CSX-175_Q2"))
    item = next(
        item for item in no_support_type.final_answer.evidence if item.claim == "no AOD records found"
    )
    assert item.support_type is None
    recovered = trace_to_recorded(no_support_type)["evidence"]
    assert {"claim": "no AOD records found", "source_file": f"{REPOSITORY_PREFIX}CSX-175"} in recovered


def test_unknown_source_fields_are_kept_in_extra_and_restored(source_release):
    source = _source_json(_run_path(source_release, "gpt-5-5/CSX-321_Q2"))
    source["harness_build"] = "2026.1"
    source["diagnostics"]["gpu_seconds"] = 12.5
    source["judge_rationale"]["judge_model"] = "judge-x"
    source["tool_calls"][0]["latency_s"] = 0.4
    source["tool_calls"][0]["output"]["encoding"] = "utf-8"
    source["evidence"][0]["page"] = 3
    trace = recorded_to_trace(source)
    assert trace.extra == {
        "harness_build": "2026.1",
        "diagnostics": {"gpu_seconds": 12.5},
        "judge_rationale": {"judge_model": "judge-x"},
    }
    assert trace.steps[0].extra == {"latency_s": 0.4, "output": {"encoding": "utf-8"}}
    assert trace.final_answer.evidence[0].extra == {"page": 3}
    assert trace_to_recorded(Trace.model_validate_json(trace.model_dump_json())) == source


def test_malformed_recorded_run_names_the_file_and_field(source_release, tmp_path):
    source = _source_json(_run_path(source_release, "gpt-5-5/CSX-321_Q2"))
    source["tool_calls"][2]["ok"] = "perhaps"
    path = tmp_path / "gpt-5-5" / "CSX-321_Q2.json"
    path.parent.mkdir()
    path.write_text(json.dumps(source), encoding="utf-8")
    with pytest.raises(
        TraceFormatError, match=r"CSX-321_Q2\.json: not a valid RecordedRun: tool_calls\.2\.ok"
    ):
        read_recorded_trace(path)
    source["tool_calls"][2]["ok"] = True
    source["diagnostics"]["run_status"] = "exploded"
    path.write_text(json.dumps(source), encoding="utf-8")
    with pytest.raises(
        TraceFormatError, match=r"CSX-321_Q2\.json: cannot be converted to a trace: run_status"
    ):
        read_recorded_trace(path)


def test_a_nan_score_in_a_recorded_run_is_refused_by_file_and_field(source_release, tmp_path):
    source = _source_json(_run_path(source_release, "gpt-5-5/CSX-321_Q2"))
    source["scores"]["unit_accuracy"] = math.nan
    path = tmp_path / "gpt-5-5" / "CSX-321_Q2.json"
    path.parent.mkdir()
    path.write_text(json.dumps(source), encoding="utf-8")  # json writes NaN, as some harnesses do

    with pytest.raises(
        TraceFormatError, match=r"CSX-321_Q2\.json: not a valid RecordedRun: scores\.unit_accuracy"
    ):
        read_recorded_trace(path)


def test_a_run_filed_under_the_wrong_system_is_named(source_release, tmp_path):
    path = tmp_path / "gpt-4o" / "CSX-321_Q2.json"
    path.parent.mkdir()
    path.write_bytes(_run_path(source_release, "gpt-5-5/CSX-321_Q2").read_bytes())
    with pytest.raises(
        TraceFormatError, match="holds the run of gpt-5-5/CSX-321_Q2; expected gpt-4o/CSX-321_Q2"
    ):
        read_recorded_trace(path)


def test_a_trace_that_was_not_imported_has_no_recorded_form(source_release):
    trace = read_recorded_trace(_run_path(source_release, "gpt-5-5/CSX-321_Q2"))
    with pytest.raises(ValueError, match="not an imported recorded run"):
        trace_to_recorded(trace.model_copy(update={"recorded": None}))
    with pytest.raises(ValidationError):
        recorded_to_trace({"task_id": "CSX-321_Q2"})
