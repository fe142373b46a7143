from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from evaluator.traces import (
    CapturedText,
    FinalAnswer,
    Step,
    Submission,
    SubmissionMetadata,
    SystemIdentity,
    Totals,
    Trace,
    TraceFormatError,
    export_json_schema,
    read_submission,
    read_trace,
    write_submission,
    write_trace,
)
from evaluator.traces.answer_text import parse_answer
from evaluator.traces.recorded import read_recorded_trace

SYSTEM = SystemIdentity(system_id="demo-agent", system_name="Demo Agent", model="demo-model", harness="demo")


def _trace(task_id: str = "CSX-001_Q1", **changes) -> Trace:
    fields = {
        "task_id": task_id,
        "event_id": task_id.rsplit("_", 1)[0],
        "system": SYSTEM,
        "steps": [
            Step(
                index=1,
                action="read_text_file",
                arguments={"path": "data/event_reports/anchor.json"},
                observation=CapturedText(text="{}", original_chars=2),
                ok=True,
            ),
            Step(index=2, action="python_exec", ok=False, error="exit status 1", returncode=1),
        ],
        "final_answer": FinalAnswer.from_text('{"answer": 1}'),
        "run_status": "ok",
        "totals": Totals(
            rounds=3,
            tool_calls=2,
            file_reads=1,
            unique_files=1,
            python_calls=1,
            tool_errors=1,
            latency_s=1.5,
        ),
    }
    return Trace(**{**fields, **changes})


def _metadata(system_id: str = "demo-agent") -> SubmissionMetadata:
    return SubmissionMetadata(
        system_name="Demo Agent",
        system_id=system_id,
        model="demo-model",
        harness="demo",
        organisation="EarthVerse tests",
        contact="tests@example.org",
        dataset_version="test",
    )


def test_trace_file_round_trip_is_exact_and_atomic(tmp_path):
    path = tmp_path / "traces" / "CSX-001_Q1.json"
    write_trace(path, _trace())
    write_trace(path, _trace(termination_reason="model_final"))
    assert read_trace(path) == _trace(termination_reason="model_final")
    assert [entry.name for entry in path.parent.iterdir()] == ["CSX-001_Q1.json"]


def test_a_real_recorded_trace_survives_write_and_read(source_release, tmp_path):
    trace = read_recorded_trace(source_release.trajectories_dir / "gpt-5-5" / "CSX-321_Q2.json")
    write_trace(tmp_path / "trace.json", trace)
    assert read_trace(tmp_path / "trace.json") == trace


def test_inconsistent_traces_are_rejected_with_the_reason():
    with pytest.raises(ValidationError, match="event_id 'CSX-002' should be 'CSX-001'"):
        _trace(event_id="CSX-002")
    with pytest.raises(ValidationError, match=r"step indices are not increasing: \[2, 1\]"):
        _trace(steps=[Step(index=2, action="a", ok=True), Step(index=1, action="b", ok=True)])
    with pytest.raises(ValidationError, match="task_id"):
        _trace(task_id="csx-1")
    with pytest.raises(ValidationError, match="error is set but ok is true"):
        Step(index=1, action="read_text_file", ok=True, error="boom")
    with pytest.raises(ValidationError, match="run_status"):
        _trace(run_status="crashed")
    with pytest.raises(ValidationError, match="extra_forbidden"):
        Trace.model_validate({**_trace().model_dump(), "score": 100})


def test_cost_source_says_whether_a_cost_is_given():
    totals = _trace().totals
    assert totals.cost_source == "unpriced"
    priced = Totals(**{**totals.model_dump(), "cost_usd": 0.42, "cost_source": "recomputed"})
    assert priced.cost_usd == 0.42
    with pytest.raises(ValidationError, match="cost_source must be 'unpriced' exactly when"):
        Totals(**{**totals.model_dump(), "cost_usd": 0.42})


def test_answer_text_with_a_fenced_json_block_is_parsed():
    text = 'Here is my answer.\n```json\n{"label": "pluvial", "total_mm": 158.3}\n```\nDone {not json}.'
    answer = FinalAnswer.from_text(text)
    assert answer.status == "parsed" and answer.raw_text == text and answer.raw_text_origin == "model"
    assert answer.parsed == {"label": "pluvial", "total_mm": 158.3}


def test_answer_text_uses_the_first_valid_json_object():
    text = 'Ratio {a/b} first, then {"ratio": 13.0, "gates": {"ok": true}}\nand {"later": 1}'
    assert FinalAnswer.from_text(text).parsed == {"ratio": 13.0, "gates": {"ok": True}}


def test_answer_text_of_field_lines_is_parsed_as_the_scorer_reads_it():
    answer = FinalAnswer.from_text("CO ratio: 13.0x\nPriority: public health")
    assert answer.parsed == {"CO ratio": "13.0x", "Priority": "public health"}
    assert answer.parsed == parse_answer(answer.raw_text).value


def test_prose_is_unparsed_a_repaired_answer_says_so_and_blank_text_is_missing():
    unparsed = FinalAnswer.from_text("The flood was driven by rainfall.")
    assert (unparsed.status, unparsed.parsed) == ("unparsed", None)
    assert unparsed.raw_text == "The flood was driven by rainfall."
    repaired = FinalAnswer.from_text('{"answer": 1}', repair_attempts=1)
    assert (repaired.status, repaired.parsed) == ("repaired", {"answer": 1})
    assert FinalAnswer.from_text("  \n").status == "missing"


def test_answer_object_keeps_its_canonical_json_text():
    answer = FinalAnswer.from_object({"b": 1, "a": "é"})
    assert answer.raw_text == '{"b":1,"a":"é"}'
    assert (answer.status, answer.raw_text_origin) == ("parsed", "canonical_json")
    with pytest.raises(ValidationError, match="not the canonical JSON of parsed"):
        FinalAnswer(raw_text="{}", raw_text_origin="canonical_json", parsed={"a": 1}, status="parsed")


def test_answer_status_must_agree_with_the_parsed_object():
    with pytest.raises(ValidationError, match="status 'parsed' needs a parsed object"):
        FinalAnswer(raw_text="x", status="parsed")
    with pytest.raises(ValidationError, match="status 'unparsed' must not carry a parsed object"):
        FinalAnswer(raw_text="x", status="unparsed", parsed={"a": 1})
    with pytest.raises(ValidationError, match="repair_attempts >= 1"):
        FinalAnswer(raw_text="x", status="repaired", parsed={"a": 1})


def test_duplicated_task_ids_are_rejected_by_name():
    traces = [_trace("CSX-001_Q1"), _trace("CSX-002_Q1"), _trace("CSX-001_Q1"), _trace("CSX-002_Q1")]
    with pytest.raises(ValidationError, match=r"duplicated task ids: CSX-001_Q1 \(2 traces\), CSX-002_Q1"):
        Submission(metadata=_metadata(), traces=traces)


def test_traces_of_another_system_are_rejected():
    with pytest.raises(ValidationError, match="traces of another system than 'other': CSX-001_Q1"):
        Submission(metadata=_metadata("other"), traces=[_trace()])


def test_submission_jsonl_round_trip(tmp_path):
    submission = Submission(metadata=_metadata(), traces=[_trace("CSX-001_Q1"), _trace("CSX-002_Q2")])
    path = tmp_path / "submission.jsonl"
    write_submission(path, submission)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and list(json.loads(lines[0])) == ["metadata"]
    assert json.loads(lines[2])["task_id"] == "CSX-002_Q2"
    assert read_submission(path) == submission


def _jsonl(path: Path, *lines: str) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def test_malformed_trace_line_names_file_and_line(tmp_path):
    header = json.dumps({"metadata": _metadata().model_dump(mode="json")})
    broken = _trace("CSX-002_Q1").model_dump(mode="json")
    broken["steps"][0]["ok"] = "perhaps"
    path = _jsonl(tmp_path / "submission.jsonl", header, _trace().model_dump_json(), "", json.dumps(broken))
    with pytest.raises(TraceFormatError, match=r"submission\.jsonl:4: not a valid Trace: steps\.0\.ok: "):
        read_submission(path)
    _jsonl(path, header, '{"task_id": "CSX-001_Q1", ')
    with pytest.raises(TraceFormatError, match=r"submission\.jsonl:2: not a valid Trace: .*Invalid JSON"):
        read_submission(path)


def test_missing_or_malformed_metadata_line_is_named(tmp_path):
    with pytest.raises(TraceFormatError, match=r"empty\.jsonl: empty file"):
        read_submission(_jsonl(tmp_path / "empty.jsonl"))
    path = _jsonl(tmp_path / "headless.jsonl", _trace().model_dump_json())
    with pytest.raises(
        TraceFormatError, match=r"headless\.jsonl:1: not a valid SubmissionHeader: metadata: "
    ):
        read_submission(path)
    with pytest.raises(TraceFormatError, match=r"nowhere\.jsonl: cannot read"):
        read_submission(tmp_path / "nowhere.jsonl")


def test_duplicated_task_ids_in_a_file_name_the_file(tmp_path):
    header = json.dumps({"metadata": _metadata().model_dump(mode="json")})
    line = _trace().model_dump_json()
    path = _jsonl(tmp_path / "twice.jsonl", header, line, line)
    with pytest.raises(
        TraceFormatError, match=r"twice\.jsonl: .*duplicated task ids: CSX-001_Q1 \(2 traces\)"
    ):
        read_submission(path)


def test_submission_folder_of_trace_files(tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "metadata.json").write_text(_metadata().model_dump_json(), encoding="utf-8")
    for task_id in ("CSX-002_Q1", "CSX-001_Q1"):
        write_trace(folder / f"{task_id}.json", _trace(task_id))
    submission = read_submission(folder)
    assert submission.metadata == _metadata()
    assert [trace.task_id for trace in submission.traces] == ["CSX-001_Q1", "CSX-002_Q1"]
    (folder / "CSX-001_Q1.json").rename(folder / "CSX-009_Q9.json")
    with pytest.raises(TraceFormatError, match=r"CSX-009_Q9\.json: holds the trace of CSX-001_Q1"):
        read_submission(folder)
    (folder / "metadata.json").unlink()
    with pytest.raises(TraceFormatError, match=r"a submission folder needs a metadata\.json"):
        read_submission(folder)


def test_json_schemas_are_written_and_document_every_field(tmp_path):
    paths = export_json_schema(tmp_path / "schema")
    assert [path.name for path in paths] == ["trace.schema.json", "submission.schema.json"]
    trace_schema = json.loads(paths[0].read_text(encoding="utf-8"))
    submission_schema = json.loads(paths[1].read_text(encoding="utf-8"))
    assert {"Step", "FinalAnswer", "Totals", "RecordedScores"} <= set(trace_schema["$defs"])
    assert "Trace" in submission_schema["$defs"]
    definitions = {
        **trace_schema["$defs"],
        **submission_schema["$defs"],
        "Trace": trace_schema,
        "Submission": submission_schema,
    }
    undocumented = [
        f"{name}.{field}"
        for name, definition in definitions.items()
        for field, spec in definition.get("properties", {}).items()
        if "description" not in spec
    ]
    assert undocumented == []
