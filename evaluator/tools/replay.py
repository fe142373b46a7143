"""Re-execute the recorded calls of the five deterministic tools and compare their outputs exactly.

Only calls whose files are byte-identical to what the recorded harness saw are compared (sha256[:16]
of the package file equal to its manifest entry; for listings and searches every file in scope). The
recorded outputs were re-capped for the companion site (`SITE_CAP`), so ours are re-capped the same
way before the comparison. `replayed_all` / `identical_all` count every call regardless of file identity.

Calls the original harness answered through its own bugs are not imitated; they are counted under
`harness_artefacts` with one example each: reads outside the package (the task folder with its
question, the harness's scratch space), `offset_chars` ignored by reads, `max_depth` ignored by
summaries, empty observations recorded for successful calls, and error texts naming the harness's
absolute filesystem path.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, Field

from evaluator.tools.base import TRUNCATION_MARKER, ToolResult, repository_path
from evaluator.tools.list_files import is_whole_package
from evaluator.tools.read import TEXT_SUFFIXES
from evaluator.tools.registry import ToolRegistry, default_registry
from evaluator.tools.search import DEFAULT_GLOB, searched_files
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import Step
from loaders.package import EventPackage, PackagePathError
from loaders.release import Release

SITE_CAP = 1800
"""Recorded observations longer than this were cut to SITE_KEEP characters plus the marker."""
SITE_KEEP = 1720

REPLAYED_TOOLS = (
    "list_package_files",
    "read_text_file",
    "search_package_files",
    "summarize_table_or_json",
    "inspect_image",
)


class ToolFigures(BaseModel):
    compared: int = Field(default=0, description="Calls whose files are byte-identical to the manifest.")
    identical: int = Field(default=0, description="Compared calls whose output is exactly the recorded one.")
    replayed_all: int = Field(default=0, description="Every call that is not a harness artefact.")
    identical_all: int = Field(default=0, description="Of those, calls with exactly the recorded output.")
    skipped: dict[str, int] = Field(default_factory=dict, description="Calls not compared, by reason.")


class Difference(BaseModel):
    """One class of difference: how often, and the first example."""

    count: int
    run: str
    step: int
    arguments: dict[str, Any]
    recorded: str
    replayed: str


class ReplayReport(BaseModel):
    by_tool: dict[str, ToolFigures]
    differences: dict[str, Difference] = Field(description="Difference class -> count and one example.")
    harness_artefacts: dict[str, Difference] = Field(
        description="Recorded outputs produced by the original harness's bugs; documented, not imitated."
    )
    runs: int
    seconds: float = 0.0


def site_capped(text: str) -> str:
    """`text` as the companion site stored it: over SITE_CAP characters, cut to SITE_KEEP plus the marker."""
    return text if len(text) <= SITE_CAP else text[:SITE_KEEP] + TRUNCATION_MARKER


class _Identity:
    """Which package files are byte-identical to their manifest entry, per event (cached)."""

    def __init__(self, release: Release) -> None:
        self.release = release
        self._cache: dict[str, dict[str, bool]] = {}

    def of(self, event_id: str) -> dict[str, bool]:
        if event_id not in self._cache:
            package = self.release.package(event_id)
            self._cache[event_id] = {
                entry.relative_path: _digest(package, entry.relative_path) == entry.sha256_16
                for entry in self.release.manifest(event_id)
            }
        return self._cache[event_id]


def _digest(package: EventPackage, relative: str) -> str | None:
    try:
        return hashlib.sha256(package.read_bytes(relative)).hexdigest()[:16]
    except (OSError, PackagePathError):
        return None


def replay_tools(
    release: Release, trajectories_dir: Path, registry: ToolRegistry | None = None, jobs: int = 1
) -> ReplayReport:
    """Replay every recorded call of the five deterministic tools under `trajectories_dir/<model>/*.json`
    against `release` and count identical outputs per tool, with every difference class and an example.
    `jobs` worker processes share the runs; the report is the same for any number of them."""
    paths = sorted(Path(trajectories_dir).glob("*/*.json"))
    registry = registry or default_registry()
    if jobs <= 1 or len(paths) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return _replay_chunk(release, registry, paths)
    chunks = [paths[start : start + CHUNK_RUNS] for start in range(0, len(paths), CHUNK_RUNS)]
    # fork hands the workers the release and registry as they are: neither needs to be picklable
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(jobs, context, _start_worker, (release, registry)) as pool:
        return merged_reports(list(pool.map(_replay_in_worker, chunks)))


CHUNK_RUNS = 64
"""Runs per unit of work for the worker processes: small enough to share the load evenly."""

_WORKER: dict[str, Any] = {}


def _start_worker(release: Release, registry: ToolRegistry) -> None:
    _WORKER.update(release=release, registry=registry)


def _replay_in_worker(paths: list[Path]) -> ReplayReport:
    return _replay_chunk(_WORKER["release"], _WORKER["registry"], paths)


def _replay_chunk(release: Release, registry: ToolRegistry, paths: list[Path]) -> ReplayReport:
    replayer = _Replayer(release, registry)
    for path in paths:
        replayer.replay_run(path)
    return ReplayReport(
        by_tool=replayer.figures,
        differences=replayer.differences,
        harness_artefacts=replayer.artefacts,
        runs=len(paths),
    )


def merged_reports(reports: list[ReplayReport]) -> ReplayReport:
    """One report of consecutive parts (in run order): counts added, each class's first example kept."""
    merged = ReplayReport(by_tool={name: ToolFigures() for name in REPLAYED_TOOLS}, differences={},
                          harness_artefacts={}, runs=0)  # fmt: skip
    for report in reports:
        merged.runs += report.runs
        for name, figures in report.by_tool.items():
            _add_figures(merged.by_tool[name], figures)
        _add_classes(merged.differences, report.differences)
        _add_classes(merged.harness_artefacts, report.harness_artefacts)
    return merged


def _add_figures(total: ToolFigures, part: ToolFigures) -> None:
    for field in ("compared", "identical", "replayed_all", "identical_all"):
        setattr(total, field, getattr(total, field) + getattr(part, field))
    for reason, count in part.skipped.items():
        total.skipped[reason] = total.skipped.get(reason, 0) + count


def _add_classes(total: dict[str, Difference], part: dict[str, Difference]) -> None:
    for name, difference in part.items():
        if name in total:
            total[name].count += difference.count
        else:
            total[name] = difference.model_copy()


class _Replayer:
    """Replays steps and accumulates the figures, difference classes and artefacts of a report."""

    def __init__(self, release: Release, registry: ToolRegistry) -> None:
        self.release = release
        self.registry = registry
        self.identity = _Identity(release)
        self.figures = {name: ToolFigures() for name in REPLAYED_TOOLS}
        self.differences: dict[str, Difference] = {}
        self.artefacts: dict[str, Difference] = {}

    def replay_run(self, path: Path) -> None:
        trace = read_recorded_trace(path)
        package = self.release.package(trace.event_id)
        run = f"{path.parent.name}/{path.stem}"
        for step in trace.steps:
            if step.action in self.figures:
                self.replay_step(run, step, package, self.identity.of(trace.event_id))

    def replay_step(self, run: str, step: Step, package: EventPackage, identical: dict[str, bool]) -> None:
        figures = self.figures[step.action]
        artefact = harness_artefact(step)
        if artefact is not None:
            _count(figures.skipped, artefact)
            _note(self.artefacts, f"{step.action}: {artefact}", run, step, "")
            return
        tool = self.registry.get(step.action)
        if tool is None:
            raise ValueError(f"the registry has no {step.action!r} tool to replay")
        result = tool.run(package, step.arguments)
        replayed = site_capped(result.text)
        same = replayed == step.observation.text and result.ok == step.ok
        figures.replayed_all += 1
        figures.identical_all += same
        skip = _not_comparable(step, package, identical)
        if skip is not None:
            _count(figures.skipped, skip)
            return
        figures.compared += 1
        figures.identical += same
        if not same:
            _note(self.differences, f"{step.action}: {difference_class(step, result)}", run, step, replayed)


def _count(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def _note(classes: dict[str, Difference], name: str, run: str, step: Step, replayed: str) -> None:
    if name in classes:
        classes[name].count += 1
        return
    classes[name] = Difference(
        count=1,
        run=run,
        step=step.index,
        arguments=step.arguments,
        recorded=step.observation.text[:600],
        replayed=replayed[:600],
    )


def harness_artefact(step: Step) -> str | None:
    """The name of the original-harness bug a recorded call shows, or None for a regular call."""
    path = str(step.arguments.get("path", step.arguments.get("subdir", "")))
    if step.ok and (path.startswith("/") or path.startswith("EarthVerse/")):
        return "read a file outside the package (task folder or the harness's scratch space)"
    if step.action == "read_text_file" and any(step.arguments.get(key) for key in ("offset_chars", "offset")):
        return "offset ignored: the recorded harness always read from the start of the file"
    if step.action == "summarize_table_or_json" and "max_depth" in step.arguments:
        return "max_depth ignored: the recorded harness always described four levels"
    if step.ok and not step.observation.text:
        return "empty observation recorded for a successful call"
    if not step.ok and "cannot identify image file '/" in step.observation.text:
        return "error message names the harness's absolute filesystem path"
    return None


def _not_comparable(step: Step, package: EventPackage, identical: dict[str, bool]) -> str | None:
    """Why the package files of a call may differ from what the harness saw, or None if they do not."""
    for relative in _files_in_scope(step, package):
        reason = _file_not_comparable(step, package, relative, identical)
        if reason is not None:
            return reason
    if _names_unshipped_file(step, package):
        return "the harness had a file the release does not ship (README.md or unlisted evidence)"
    if step.action in ("list_package_files", "search_package_files") and not _scope_complete(
        step, package, identical
    ):
        return "a manifest file in scope is missing from the release"
    return None


def _file_not_comparable(
    step: Step, package: EventPackage, relative: str, identical: dict[str, bool]
) -> str | None:
    if relative.startswith("metadata/"):
        return "reads package metadata (rebuilt by the release builder)"
    if relative in identical:
        return (
            None if identical[relative] else "touches a file that differs from its manifest entry or is gone"
        )
    if _is_file(package, relative):
        return "touches a file missing from the manifest"
    # Neither shipped nor listed: the harness had it only if it answered with its content.
    return "reads a file the harness had that the release does not ship" if step.ok else None


def _names_unshipped_file(step: Step, package: EventPackage) -> bool:
    """Whether a recorded listing or search names a package file that the release does not have."""
    if step.action not in ("list_package_files", "search_package_files"):
        return False
    prefix = repository_path(package, "")
    named = _RECORDED_PATH.findall(step.observation.text)
    return any(path.startswith(prefix) and not _is_file(package, path) for path in named)


_RECORDED_PATH = re.compile(r'"path": "([^"]+)"')


def _is_file(package: EventPackage, path: str) -> bool:
    try:
        return package.resolve(path).is_file()
    except PackagePathError:
        return False


def _files_in_scope(step: Step, package: EventPackage) -> list[str]:
    arguments = step.arguments
    try:
        if step.action == "list_package_files":
            return _listed(package, str(arguments.get("subdir", ".")))
        if step.action == "search_package_files":
            return searched_files(package, str(arguments.get("glob", DEFAULT_GLOB)))
    except (PackagePathError, OSError, ValueError, NotImplementedError):
        return []
    path = str(arguments.get("path", ""))
    try:
        return [package.lexical(path)]
    except PackagePathError:
        return [path]


def _listed(package: EventPackage, subdir: str) -> list[str]:
    if is_whole_package(package, subdir):
        return package.list_files("")
    return package.list_files(subdir) if package.resolve(subdir).is_dir() else []


def _scope_complete(step: Step, package: EventPackage, identical: dict[str, bool]) -> bool:
    """Whether every manifest file the call's scope covers is still shipped by the release."""
    scope = _scope_prefix(step)
    # A search reads text files only, so a missing archive cannot change its output.
    searched = step.action != "search_package_files"
    return not any(
        not ok and not package.resolve(relative).is_file()
        for relative, ok in identical.items()
        if (scope is None or relative.startswith(scope))
        and (searched or PurePosixPath(relative).suffix.lower() in TEXT_SUFFIXES)
    )


def _scope_prefix(step: Step) -> str | None:
    if step.action == "list_package_files":
        subdir = str(step.arguments.get("subdir", ".")).strip().strip("/")
        return None if subdir in ("", ".") else subdir.split("/packages/")[-1].split("/", 1)[-1] + "/"
    pattern = str(step.arguments.get("glob", DEFAULT_GLOB))
    head = pattern.split("*", 1)[0]
    return head if head.startswith("data/") else None


def difference_class(step: Step, result: ToolResult) -> str:
    """A short name for how a replayed output differs from the recorded one."""
    if result.ok != step.ok:
        return f"ok recorded {step.ok}, replayed {result.ok}"
    if not step.ok:
        return "different error text"
    recorded, replayed = _json_or_none(step.observation.text), _json_or_none(result.text)
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        keys = [key for key in recorded if recorded.get(key) != replayed.get(key)]
        return f"field {keys[0]!r} differs" if keys else "same fields, different layout"
    return "text differs"


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def report_json(report: ReplayReport) -> str:
    return json.dumps(report.model_dump(), indent=2, ensure_ascii=False)


def fidelity(report: ReplayReport) -> dict[str, float]:
    """Identical share per tool (0..1), over the compared calls."""
    return {
        name: figures.identical / figures.compared if figures.compared else 0.0
        for name, figures in report.by_tool.items()
    }
