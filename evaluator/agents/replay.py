"""`replay:<source>`: re-issues a recorded run's tool calls through our tools, then its final answer.

The source is a submission.jsonl, a folder of traces (with or without metadata.json), or a folder of the
paper's recorded runs (`trajectories/<model_id>/`). Rejected final answers of a trace are not replayed;
evidence items the recorded harness stored with a list of files (or none) are given as one string, as
the final_answer schema asks; a python step gets back the program its code block kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluator.agents.base import AgentView, FinalAnswerAction, SolverFailure, ToolCall
from evaluator.tools.final_answer import FINAL_ANSWER
from evaluator.traces.io import METADATA_FILE, TraceFormatError, read_submission, read_trace
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import Evidence, FinalAnswer, Step, Trace

PYTHON_TOOL = "python_exec"


def load_runs(source: Path) -> dict[str, Trace]:
    """The recorded traces at `source`, by task id; ValueError when there are none."""
    source = Path(source)
    if not source.exists():
        raise ValueError(f"replay source {source}: no such file or folder")
    if source.is_file() or (source / METADATA_FILE).is_file():
        traces = read_submission(source).traces
    else:
        traces = [_read_any(path) for path in sorted(source.glob("*.json"))]
    if not traces:
        raise ValueError(f"replay source {source}: holds no traces")
    return {trace.task_id: trace for trace in traces}


def _read_any(path: Path) -> Trace:
    try:
        return read_trace(path)
    except TraceFormatError:
        return read_recorded_trace(path)


def replay_agent(runs: dict[str, Trace], task_id: str) -> ReplayAgent | NoRecording:
    """The agent replaying `task_id`'s recorded run, or one that fails the task when there is none."""
    return ReplayAgent(runs[task_id]) if task_id in runs else NoRecording()


class NoRecording:
    """A task the replay source has no run of: a solver failure, as a system that did not run it."""

    def step(self, view: AgentView) -> ToolCall:
        raise SolverFailure("the replay source holds no run of this task")


class ReplayAgent:
    """Plays one recorded trace: its tool calls in order, then its final answer (again, if asked)."""

    def __init__(self, trace: Trace) -> None:
        self._calls = [step for step in trace.steps if step.action != FINAL_ANSWER]
        self._final = replayed_answer(trace.final_answer)
        self._next = 0

    def step(self, view: AgentView) -> ToolCall | FinalAnswerAction:
        """The next recorded tool call while research is open, else the recorded final answer."""
        if view.phase != "research" or self._next >= len(self._calls):
            return FinalAnswerAction(arguments=self._final)
        step = self._calls[self._next]
        self._next += 1
        return ToolCall(tool=step.action, arguments=replayed_arguments(step), reason=step.reason)


def replayed_arguments(step: Step) -> dict[str, Any]:
    """The arguments that re-issue `step`. The recorded harness kept a python step's program in its code
    block and only a preview in the arguments, so the program is put back (as recorded, even if cut)."""
    if step.action != PYTHON_TOOL or "code" in step.arguments or step.code is None:
        return step.arguments
    return {"code": step.code.text}


def replayed_answer(final: FinalAnswer) -> dict[str, Any]:
    """The final_answer arguments that reproduce `final`: the object when it was one, else its text."""
    answer = final.parsed if final.raw_text_origin == "canonical_json" else final.raw_text
    arguments: dict[str, Any] = {
        "answer": answer,
        "evidence": [_evidence(item) for item in final.evidence],
        "research_summary": final.research_summary,
        "limitations": final.limitations,
    }
    if final.confidence is not None:
        arguments["confidence"] = final.confidence
    return arguments


def _evidence(item: Evidence) -> dict[str, Any]:
    source = item.source_file
    joined = ", ".join(source) if isinstance(source, list) else (source or "")
    return {**item.extra, "claim": item.claim, "source_file": joined, "support_type": item.support_type}
