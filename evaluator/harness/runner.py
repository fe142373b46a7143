"""The runner: one agent over many tasks, concurrently, with a trace written atomically as each task ends.

Layout of a run folder:

    runs/<id>/run.json            what was run (system, agent option, release, tasks, budgets)
    runs/<id>/traces/<task>.json  one trace per task, written when the task ends
    runs/<id>/submission.jsonl    every trace of the run, with the submission metadata

`resume` finishes an interrupted run (even after kill -9): tasks whose trace ended ok or as a solver
failure are kept; infrastructure failures, unreadable and missing traces are run again.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evaluator.agents.registry import AgentSpec
from evaluator.harness.budgets import Budgets
from evaluator.harness.controller import Controller, RunTarget
from evaluator.harness.package_hash import package_sha256
from evaluator.tools.registry import ToolRegistry, default_registry
from evaluator.traces.io import (
    SUBMISSION_FILE,
    TraceFormatError,
    parse_json_as,
    read_bytes,
    read_trace,
    write_submission,
    write_trace,
)
from evaluator.traces.schema import FinalAnswer, Submission, SubmissionMetadata, Totals, Trace
from loaders.atomic import refuse_foreign_folder, write_text_atomic
from loaders.models import Task
from loaders.package import EventPackage
from loaders.release import Release

log = logging.getLogger("earthverse.harness.runner")

RUN_FILE = "run.json"
TRACES_DIR = "traces"
UNPRICED = "unpriced"
"""What the progress bar shows for cost until a run is priced: never $0 for an unknown cost."""
FINISHED = frozenset({"ok", "solver_failure"})
"""Run statuses `resume` keeps; an infrastructure failure is our fault and is run again."""


class RunManifest(BaseModel):
    """`run.json`: what a run folder holds; a resume must match it."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    system_id: str
    release: str
    dataset_version: str
    tasks: list[str]
    review: bool
    budgets: Budgets
    started_at: datetime


class RunOptions(BaseModel):
    """How to run: where, how many tasks at once, resume, review, budgets, submission metadata."""

    model_config = ConfigDict(extra="forbid")

    out: Path
    concurrency: int = Field(default=4, ge=1)
    resume: bool = False
    review: bool = False
    budgets: Budgets = Budgets()
    progress: bool = True
    organisation: str = "unknown"
    contact: str = "unknown"


class RunSummary(BaseModel):
    """What a run did: tasks run now and kept from before, outcomes, tokens and cost, files written."""

    out: Path
    submission: Path
    ran: int
    kept: int
    statuses: dict[str, int]
    total_tokens: int
    cost_usd: float | None


def select_tasks(release: Release, selection: str) -> list[Task]:
    """`all`, task ids (`CSX-001_Q1,CSX-002_Q1`) or filters (`hazard_family=flood,difficulty=L3`, all of
    which must hold; a value matches exactly, as a `_`-separated word or as a list member)."""
    items = [item.strip() for item in selection.split(",") if item.strip()]
    if not items:
        raise ValueError("--tasks is empty; give all, task ids or key=value filters")
    if items == ["all"]:
        return list(release.tasks)
    filters = [item for item in items if "=" in item]
    if filters and len(filters) != len(items):
        raise ValueError(f"--tasks {selection!r}: give either task ids or key=value filters, not both")
    if not filters:
        return [_task(release, task_id) for task_id in dict.fromkeys(items)]
    pairs = [tuple(part.strip() for part in item.split("=", 1)) for item in filters]
    unknown = [key for key, _ in pairs if key not in Task.model_fields]
    if unknown:
        known = ", ".join(sorted(Task.model_fields))
        raise ValueError(f"--tasks: unknown task field(s) {', '.join(unknown)}; task fields: {known}")
    chosen = [task for task in release.tasks if all(_matches(getattr(task, k), v) for k, v in pairs)]
    if not chosen:
        raise ValueError(f"--tasks {selection!r} selects no task")
    return chosen


def _task(release: Release, task_id: str) -> Task:
    """The task `--tasks` names; ValueError naming it, with the ids it may have meant."""
    try:
        return release.task(task_id)
    except KeyError:
        event_id = task_id.split("_", 1)[0]
        siblings = [task.task_id for task in release.tasks if task.event_id == event_id]
        hint = f"{event_id} has {', '.join(siblings)}" if siblings else "task ids look like CSX-001_Q1"
        raise ValueError(f"--tasks: {release.location} has no task {task_id!r}; {hint}") from None


def _matches(field: object, wanted: str) -> bool:
    wanted = wanted.lower()
    if isinstance(field, list):
        return any(_matches(item, wanted) for item in field)
    text = str(field).lower()
    return text == wanted or wanted in text.split("_")


class Runner:
    """Runs `spec` over tasks of `release` into `options.out` (see the module docstring)."""

    def __init__(
        self,
        release: Release,
        spec: AgentSpec,
        agent_option: str,
        options: RunOptions,
        registry_factory: Callable[[], ToolRegistry] = default_registry,
    ) -> None:
        self.release = release
        self.spec = spec
        self.agent_option = agent_option
        self.options = options
        self.controller = Controller(
            options.budgets, review=options.review, registry_factory=registry_factory
        )
        self.traces_dir = options.out / TRACES_DIR
        self._hashes: dict[str, asyncio.Task[str]] = {}

    def run(self, tasks: Sequence[Task]) -> RunSummary:
        """Run every task not already finished, then write the submission; see `arun`."""
        return asyncio.run(self.arun(tasks))

    async def arun(self, tasks: Sequence[Task]) -> RunSummary:
        """Run the tasks (up to `concurrency` at once) and write `submission.jsonl` of all of them."""
        self._prepare(tasks)
        todo = [task for task in tasks if not self._finished(task)]
        statuses: Counter[str] = Counter()
        with _progress(self.options.progress, len(tasks) - len(todo), len(tasks)) as bar:
            semaphore = asyncio.Semaphore(self.options.concurrency)
            await asyncio.gather(*(self._guarded(task, semaphore, bar, statuses) for task in todo))
        traces = [read_trace(self._trace_path(task)) for task in tasks]
        path = self.options.out / SUBMISSION_FILE
        write_submission(path, Submission(metadata=self._metadata(), traces=traces))
        outcome = Counter(trace.run_status for trace in traces)
        costs = [trace.totals.cost_usd for trace in traces if trace.totals.cost_usd is not None]
        return RunSummary(
            out=self.options.out,
            submission=path,
            ran=len(todo),
            kept=len(tasks) - len(todo),
            statuses=dict(outcome),
            total_tokens=sum(trace.totals.total_tokens or 0 for trace in traces),
            cost_usd=round(sum(costs), 6) if costs else None,
        )

    def _prepare(self, tasks: Sequence[Task]) -> None:
        out = self.options.out
        manifest_path = out / RUN_FILE
        refuse_foreign_folder(out, RUN_FILE, "earthverse run")
        if manifest_path.is_file():
            earlier = parse_json_as(RunManifest, read_bytes(manifest_path), str(manifest_path))
            self._check_resumable(earlier, tasks)
        manifest = RunManifest(
            agent=self.agent_option,
            system_id=self.spec.system.system_id,
            release=self.release.location,
            dataset_version=self.release.version,
            tasks=[task.task_id for task in tasks],
            review=self.options.review,
            budgets=self.options.budgets,
            started_at=datetime.now(UTC),
        )
        write_text_atomic(manifest_path, [manifest.model_dump_json(indent=2), "\n"])

    def _check_resumable(self, earlier: RunManifest, tasks: Sequence[Task]) -> None:
        out = self.options.out
        if not self.options.resume:
            raise ValueError(
                f"{out} already holds a run; pass --resume to finish it, or choose another --out"
            )
        mismatched = [
            f"{name} was {old!r}, now {new!r}"
            for name, old, new in (
                ("system_id", earlier.system_id, self.spec.system.system_id),
                ("dataset_version", earlier.dataset_version, self.release.version),
                ("review", earlier.review, self.options.review),
                ("budgets", earlier.budgets, self.options.budgets),
            )
            if old != new
        ]
        selected = [task.task_id for task in tasks]
        if set(earlier.tasks) != set(selected):
            mismatched.append(f"--tasks selected {_span(earlier.tasks)}, now {_span(selected)}")
        if mismatched:
            raise ValueError(f"{out}: cannot resume a different run: {'; '.join(mismatched)}")

    def _trace_path(self, task: Task) -> Path:
        return self.traces_dir / f"{task.task_id}.json"

    def _finished(self, task: Task) -> bool:
        path = self._trace_path(task)
        if not path.is_file():
            return False
        try:
            return read_trace(path).run_status in FINISHED
        except TraceFormatError:
            log.warning("%s: unreadable trace, running the task again", path)
            return False

    async def _guarded(
        self, task: Task, semaphore: asyncio.Semaphore, bar: Progress, statuses: Counter[str]
    ) -> None:
        async with semaphore:
            trace = await self._one(task)
        await asyncio.to_thread(write_trace, self._trace_path(task), trace)
        statuses[trace.run_status] += 1
        _advance(bar, statuses, trace)

    async def _one(self, task: Task) -> Trace:
        try:
            package = await asyncio.to_thread(self.release.package, task.event_id)
            digest = await self._package_hash(task.event_id, package)
            target = RunTarget(task, package, self.spec.system, self.release.version, digest)
            return await self.controller.run(self.spec.factory(task), target)
        except Exception as error:  # one task's broken package or our own bug must not sink the run
            log.exception("%s: infrastructure failure", task.task_id)
            return self._infrastructure_failure(task, f"{type(error).__name__}: {error}")

    async def _package_hash(self, event_id: str, package: EventPackage) -> str:
        if event_id not in self._hashes:
            self._hashes[event_id] = asyncio.ensure_future(asyncio.to_thread(package_sha256, package))
        return await self._hashes[event_id]

    def _infrastructure_failure(self, task: Task, reason: str) -> Trace:
        return Trace(
            task_id=task.task_id,
            event_id=task.event_id,
            system=self.spec.system,
            dataset_version=self.release.version,
            final_answer=FinalAnswer(raw_text="", status="missing"),
            termination_reason=f"infrastructure_failure: {reason}",
            run_status="infrastructure_failure",
            totals=Totals.empty(),
        )

    def _metadata(self) -> SubmissionMetadata:
        system = self.spec.system
        return SubmissionMetadata(
            system_name=system.system_name,
            system_id=system.system_id,
            model=system.model,
            harness=system.harness,
            organisation=self.options.organisation,
            contact=self.options.contact,
            dataset_version=self.release.version,
            submitted_at=datetime.now(UTC),
            notes=f"earthverse run --agent {self.agent_option}"
            + (" --review" if self.options.review else ""),
        )


def _span(task_ids: Sequence[str]) -> str:
    """A task selection in a message: its size, first and last ids."""
    return f"{len(task_ids)} task(s), {task_ids[0]} … {task_ids[-1]}" if task_ids else "no task"


def _progress(enabled: bool, done: int, total: int) -> Progress:
    progress = Progress(
        TextColumn("[bold]tasks"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "failures {task.fields[failures]}  tokens {task.fields[tokens]:,}  cost {task.fields[cost]}"
        ),
        TimeElapsedColumn(),
        disable=not enabled,
    )
    progress.add_task("run", total=total, completed=done, failures=0, tokens=0, usd=None, cost=UNPRICED)
    return progress


def _advance(bar: Progress, statuses: Counter[str], trace: Trace) -> None:
    [task] = bar.tasks
    usd = task.fields["usd"]
    if trace.totals.cost_usd is not None:
        usd = (usd or 0.0) + trace.totals.cost_usd
    bar.update(
        task.id,
        advance=1,
        failures=statuses["solver_failure"] + statuses["infrastructure_failure"],
        tokens=task.fields["tokens"] + (trace.totals.total_tokens or 0),
        usd=usd,
        cost=UNPRICED if usd is None else f"${usd:.4f}",
    )
