"""`earthverse import-trajectories --source <archive or folder> --out <dir>`: the paper's recorded runs
as one submission per system.

Writes `<out>/<system_id>/submission.jsonl`, `<out>/index.json` (systems and run counts) and the JSON
Schemas into `<out>/schema/`. Their `dataset_version` is the `Release.version` of a build of the same
source: the release the runs are scored against. Everything is assembled in a hidden staging folder
beside `--out` and renamed into place when complete, so `--out` is always either the previous import or
the new one.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

from pydantic import BaseModel, Field

from dataset.build import built_version
from dataset.source import SourceRelease, open_source
from evaluator.cli.base import Command, CommandError
from evaluator.traces.io import SUBMISSION_FILE, export_json_schema, write_submission
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import SCHEMA_VERSION, UNKNOWN, Submission, SubmissionMetadata
from loaders.atomic import refuse_foreign_folder, staged_folder, write_text_atomic
from loaders.paper_results import PaperResultsError, PaperSystemResult, from_source_models

log = logging.getLogger("earthverse.import_trajectories")

INDEX_FILE = "index.json"
SCHEMA_DIR = "schema"
NOTES = (
    "Imported from the EarthVerse source release's recorded trajectories (the paper's runs). The paper "
    "judge's scores sit in each trace's `recorded` block; they are private and never used for scoring."
)


class IndexedSystem(BaseModel):
    system_id: str
    system_name: str
    rank: int | None = Field(description="The system's rank on the paper's leaderboard.")
    runs: int = Field(description="Recorded runs (traces) of the system.")
    submission: str = Field(description="Path of the submission, relative to the index.")


class ImportIndex(BaseModel):
    """`<out>/index.json`: what an import wrote."""

    trace_schema_version: str = SCHEMA_VERSION
    dataset_version: str = Field(description="The `Release.version` of a build of the imported source.")
    systems: list[IndexedSystem]
    runs: int = Field(description="Traces over all systems.")
    schema_files: list[str] = Field(description="JSON Schema files, relative to the index.")


class ImportResult(BaseModel):
    out: Path
    index: ImportIndex
    seconds: float


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source", type=Path, required=True, help="the source release: .tar.xz archive or folder"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder to write the submissions into")
    parser.add_argument(
        "--cache-dir", type=Path, default=None, help="where archives are unpacked (default .cache/)"
    )


def run(arguments: argparse.Namespace) -> int:
    result = import_trajectories(arguments.source, arguments.out, cache_dir=arguments.cache_dir)
    index = result.index
    print(
        f"{result.out}: {len(index.systems)} submissions, {index.runs} traces imported in "
        f"{result.seconds:.1f} s (dataset version {index.dataset_version}); index {result.out / INDEX_FILE}"
    )
    return 0


def import_trajectories(source: Path, out: Path, cache_dir: Path | None = None) -> ImportResult:
    """Convert every recorded run of the source release and write one submission per system at `out`,
    each trace and submission stamped with the release version a build of the same source has.

    `out` must be missing, empty or an earlier import; it is replaced only once the new import is complete.
    """
    started = time.monotonic()
    release = open_source(Path(source), cache_dir)
    out = Path(out).resolve()
    refuse_foreign_folder(out, INDEX_FILE, "import")
    version = built_version(release)
    systems = _paper_systems(release)
    with staged_folder(out) as staging:
        index = _write_import(release, systems, version, staging)
    return ImportResult(out=out, index=index, seconds=time.monotonic() - started)


def _paper_systems(release: SourceRelease) -> dict[str, PaperSystemResult]:
    path = release.root / "paper_results" / "models.json"
    if not path.is_file():
        raise CommandError(f"{path}: missing; the system names come from it")
    try:
        listed = from_source_models(path).systems
    except PaperResultsError as error:
        raise CommandError(str(error)) from error
    return {system.id: system for system in listed}


def _write_import(
    release: SourceRelease, systems: dict[str, PaperSystemResult], version: str, staging: Path
) -> ImportIndex:
    folders = _system_folders(release)
    indexed = [_write_system(folder, systems, version, staging) for folder in folders]
    schema_files = export_json_schema(staging / SCHEMA_DIR)
    index = ImportIndex(
        dataset_version=version,
        systems=indexed,
        runs=sum(system.runs for system in indexed),
        schema_files=[path.relative_to(staging).as_posix() for path in schema_files],
    )
    write_text_atomic(staging / INDEX_FILE, [index.model_dump_json(indent=2), "\n"])
    return index


def _system_folders(release: SourceRelease) -> list[Path]:
    trajectories = release.trajectories_dir
    if not trajectories.is_dir():
        raise CommandError(f"{trajectories}: missing; the recorded runs live there")
    folders = sorted(path for path in trajectories.iterdir() if path.is_dir())
    if not folders:
        raise CommandError(f"{trajectories}: no recorded runs (trajectories/<model_id>/<task_id>.json)")
    return folders


def _write_system(
    folder: Path, systems: dict[str, PaperSystemResult], version: str, staging: Path
) -> IndexedSystem:
    system = systems.get(folder.name)
    if system is None:
        raise CommandError(f"{folder}: system {folder.name!r} is not listed in paper_results/models.json")
    traces = [read_recorded_trace(path, version) for path in sorted(folder.glob("*.json"))]
    submission = Submission(metadata=_metadata(system, version), traces=traces)
    relative = Path(system.id) / SUBMISSION_FILE
    write_submission(staging / relative, submission)
    log.debug("%s: %d traces", system.id, len(traces))
    return IndexedSystem(
        system_id=system.id,
        system_name=system.name,
        rank=system.rank,
        runs=len(traces),
        submission=relative.as_posix(),
    )


def _metadata(system: PaperSystemResult, version: str) -> SubmissionMetadata:
    return SubmissionMetadata(
        system_name=system.name,
        system_id=system.id,
        model=system.name,
        harness=UNKNOWN,
        organisation=UNKNOWN,
        contact=UNKNOWN,
        dataset_version=version,
        notes=NOTES,
    )


COMMAND = Command(
    help="Import the paper's recorded runs as one submission per system (traces + JSON Schemas).",
    add_arguments=add_arguments,
    run=run,
)
