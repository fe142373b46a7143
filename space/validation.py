"""Reading an uploaded submission safely: bounded size, bounded archives, schema, and the release's
version and tasks.

An upload is a submission `.jsonl` (metadata line, then one trace per line) or a `.zip` holding either
one such `.jsonl` or a `metadata.json` beside `<task_id>.json` trace files. Every problem is an
`UploadRejected` whose message names what is wrong (file, line, entry) and never a server path.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluator.scoring.pipeline import version_mismatch
from evaluator.traces.io import METADATA_FILE, SubmissionHeader, TraceFormatError, describe, parse_json_as
from evaluator.traces.schema import Submission, SubmissionMetadata, Trace

MAX_COMPRESSION_RATIO = 200
"""A zip entry that unpacks to more than this many times its packed size is treated as a zip bomb."""
MAX_UNKNOWN_SHOWN = 5


class UploadRejected(ValueError):
    """The upload cannot be accepted; the message is shown to the submitter as is."""


class UploadLimits(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_bytes: int = Field(gt=0)
    max_files: int = Field(gt=0)
    max_unpacked_bytes: int = Field(gt=0)


class MetadataForm(BaseModel):
    """What the submission form may set; empty fields keep the file's own metadata."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system_name: str = ""
    model: str = ""
    harness: str = ""
    organisation: str = ""
    contact: str = ""
    notes: str = ""

    def filled(self) -> dict[str, str]:
        return {name: value.strip() for name, value in self.model_dump().items() if value.strip()}


class Upload(BaseModel):
    """A readable upload: its bytes' receipt and the submission they hold (recorded scores removed)."""

    receipt: str
    filename: str
    size_bytes: int
    submission: Submission


def read_upload_bytes(path: Path, filename: str, limits: UploadLimits) -> bytes:
    """The upload's bytes, refusing files over the size limit before reading them."""
    size = Path(path).stat().st_size
    if size > limits.max_bytes:
        raise UploadRejected(
            f"{filename}: {size / 1024**2:.1f} MB is over the upload limit of "
            f"{limits.max_bytes / 1024**2:.0f} MB"
        )
    if size == 0:
        raise UploadRejected(f"{filename}: the file is empty")
    return Path(path).read_bytes()


def receipt_of(data: bytes, form: MetadataForm) -> str:
    """sha256 of the upload's content, and of the form's metadata when the form sets any."""
    digest = hashlib.sha256(data)
    if form.filled():
        digest.update(b"\0form\0" + form.model_dump_json().encode("utf-8"))
    return digest.hexdigest()


def parse_upload(data: bytes, filename: str, limits: UploadLimits, form: MetadataForm) -> Submission:
    """The submission an upload holds, with the form's metadata applied and `recorded` blocks removed."""
    reader = READERS.get(PurePosixPath(filename).suffix.lower())
    if reader is None:
        raise UploadRejected(f"{filename}: upload a .jsonl submission or a .zip of traces")
    metadata, traces = reader(data, filename, limits)
    if form.filled():
        metadata = metadata.model_copy(update=form.filled())
    try:
        return Submission(
            metadata=metadata, traces=[trace.model_copy(update={"recorded": None}) for trace in traces]
        )
    except ValidationError as error:
        raise UploadRejected(f"{filename}: not a valid submission: {describe(error)}") from error


def check_version(submission: Submission, release_version: str, filename: str) -> None:
    """Refuse a submission run on another release version than this Space's (its tasks or packages may
    differ from the ones it would be scored against)."""
    problem = version_mismatch(submission.metadata, release_version)
    if problem:
        raise UploadRejected(f"{filename}: {problem}; run it on this release and submit that run")


def check_tasks(submission: Submission, known: set[str], filename: str) -> None:
    """Refuse an empty submission and traces of tasks the release does not have."""
    if not submission.traces:
        raise UploadRejected(f"{filename}: holds no traces")
    unknown = sorted({trace.task_id for trace in submission.traces} - known)
    if unknown:
        shown = ", ".join(unknown[:MAX_UNKNOWN_SHOWN]) + (" …" if len(unknown) > MAX_UNKNOWN_SHOWN else "")
        raise UploadRejected(f"{filename}: {len(unknown)} task id(s) not in this release: {shown}")


Parsed = tuple[SubmissionMetadata, list[Trace]]


def _read_jsonl(data: bytes, filename: str, limits: UploadLimits) -> Parsed:
    lines = [(number, line) for number, line in enumerate(data.splitlines(), 1) if line.strip()]
    if not lines:
        raise UploadRejected(f"{filename}: empty file, expected a metadata line and one trace per line")
    try:
        header = parse_json_as(SubmissionHeader, lines[0][1], f"{filename}:{lines[0][0]}")
        traces = [parse_json_as(Trace, line, f"{filename}:{number}") for number, line in lines[1:]]
    except TraceFormatError as error:
        raise UploadRejected(str(error)) from None
    return header.metadata, traces


def _read_zip(data: bytes, filename: str, limits: UploadLimits) -> Parsed:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = _checked_entries(archive, filename, limits)
            contents = {info.filename: _read_entry(archive, info, filename) for info in entries}
    except zipfile.BadZipFile as error:
        raise UploadRejected(f"{filename}: not a readable zip archive ({error})") from None
    jsonl = [name for name in contents if name.endswith(".jsonl")]
    if len(jsonl) == 1 and not any(PurePosixPath(name).name == METADATA_FILE for name in contents):
        return _read_jsonl(contents[jsonl[0]], f"{filename}!{jsonl[0]}", limits)
    return _read_trace_files(contents, filename)


def _checked_entries(archive: zipfile.ZipFile, filename: str, limits: UploadLimits) -> list[zipfile.ZipInfo]:
    infos = [info for info in archive.infolist() if not info.is_dir()]
    if len(infos) > limits.max_files:
        raise UploadRejected(
            f"{filename}: {len(infos)} files in the archive, more than the limit of {limits.max_files}"
        )
    total = 0
    for info in infos:
        problem = _entry_problem(info)
        if problem:
            raise UploadRejected(f"{filename}: refusing entry {info.filename!r}: {problem}")
        total += info.file_size
    if total > limits.max_unpacked_bytes:
        raise UploadRejected(
            f"{filename}: unpacks to {total / 1024**2:.0f} MB, over the limit of "
            f"{limits.max_unpacked_bytes / 1024**2:.0f} MB"
        )
    return infos


def _entry_problem(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    posix = PurePosixPath(name)
    if "\\" in name or "\x00" in name:
        return "backslash or NUL in the name"
    if posix.is_absolute() or (len(name) > 1 and name[1] == ":"):
        return "absolute path"
    if ".." in posix.parts:
        return "'..' component"
    if (info.external_attr >> 16) & 0o170000 == 0o120000:
        return "symbolic link"
    if info.file_size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1):
        return f"compression ratio over {MAX_COMPRESSION_RATIO}:1 (a zip bomb?)"
    return None


def _read_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, filename: str) -> bytes:
    # Read one byte past the declared size: an entry that lies about its size is refused.
    with archive.open(info) as entry:
        content = entry.read(info.file_size + 1)
    if len(content) > info.file_size:
        raise UploadRejected(f"{filename}: entry {info.filename!r} is larger than it declares")
    return content


def _read_trace_files(contents: dict[str, bytes], filename: str) -> Parsed:
    metadata_names = [name for name in contents if PurePosixPath(name).name == METADATA_FILE]
    if len(metadata_names) != 1:
        raise UploadRejected(
            f"{filename}: a .zip needs one submission .jsonl, "
            f"or one {METADATA_FILE} beside <task_id>.json traces"
        )
    try:
        metadata = parse_json_as(
            SubmissionMetadata, contents[metadata_names[0]], f"{filename}!{metadata_names[0]}"
        )
        traces = []
        for name, content in sorted(contents.items()):
            if name.endswith(".json") and name != metadata_names[0]:
                traces.append(_named_trace(content, f"{filename}!{name}", PurePosixPath(name).stem))
    except TraceFormatError as error:
        raise UploadRejected(str(error)) from None
    return metadata, traces


def _named_trace(content: bytes, where: str, stem: str) -> Trace:
    trace = parse_json_as(Trace, content, where)
    if trace.task_id != stem:
        raise UploadRejected(f"{where}: holds the trace of {trace.task_id}; name it {trace.task_id}.json")
    return trace


READERS: dict[str, Callable[[bytes, str, UploadLimits], Parsed]] = {".jsonl": _read_jsonl, ".zip": _read_zip}
"""Upload readers by file suffix."""
