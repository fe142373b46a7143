"""Scoring submissions against the hidden ground truth: one TaskScore per task of the release.

Every task of the release gets a score: a task without a trace is `not_run` and scores zero. Traces
for tasks the release does not have are reported as problems, never scored. Nothing the submitter
says about scores is read: only its answers, steps and token counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from evaluator.scoring.answer import score_units, task_units
from evaluator.scoring.cost import RunCost, price
from evaluator.scoring.diagnostics import diagnose
from evaluator.scoring.judge import AnswerJudge, JudgeResult, NoJudge
from evaluator.scoring.scores import TaskScore, TaskStatus, Trajectory
from evaluator.scoring.submission import submitted_answer
from evaluator.scoring.units import Unit
from evaluator.traces.schema import Submission, SubmissionMetadata, Trace
from loaders.models import HiddenTask, Task
from loaders.package import EventPackage
from loaders.release import Release


class ScoredSubmission(BaseModel):
    """A submission's per-task scores and what could not be scored, with the reason."""

    system_id: str
    system_name: str
    scores: list[TaskScore]
    problems: list[str] = Field(default_factory=list)


UNSCORABLE = (ArithmeticError, ValueError, TypeError, RecursionError)
"""What a submitted answer can drive the scoring code into (a number beyond floats, nesting too deep)."""


class Scorer:
    """Scores submissions against one release: each task's units and each package's file list are
    worked out once, however many submissions are scored."""

    def __init__(self, release: Release, hidden: dict[str, HiddenTask]) -> None:
        self.release = release
        self.hidden = hidden
        self._units: dict[str, list[Unit]] = {}
        self._packages: dict[str, tuple[EventPackage, frozenset[str]]] = {}

    def warm_up(self, stopping: Callable[[], bool] = lambda: False) -> None:
        """Work out every task's units and every package's file list now, as the first submission
        would (a server does this at start); return early once `stopping()` is true."""
        for task in self.release.tasks:
            if stopping():
                return
            self._task_units(task, self.hidden[task.task_id])
            self._package(task.event_id)

    def score(self, submission: Submission, judge: AnswerJudge | None = None) -> ScoredSubmission:
        """Every task of the release for this submission: answer units, diagnostics and cost, then H and
        P from `judge` (none: the deterministic figures only). Each score names the system and this
        release's version; whether the submission ran on that version is the caller's check
        (`version_mismatch`)."""
        judge = judge or NoJudge()
        traces = {trace.task_id: trace for trace in submission.traces}
        known = {task.task_id for task in self.release.tasks}
        problems = [
            f"{task_id}: not a task of this release; ignored" for task_id in sorted(set(traces) - known)
        ]
        metadata = submission.metadata
        scores = []
        for task in self.release.tasks:
            trace = traces.get(task.task_id)
            if trace is None:
                scores.append(not_run(metadata.system_id, task, "no trace for this task"))
                continue
            try:
                score = self.score_trace(metadata.system_id, task, trace)
            except UNSCORABLE as error:  # one task's odd answer must not sink the whole scoring run
                # The error's type only: its message may quote a ground-truth value.
                reason = f"the trace cannot be scored ({type(error).__name__})"
                problems.append(f"{task.task_id}: {reason}")
                scores.append(zero_score(metadata.system_id, task, "invalid", reason))
                continue
            scores.append(with_judgement(score, judge.judge(task, self.hidden[task.task_id], trace)))
        stamped = {"system_name": metadata.system_name, "dataset_version": self.release.version}
        named = [score.model_copy(update=stamped) for score in scores]
        return ScoredSubmission(
            system_id=metadata.system_id, system_name=metadata.system_name, scores=named, problems=problems
        )

    def score_trace(self, system_id: str, task: Task, trace: Trace) -> TaskScore:
        """The deterministic part of one task's score: answer units, diagnostics, trajectory and cost."""
        hidden = self.hidden[task.task_id]
        answer = submitted_answer(trace.final_answer)
        units = score_units(self._task_units(task, hidden), answer, task.question)
        package, files = self._package(task.event_id)
        return TaskScore(
            system_id=system_id,
            task_id=task.task_id,
            event_id=task.event_id,
            status="scored",
            u=units.u,
            units=units,
            diagnostics=diagnose(trace, hidden.ground_truth.provenance.source_files, package, files),
            trajectory=_trajectory(trace),
            cost=_cost(trace),
        )

    def _task_units(self, task: Task, hidden: HiddenTask) -> list[Unit]:
        if task.task_id not in self._units:
            # The units read the ground truth as the release wrote it: only its own keys, no model defaults.
            ground_truth = hidden.ground_truth.model_dump(exclude_unset=True)
            self._units[task.task_id] = task_units(ground_truth, task.question)
        return self._units[task.task_id]

    def _package(self, event_id: str) -> tuple[EventPackage, frozenset[str]]:
        if event_id not in self._packages:
            package = self.release.package(event_id)
            self._packages[event_id] = (package, frozenset(package.list_files()))
        return self._packages[event_id]


def version_mismatch(metadata: SubmissionMetadata, release_version: str) -> str | None:
    """Why a submission is not a run on the release of `release_version`, naming both versions; None when
    it is. (`Submission` already holds every trace that names a version to the metadata's.)"""
    if metadata.dataset_version == release_version:
        return None
    return (
        f"{metadata.system_id!r} ran on dataset version {metadata.dataset_version!r}, "
        f"not on this release's {release_version!r}"
    )


def score_submission(
    submission: Submission, release: Release, hidden: dict[str, HiddenTask], judge: AnswerJudge | None = None
) -> ScoredSubmission:
    """Score one submission (see `Scorer.score`); use a `Scorer` to score many against one release."""
    return Scorer(release, hidden).score(submission, judge)


def with_judgement(score: TaskScore, result: JudgeResult) -> TaskScore:
    """The score with the judge's H and P (None unless the judge scored) and its status."""
    return score.model_copy(
        update={
            "judge_status": result.status,
            "judge_model": result.judge_model,
            "h": result.H,
            "p": result.P,
            "criterion_points": result.criterion_points,
        }
    )


def not_run(system_id: str, task: Task, reason: str) -> TaskScore:
    """The zero score of a task the system did not run (see `zero_score`)."""
    return zero_score(system_id, task, "not_run", reason)


def zero_score(system_id: str, task: Task, status: TaskStatus, reason: str) -> TaskScore:
    """The zero score of a task not run or not scorable: U, H and P all zero, so that a judged
    submission that skipped tasks still gets a Core, with those tasks at zero."""
    return TaskScore(
        system_id=system_id,
        task_id=task.task_id,
        event_id=task.event_id,
        status=status,
        reason=reason,
        u=0.0,
        h=0.0,
        p=0.0,
    )


def _trajectory(trace: Trace) -> Trajectory:
    totals = trace.totals
    return Trajectory(
        rounds=totals.rounds,
        tool_calls=totals.tool_calls,
        file_reads=totals.file_reads,
        unique_files=totals.unique_files,
        python_calls=totals.python_calls,
        latency_s=totals.latency_s,
        prompt_tokens=totals.prompt_tokens,
        completion_tokens=totals.completion_tokens,
        total_tokens=totals.total_tokens,
    )


def _cost(trace: Trace) -> RunCost:
    totals = trace.totals
    reported = totals.cost_usd if totals.cost_source == "self-reported" else None
    models: Sequence[str | None] = (trace.system.model, trace.system.system_id)
    return price(models, totals.prompt_tokens, totals.completion_tokens, reported)
