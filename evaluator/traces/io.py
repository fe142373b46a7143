"""Reading and writing traces and submissions; every write is atomic, every error names its file and line.

On disk a trace is one JSON file; a submission is a JSONL file (first line `{"metadata": {...}}`, then
one trace per line) or, for reading, a folder of `<task_id>.json` traces beside a `metadata.json`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from evaluator.traces.schema import Submission, SubmissionMetadata, Trace
from loaders.atomic import write_text_atomic

METADATA_FILE = "metadata.json"
SUBMISSION_FILE = "submission.jsonl"
"""A submission as one file: its metadata line, then one trace per line."""
TRACE_SCHEMA_FILE = "trace.schema.json"
SUBMISSION_SCHEMA_FILE = "submission.schema.json"
MAX_REPORTED_ERRORS = 5
Model = TypeVar("Model", bound=BaseModel)


class TraceFormatError(ValueError):
    """A trace or submission file is unreadable or malformed; the message names the file (and line)."""


class SubmissionHeader(BaseModel):
    """The first line of a submission JSONL file."""

    model_config = ConfigDict(extra="forbid")

    metadata: SubmissionMetadata


def describe(error: ValidationError) -> str:
    """A validation error on one line, `field.path: message; ...`: missing fields first, a few at most."""
    # A missing field usually explains the rest (e.g. a trace where the metadata line should be).
    problems = sorted(error.errors(include_url=False), key=lambda problem: problem["type"] != "missing")
    shown = problems[:MAX_REPORTED_ERRORS]
    parts = [f"{_location(problem['loc'])}: {_message(problem)}" for problem in shown]
    if len(problems) > MAX_REPORTED_ERRORS:
        parts.append(f"({len(problems) - MAX_REPORTED_ERRORS} more)")
    return "; ".join(parts)


def _location(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def _message(problem: ErrorDetails) -> str:
    # Our own validators' messages are complete sentences; pydantic prefixes them with "Value error, ".
    error = problem.get("ctx", {}).get("error")
    return str(error) if problem["type"] == "value_error" and error else problem["msg"]


def parse_json_as(model: type[Model], data: bytes | str, where: str) -> Model:
    """`data` validated as `model`; a TraceFormatError naming `where` (file, file:line) when it is not one."""
    try:
        return model.model_validate_json(data)
    except ValidationError as error:
        raise TraceFormatError(f"{where}: not a valid {model.__name__}: {describe(error)}") from error


def write_trace(path: Path, trace: Trace) -> None:
    """Write one trace as indented JSON, atomically."""
    write_text_atomic(path, [trace.model_dump_json(indent=2), "\n"])


def read_trace(path: Path) -> Trace:
    """Read one trace file; a TraceFormatError names the file and what is wrong."""
    return parse_json_as(Trace, read_bytes(Path(path)), str(path))


def write_submission(path: Path, submission: Submission) -> None:
    """Write a submission as JSONL (metadata line, then one trace per line), atomically."""
    header = SubmissionHeader(metadata=submission.metadata).model_dump_json()
    lines = (f"{trace.model_dump_json()}\n" for trace in submission.traces)
    write_text_atomic(path, _prepend(f"{header}\n", lines))


def _prepend(first: str, rest: Iterable[str]) -> Iterable[str]:
    yield first
    yield from rest


def read_submission(path: Path) -> Submission:
    """Read a submission JSONL file, or a folder of `<task_id>.json` traces with a `metadata.json`.

    Blank lines are ignored; a malformed line, a missing metadata line, a trace file not named after its
    task, or a duplicated task id is a TraceFormatError naming the file (and line).
    """
    path = Path(path)
    if path.is_dir():
        return _read_folder(path)
    return _read_jsonl(path)


def _read_jsonl(path: Path) -> Submission:
    lines = [(number, line) for number, line in enumerate(read_bytes(path).splitlines(), 1) if line.strip()]
    if not lines:
        raise TraceFormatError(f"{path}: empty file, expected a metadata line and one trace per line")
    first_number, first_line = lines[0]
    header = parse_json_as(SubmissionHeader, first_line, f"{path}:{first_number}")
    traces = [parse_json_as(Trace, line, f"{path}:{number}") for number, line in lines[1:]]
    return _submission(header.metadata, traces, path)


def _read_folder(folder: Path) -> Submission:
    metadata_path = folder / METADATA_FILE
    if not metadata_path.is_file():
        raise TraceFormatError(f"{folder}: a submission folder needs a {METADATA_FILE}")
    metadata = parse_json_as(SubmissionMetadata, read_bytes(metadata_path), str(metadata_path))
    paths = sorted(path for path in folder.glob("*.json") if path.name != METADATA_FILE)
    return _submission(metadata, [_read_named_trace(path) for path in paths], folder)


def _read_named_trace(path: Path) -> Trace:
    trace = read_trace(path)
    if path.stem != trace.task_id:
        raise TraceFormatError(f"{path}: holds the trace of {trace.task_id}; name it {trace.task_id}.json")
    return trace


def _submission(metadata: SubmissionMetadata, traces: list[Trace], where: Path) -> Submission:
    try:
        return Submission(metadata=metadata, traces=traces)
    except ValidationError as error:
        raise TraceFormatError(f"{where}: not a valid submission: {describe(error)}") from error


def read_bytes(path: Path) -> bytes:
    """The file's bytes; a TraceFormatError naming the file when it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as error:
        raise TraceFormatError(f"{path}: cannot read ({error.strerror or error})") from error


def export_json_schema(folder: Path) -> list[Path]:
    """Write `trace.schema.json` and `submission.schema.json` (JSON Schema of the models) into `folder`."""
    written = []
    for name, model in ((TRACE_SCHEMA_FILE, Trace), (SUBMISSION_SCHEMA_FILE, Submission)):
        path = Path(folder) / name
        write_text_atomic(path, [json.dumps(model.model_json_schema(), indent=2, ensure_ascii=False), "\n"])
        written.append(path)
    return written
