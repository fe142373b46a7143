"""The paper's recorded runs (`trajectories/<model_id>/<task_id>.json` of the source release) as traces.

`recorded_to_trace` and `trace_to_recorded` are inverses: a recorded run converted to a `Trace` and back
is equal to the original JSON, field for field. Source fields the trace schema does not model go into
the trace's `extra` dicts and come back from there. Paths stay exactly as recorded (the repository form
`event_packages/standard_event_packages/packages/CSX-NNN/data/...` included).

Quirks of the recorded format that the mapping undoes: `total_tokens` is `""` when not reported
(`None` in `Totals`); the code / stdout / stderr blocks are present but empty on steps that ran no
code (`None` in `Step`); one evidence item lacks `support_type` (`None` in `Evidence`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from evaluator.traces.io import TraceFormatError, describe, parse_json_as, read_bytes
from evaluator.traces.schema import (
    CapturedText,
    Evidence,
    FinalAnswer,
    JudgeRationale,
    RecordedScores,
    Step,
    SystemIdentity,
    Totals,
    Trace,
    event_id_of,
)

RUN_SECTIONS = ("scores", "diagnostics", "judge_rationale")
STEP_BLOCKS = ("output", "code", "stdout", "stderr")


class _Source(BaseModel):
    """A part of the recorded format; unknown keys are kept (in `model_extra`) so nothing is lost. A NaN
    or infinite number is refused here: the trace it would become could not be written as JSON and read
    back."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)


class RecordedText(_Source):
    text: str
    truncated: bool
    original_chars: int


class RecordedToolCall(_Source):
    step: int
    tool: str
    ok: bool
    reason: str
    args: dict[str, Any]
    output: RecordedText
    code: RecordedText
    stdout: RecordedText
    stderr: RecordedText
    returncode: int | None
    warnings: list[str]
    evidence_files: list[str]


class RecordedEvidence(_Source):
    claim: str
    source_file: str | list[str] | None
    support_type: str | None = None


class RecordedScoreBlock(_Source):
    overall: float
    answer: float
    rubric: float
    unit_accuracy: float
    answer_units_correct: int
    answer_units_total: int
    rubric_points_earned: float
    rubric_points_total: float
    verdict: str


class RecordedDiagnostics(_Source):
    run_status: str
    termination_reason: str | None
    latency_s: float
    tool_calls: int
    model_rounds: int
    file_reads: int
    unique_evidence_files: int
    python_calls: int
    tool_errors: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int | Literal[""]


class RecordedJudgeRationale(_Source):
    rationale: dict[str, str]
    one_sentence_rationale: str
    critical_errors: list[str]
    missing_answer_elements: list[str]


class RecordedRun(_Source):
    """One recorded run file, in the source's own field names and order."""

    task_id: str
    model_id: str
    model_name: str
    scores: RecordedScoreBlock
    diagnostics: RecordedDiagnostics
    tool_calls: list[RecordedToolCall]
    evidence: list[RecordedEvidence]
    reasoning_summary: list[str]
    unsupported_or_unresolved: list[str]
    final_answer: dict[str, Any] | str
    judge_rationale: RecordedJudgeRationale


def read_recorded_trace(path: Path, dataset_version: str | None = None) -> Trace:
    """Read `trajectories/<model_id>/<task_id>.json` as a Trace; a TraceFormatError names the file."""
    path = Path(path)
    run = parse_json_as(RecordedRun, read_bytes(path), str(path))
    if (path.parent.name, path.stem) != (run.model_id, run.task_id):
        raise TraceFormatError(
            f"{path}: holds the run of {run.model_id}/{run.task_id}; expected {path.parent.name}/{path.stem}"
        )
    try:
        return _to_trace(run, dataset_version)
    except ValidationError as error:
        raise TraceFormatError(f"{path}: cannot be converted to a trace: {describe(error)}") from error


def recorded_to_trace(data: dict[str, Any], dataset_version: str | None = None) -> Trace:
    """A recorded run (the parsed source JSON) as a Trace; pydantic's ValidationError when it is not one."""
    return _to_trace(RecordedRun.model_validate(data), dataset_version)


def _to_trace(run: RecordedRun, dataset_version: str | None) -> Trace:
    return Trace(
        task_id=run.task_id,
        event_id=event_id_of(run.task_id),
        system=SystemIdentity(system_id=run.model_id, system_name=run.model_name, model=run.model_name),
        dataset_version=dataset_version,
        steps=[_step(call) for call in run.tool_calls],
        final_answer=_final_answer(run),
        termination_reason=run.diagnostics.termination_reason,
        run_status=run.diagnostics.run_status,
        totals=_totals(run.diagnostics),
        recorded=_recorded_scores(run.scores, run.judge_rationale),
        extra=_unknown(run, {name: getattr(run, name) for name in RUN_SECTIONS}),
    )


def _step(call: RecordedToolCall) -> Step:
    return Step(
        index=call.step,
        action=call.tool,
        reason=call.reason,
        arguments=call.args,
        observation=_captured(call.output),
        code=_captured_or_none(call.code),
        stdout=_captured_or_none(call.stdout),
        stderr=_captured_or_none(call.stderr),
        returncode=call.returncode,
        ok=call.ok,
        warnings=call.warnings,
        evidence_files=call.evidence_files,
        extra=_unknown(call, {name: getattr(call, name) for name in STEP_BLOCKS}),
    )


def _captured(block: RecordedText) -> CapturedText:
    return CapturedText(text=block.text, truncated=block.truncated, original_chars=block.original_chars)


def _captured_or_none(block: RecordedText) -> CapturedText | None:
    # The recorded format writes an empty block where nothing was captured; the trace says None.
    captured = _captured(block)
    return None if captured == CapturedText() else captured


def _final_answer(run: RecordedRun) -> FinalAnswer:
    provenance: dict[str, Any] = {
        "evidence": [_evidence(item) for item in run.evidence],
        "research_summary": run.reasoning_summary,
        "limitations": run.unsupported_or_unresolved,
    }
    if isinstance(run.final_answer, str):
        return FinalAnswer.from_text(run.final_answer, **provenance)
    return FinalAnswer.from_object(run.final_answer, **provenance)


def _evidence(item: RecordedEvidence) -> Evidence:
    return Evidence(
        claim=item.claim,
        source_file=item.source_file,
        support_type=item.support_type,
        extra=dict(item.model_extra or {}),
    )


def _totals(diagnostics: RecordedDiagnostics) -> Totals:
    return Totals(
        rounds=diagnostics.model_rounds,
        tool_calls=diagnostics.tool_calls,
        file_reads=diagnostics.file_reads,
        unique_files=diagnostics.unique_evidence_files,
        python_calls=diagnostics.python_calls,
        tool_errors=diagnostics.tool_errors,
        latency_s=diagnostics.latency_s,
        prompt_tokens=diagnostics.prompt_tokens,
        completion_tokens=diagnostics.completion_tokens,
        total_tokens=None if diagnostics.total_tokens == "" else diagnostics.total_tokens,
    )


def _recorded_scores(scores: RecordedScoreBlock, judge: RecordedJudgeRationale) -> RecordedScores:
    return RecordedScores(
        **_known_fields(scores),
        judge_rationale=JudgeRationale(**_known_fields(judge)),
    )


def _known_fields(model: BaseModel) -> dict[str, Any]:
    return {name: getattr(model, name) for name in type(model).model_fields}


def _unknown(model: BaseModel, sections: dict[str, BaseModel]) -> dict[str, Any]:
    """Unknown keys of `model`, plus the unknown keys of each known section under the section's name."""
    unknown = dict(model.model_extra or {})
    for name, section in sections.items():
        if section.model_extra:
            unknown[name] = dict(section.model_extra)
    return unknown


def trace_to_recorded(trace: Trace) -> dict[str, Any]:
    """The recorded-run JSON a trace was imported from, exactly (equal to the source file's content).

    Raises ValueError for a trace that carries no recorded scores, i.e. was not imported from a run.
    """
    if trace.recorded is None:
        raise ValueError(f"{trace.task_id}: not an imported recorded run (it has no recorded scores)")
    top, sections = _split_unknown(trace.extra, RUN_SECTIONS)
    run = RecordedRun(
        task_id=trace.task_id,
        model_id=trace.system.system_id,
        model_name=trace.system.system_name,
        scores=RecordedScoreBlock(
            **trace.recorded.model_dump(exclude={"judge_rationale"}), **sections["scores"]
        ),
        diagnostics=_diagnostics(trace, sections["diagnostics"]),
        tool_calls=[_tool_call(step) for step in trace.steps],
        evidence=[_recorded_evidence(item) for item in trace.final_answer.evidence],
        reasoning_summary=trace.final_answer.research_summary,
        unsupported_or_unresolved=trace.final_answer.limitations,
        final_answer=_recorded_answer(trace.final_answer),
        judge_rationale=RecordedJudgeRationale(
            **trace.recorded.judge_rationale.model_dump(), **sections["judge_rationale"]
        ),
        **top,
    )
    return run.model_dump(exclude_unset=True)


def _split_unknown(
    extra: dict[str, Any], section_names: tuple[str, ...]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The inverse of `_unknown`: (unknown top-level keys, unknown keys per section)."""
    top = {key: value for key, value in extra.items() if key not in section_names}
    return top, {name: extra.get(name, {}) for name in section_names}


def _diagnostics(trace: Trace, unknown: dict[str, Any]) -> RecordedDiagnostics:
    totals = trace.totals
    return RecordedDiagnostics(
        run_status=trace.run_status,
        termination_reason=trace.termination_reason,
        latency_s=totals.latency_s,
        tool_calls=totals.tool_calls,
        model_rounds=totals.rounds,
        file_reads=totals.file_reads,
        unique_evidence_files=totals.unique_files,
        python_calls=totals.python_calls,
        tool_errors=totals.tool_errors,
        prompt_tokens=totals.prompt_tokens,
        completion_tokens=totals.completion_tokens,
        total_tokens="" if totals.total_tokens is None else totals.total_tokens,
        **unknown,
    )


def _tool_call(step: Step) -> RecordedToolCall:
    top, blocks = _split_unknown(step.extra, STEP_BLOCKS)
    return RecordedToolCall(
        step=step.index,
        tool=step.action,
        ok=step.ok,
        reason=step.reason,
        args=step.arguments,
        output=_recorded_text(step.observation, blocks["output"]),
        code=_recorded_text(step.code, blocks["code"]),
        stdout=_recorded_text(step.stdout, blocks["stdout"]),
        stderr=_recorded_text(step.stderr, blocks["stderr"]),
        returncode=step.returncode,
        warnings=step.warnings,
        evidence_files=step.evidence_files,
        **top,
    )


def _recorded_text(captured: CapturedText | None, unknown: dict[str, Any]) -> RecordedText:
    return RecordedText(**(captured or CapturedText()).model_dump(), **unknown)


def _recorded_evidence(item: Evidence) -> RecordedEvidence:
    # Only a missing support_type occurs in the recorded runs, never a null one.
    optional = {} if item.support_type is None else {"support_type": item.support_type}
    return RecordedEvidence(claim=item.claim, source_file=item.source_file, **optional, **item.extra)


def _recorded_answer(answer: FinalAnswer) -> dict[str, Any] | str:
    return answer.parsed if answer.raw_text_origin == "canonical_json" else answer.raw_text
