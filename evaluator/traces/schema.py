"""The trace and submission format: what one task run and one system's submission are.

A `Trace` records one agent run on one task: who ran it, every step (action, arguments, observation,
timing, tokens), the final answer (raw text, parsed object, status), how the run ended and its totals.
A `Submission` is one system's metadata plus one trace per task. Tasks without a trace count as zero.

Every model forbids unknown fields so that a typo in a submission is an error, not a silent loss;
source fields this schema does not model are kept in the explicit `extra` dicts.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from itertools import pairwise
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evaluator.traces.answer_text import parse_answer
from loaders.models import TASK_ID_FIELD

SCHEMA_VERSION = "1.0"
UNKNOWN = "unknown"
MAX_NAMED = 5
"""How many offending traces an error message names."""

RunStatus = Literal["ok", "solver_failure", "infrastructure_failure"]
AnswerStatus = Literal["parsed", "repaired", "unparsed", "missing"]
CostSource = Literal["recomputed", "self-reported", "unpriced"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CapturedText(_Strict):
    """A piece of text a harness captured (an observation, code, stdout or stderr), possibly capped."""

    text: str = Field(default="", description="The captured text as stored (after any cap).")
    truncated: bool = Field(default=False, description="True when the harness cut the text to its cap.")
    original_chars: int = Field(
        default=0,
        ge=0,
        description="Length in characters the harness reported for the text before any cap. The recorded "
        "runs do not always agree with len(text): their tool outputs were re-capped for the companion site.",
    )


class StepTokens(_Strict):
    """Model tokens spent on the round that produced a step."""

    prompt: int | None = Field(default=None, ge=0, description="Prompt (input) tokens of the round.")
    completion: int | None = Field(default=None, ge=0, description="Completion (output) tokens of the round.")


class Step(_Strict):
    """One action of the agent: a tool call (or the closing `final_answer` action) and what it returned."""

    index: int = Field(ge=1, description="Position of the step in the run, counted from 1, increasing.")
    action: str = Field(
        description="The tool name exactly as the model emitted it (the six paper tools, `final_answer`, "
        "or whatever else a model produced, e.g. `browser.open` or an empty string)."
    )
    reason: str = Field(default="", description="The agent's stated reason for the step.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool arguments as given.")
    observation: CapturedText = Field(
        default_factory=CapturedText, description="What the tool returned to the agent (capped text)."
    )
    code: CapturedText | None = Field(
        default=None, description="The program of a python step; None when the step ran no code."
    )
    stdout: CapturedText | None = Field(
        default=None,
        description="Standard output of a python step, when captured separately. The recorded runs keep "
        "stdout inside the observation text, so it is None for them.",
    )
    stderr: CapturedText | None = Field(
        default=None,
        description="Standard error of a python step, when captured separately (None for recorded runs, "
        "which keep it inside the observation text).",
    )
    returncode: int | None = Field(
        default=None, description="Exit status of a python step; None when not run or not recorded."
    )
    ok: bool = Field(description="Whether the tool executed successfully (not whether the agent was right).")
    error: str | None = Field(
        default=None,
        description="The failure message when ok is false. The recorded runs have no separate message: "
        "their failure text is the observation and its class is in warnings, so error is None for them.",
    )
    warnings: list[str] = Field(
        default_factory=list, description="Harness warnings about the step, e.g. `missing file`."
    )
    evidence_files: list[str] = Field(
        default_factory=list,
        description="Package files the step touched, as the harness named them (package-relative `data/...` "
        "or the repository form `event_packages/standard_event_packages/packages/CSX-NNN/data/...`).",
    )
    started_at: datetime | None = Field(default=None, description="When the step started (recorded: none).")
    ended_at: datetime | None = Field(default=None, description="When the step ended (recorded: none).")
    tokens: StepTokens | None = Field(default=None, description="Tokens of the model round behind this step.")
    cost_usd: float | None = Field(default=None, ge=0, description="USD cost of that model round, if known.")
    extra: dict[str, Any] = Field(
        default_factory=dict,
        description="Source fields of the step this schema does not model, kept verbatim. Keys are the "
        "source's own; unknown keys inside a captured-text block sit under that block's source name.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Step:
        if self.error is not None and self.ok:
            raise ValueError(f"step {self.index}: error is set but ok is true")
        if self.started_at and self.ended_at and self.ended_at < self.started_at:
            raise ValueError(f"step {self.index}: ended_at is before started_at")
        return self


class Evidence(_Strict):
    """One provenance claim of the final answer: what was claimed and which file supports it."""

    claim: str = Field(description="The claim, in the agent's words.")
    source_file: str | list[str] | None = Field(
        default=None,
        description="The supporting file or files as the agent named them; agents also write free text "
        "here (e.g. `derived_metric`). None when the agent gave none.",
    )
    support_type: str | None = Field(
        default=None, description="How the file supports the claim, e.g. `table_metric`; None when not given."
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Source fields of the evidence item this schema does not model."
    )


class FinalAnswer(_Strict):
    """The answer a run submitted: its raw text, the parsed object the scorer reads, and provenance."""

    raw_text: str = Field(description="The answer text as produced; always kept, even when parsed.")
    raw_text_origin: Literal["model", "canonical_json"] = Field(
        default="model",
        description="`model`: raw_text is what the model wrote. `canonical_json`: the harness kept only "
        "the parsed object, and raw_text is that object's canonical JSON text (see `canonical_json`).",
    )
    parsed: Any | None = Field(
        default=None, description="The answer object the scorer reads; None when nothing could be parsed."
    )
    repair_attempts: int = Field(default=0, ge=0, description="How many times the answer had to be repaired.")
    status: AnswerStatus = Field(
        description="`parsed`: an answer object was read from the answer as given. `repaired`: it was read "
        "only after at least one repair attempt. `unparsed`: there is text but no answer object. `missing`: "
        "the run produced no answer text."
    )
    confidence: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Self-reported confidence in [0, 1], if the harness asked for one. Recorded runs: None "
        "(a `confidence` key a model put into its answer stays inside `parsed`).",
    )
    evidence: list[Evidence] = Field(default_factory=list, description="Provenance claims for the answer.")
    research_summary: list[str] = Field(
        default_factory=list, description="The agent's summary of its research and reasoning, step by step."
    )
    limitations: list[str] = Field(
        default_factory=list,
        description="What the agent reports as unsupported or unresolved (the paper's "
        "`unsupported_or_unresolved`).",
    )

    @model_validator(mode="after")
    def _consistent(self) -> FinalAnswer:
        has_object = self.parsed is not None
        if self.status in ("parsed", "repaired") and not has_object:
            raise ValueError(f"final answer status {self.status!r} needs a parsed object")
        if self.status in ("unparsed", "missing") and has_object:
            raise ValueError(f"final answer status {self.status!r} must not carry a parsed object")
        if self.status == "missing" and self.raw_text.strip():
            raise ValueError("final answer status 'missing' but raw_text is not empty")
        if self.status == "repaired" and self.repair_attempts < 1:
            raise ValueError("final answer status 'repaired' needs repair_attempts >= 1")
        if self.raw_text_origin == "canonical_json" and self.raw_text != canonical_json(self.parsed):
            raise ValueError(
                "raw_text_origin 'canonical_json' but raw_text is not the canonical JSON of parsed"
            )
        return self

    @classmethod
    def from_object(cls, answer: Any, **fields: Any) -> FinalAnswer:
        """An answer the harness holds only as an object: raw_text its canonical JSON, status parsed
        (repaired, after a repair attempt)."""
        return cls(
            raw_text=canonical_json(answer),
            raw_text_origin="canonical_json",
            parsed=answer,
            status=_read_status(fields),
            **fields,
        )

    @classmethod
    def from_text(cls, text: str, **fields: Any) -> FinalAnswer:
        """An answer given as model text, read by the scorer's parser (evaluator.traces.answer_text):
        parsed (repaired, after a repair attempt) when it holds a JSON value, else unparsed or missing."""
        if not text.strip():
            return cls(raw_text=text, status="missing", **fields)
        answer = parse_answer(text).value
        if answer is None:
            return cls(raw_text=text, status="unparsed", **fields)
        return cls(raw_text=text, parsed=answer, status=_read_status(fields), **fields)


def _read_status(fields: dict[str, Any]) -> AnswerStatus:
    """`repaired` when the answer needed a repair attempt to be read, else `parsed`."""
    return "repaired" if fields.get("repair_attempts") else "parsed"


class SystemIdentity(_Strict):
    """Which system produced a run."""

    system_id: str = Field(min_length=1, description="Stable id of the system, e.g. `gpt-5-5`.")
    system_name: str = Field(min_length=1, description="Display name, e.g. `GPT-5.5`.")
    model: str = Field(default=UNKNOWN, description="The underlying model as the submitter names it.")
    harness: str = Field(default=UNKNOWN, description="The agent harness that drove the model.")


class Totals(_Strict):
    """Whole-run counts as the harness reported them (recorded runs: the paper's diagnostics, verbatim)."""

    rounds: int = Field(ge=0, description="Model rounds (calls to the model).")
    tool_calls: int = Field(
        ge=0,
        description="Tool calls the harness counted. Recorded runs: as reported, which in a few runs differs "
        "from the number of recorded steps.",
    )
    file_reads: int = Field(ge=0, description="File-reading tool calls.")
    unique_files: int = Field(ge=0, description="Distinct package files touched.")
    python_calls: int = Field(ge=0, description="python_exec calls.")
    tool_errors: int = Field(ge=0, description="Tool calls that failed to execute.")
    latency_s: float = Field(ge=0, description="Wall-clock seconds of the run.")
    prompt_tokens: int | None = Field(default=None, ge=0, description="Prompt tokens over the run.")
    completion_tokens: int | None = Field(default=None, ge=0, description="Completion tokens over the run.")
    total_tokens: int | None = Field(
        default=None, ge=0, description="All tokens over the run; None when not reported."
    )
    cost_usd: float | None = Field(default=None, ge=0, description="USD cost of the run, if priced.")
    cost_source: CostSource = Field(
        default="unpriced",
        description="`recomputed`: cost_usd computed by us from tokens and a price table; `self-reported`: "
        "as the submitter stated it; `unpriced`: no cost (cost_usd is None).",
    )

    @classmethod
    def empty(cls) -> Totals:
        """The totals of a run that never reached the model: every count zero, nothing priced."""
        return cls(
            rounds=0, tool_calls=0, file_reads=0, unique_files=0, python_calls=0, tool_errors=0, latency_s=0
        )

    @model_validator(mode="after")
    def _priced(self) -> Totals:
        if (self.cost_usd is None) != (self.cost_source == "unpriced"):
            raise ValueError("cost_source must be 'unpriced' exactly when cost_usd is None")
        return self


class JudgeRationale(_Strict):
    """The paper judge's written assessment of a recorded run (hidden material: it discusses the GT)."""

    rationale: dict[str, str] = Field(
        default_factory=dict, description="Rationale per score component, e.g. `answer_correctness`."
    )
    one_sentence_rationale: str = Field(default="", description="The judge's one-sentence summary.")
    critical_errors: list[str] = Field(default_factory=list, description="Errors the judge called critical.")
    missing_answer_elements: list[str] = Field(
        default_factory=list, description="Answer elements the judge found missing."
    )


class RecordedScores(_Strict):
    """Scores the paper's judge gave a recorded run, kept so that importing loses nothing.

    NEVER trusted for scoring: every score is recomputed from the trace and the hidden GT. The judge
    record discusses the ground truth, so this block is private material and must be stripped before a
    trace is published.
    """

    overall: float = Field(description="The paper's Core for the run, 0-100.")
    answer: float = Field(description="Answer score, 0-100.")
    rubric: float = Field(description="Process-rubric score, 0-100.")
    unit_accuracy: float = Field(description="Share of answer units judged correct, 0-100.")
    answer_units_correct: int = Field(ge=0, description="Answer units judged correct.")
    answer_units_total: int = Field(ge=0, description="Answer units of the task.")
    rubric_points_earned: float = Field(description="Rubric points earned (of rubric_points_total).")
    rubric_points_total: float = Field(description="Rubric points available, normally 20.")
    verdict: str = Field(description="The judge's verdict: correct, mostly_correct, partial or incorrect.")
    judge_rationale: JudgeRationale = Field(
        default_factory=JudgeRationale, description="The judge's written assessment."
    )


class Trace(_Strict):
    """One agent run on one task, as written by a harness or imported from the paper's recorded runs."""

    schema_version: Literal["1.0"] = Field(default=SCHEMA_VERSION, description="Version of this format.")
    task_id: str = Field(pattern=TASK_ID_FIELD, description="The task run, e.g. `CSX-321_Q2`.")
    event_id: str = Field(description="The task's event package, e.g. `CSX-321` (the task id's prefix).")
    system: SystemIdentity = Field(description="Which system produced the run.")
    dataset_version: str | None = Field(default=None, description="Version of the dataset the run used.")
    package_sha256: str | None = Field(
        default=None,
        description="Content hash of the event package the run used: the sha256 of its sorted "
        "`<file sha256>  <package-relative path>` listing (evaluator/harness/package_hash.py), the same "
        "for a built folder and an extracted Hub archive.",
    )
    steps: list[Step] = Field(default_factory=list, description="Every step, in order.")
    final_answer: FinalAnswer = Field(description="The submitted answer.")
    termination_reason: str | None = Field(
        default=None,
        description="Why the run stopped, e.g. `model_final`, `round_limit`, `research_time_limit`; "
        "None when the harness did not say.",
    )
    run_status: RunStatus = Field(
        description="`ok`: the run completed; `solver_failure`: the agent failed (scores zero); "
        "`infrastructure_failure`: our side failed (the run should be repeated)."
    )
    totals: Totals = Field(description="Whole-run counts, tokens and cost.")
    recorded: RecordedScores | None = Field(
        default=None,
        description="The paper judge's scores of a recorded run. Kept for completeness; NEVER trusted for "
        "scoring, and private (strip before publishing).",
    )
    extra: dict[str, Any] = Field(
        default_factory=dict,
        description="Source fields of the run this schema does not model, kept verbatim: unknown top-level "
        "keys as they are, unknown keys of a known source section under that section's name.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Trace:
        expected_event = event_id_of(self.task_id)
        if self.event_id != expected_event:
            raise ValueError(f"{self.task_id}: event_id {self.event_id!r} should be {expected_event!r}")
        indices = [step.index for step in self.steps]
        if any(later <= earlier for earlier, later in pairwise(indices)):
            raise ValueError(f"{self.task_id}: step indices are not increasing: {indices}")
        return self


class SubmissionMetadata(_Strict):
    """Who submitted, with what, against which dataset."""

    system_name: str = Field(min_length=1, description="Display name of the system.")
    system_id: str = Field(min_length=1, description="Stable id of the system; every trace carries it.")
    model: str = Field(description="The underlying model (or `unknown`).")
    harness: str = Field(description="The agent harness (or `unknown`).")
    organisation: str = Field(description="Who built or submitted the system (or `unknown`).")
    contact: str = Field(description="How to reach the submitter (or `unknown`).")
    dataset_version: str = Field(
        min_length=1,
        description="Version of the dataset the runs used: the `Release.version` (`ev-<16 hex>`) of the "
        "release they ran on; scoring refuses a submission of another version.",
    )
    submitted_at: datetime | None = Field(default=None, description="When the submission was made.")
    notes: str = Field(default="", description="Anything a reader of the results should know.")


class Submission(_Strict):
    """One system's submission: its metadata and at most one trace per task."""

    metadata: SubmissionMetadata = Field(description="Who submitted what.")
    traces: list[Trace] = Field(default_factory=list, description="One trace per task run.")

    @model_validator(mode="after")
    def _one_system_one_trace_per_task(self) -> Submission:
        counts = Counter(trace.task_id for trace in self.traces)
        duplicated = sorted(task_id for task_id, count in counts.items() if count > 1)
        if duplicated:
            named = ", ".join(f"{task_id} ({counts[task_id]} traces)" for task_id in duplicated)
            raise ValueError(f"duplicated task ids: {named}")
        foreign = sorted(
            {trace.task_id for trace in self.traces if trace.system.system_id != self.metadata.system_id}
        )
        if foreign:
            raise ValueError(
                f"traces of another system than {self.metadata.system_id!r}: {', '.join(foreign)}"
            )
        return self

    @model_validator(mode="after")
    def _one_dataset_version(self) -> Submission:
        """A trace that names a dataset version names the metadata's: one submission, one release."""
        expected = self.metadata.dataset_version
        other = sorted(
            f"{trace.task_id} ({trace.dataset_version!r})"
            for trace in self.traces
            if trace.dataset_version is not None and trace.dataset_version != expected
        )
        if other:
            more = f" and {len(other) - MAX_NAMED} more" if len(other) > MAX_NAMED else ""
            shown = ", ".join(other[:MAX_NAMED]) + more
            raise ValueError(f"traces of another dataset version than the metadata's {expected!r}: {shown}")
        return self


def event_id_of(task_id: str) -> str:
    """The event package of a task: `CSX-321_Q2` -> `CSX-321`."""
    return task_id.rsplit("_", 1)[0]


def canonical_json(value: Any) -> str:
    """The canonical JSON text of an answer object: compact, keys in their order, non-ASCII as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
