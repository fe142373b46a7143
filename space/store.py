"""The results store: one immutable file per record, never rewritten, and an append-only decision log.

Layout under the store folder (all private; the app never serves these files):

    submissions/<receipt>.jsonl          the accepted traces (the paper judge's `recorded` block removed)
    receipts/<receipt>.json              SubmissionRecord
    rejections/<receipt>.json            RejectionRecord (the first reason for that content)
    results/<receipt>.<stage>.json       ResultRecord (deterministic, then judged)
    log/<time_ns>-<random>.json          LogEntry, one file per decision

Every record is written to a temporary file and hard-linked into place, so it appears complete or
not at all and a second writer of the same record fails instead of overwriting it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from evaluator.traces.io import SubmissionHeader, parse_json_as
from evaluator.traces.schema import Submission, Trace
from loaders.atomic import write_text_atomic
from space.records import (
    Decision,
    LogEntry,
    RejectionRecord,
    ResultRecord,
    ResultStage,
    SubmissionRecord,
)

Record = TypeVar("Record", bound=BaseModel)
SUBMISSIONS, RECEIPTS, REJECTIONS, RESULTS, LOG = "submissions", "receipts", "rejections", "results", "log"


class RecordExists(FileExistsError):
    """A record with this name is already stored; records are written once."""


def create_once(path: Path, text: str) -> None:
    """Write `text` to `path` atomically, failing with RecordExists when `path` already exists."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.part")
    write_text_atomic(temporary, [text])
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise RecordExists(f"{path.name}: already stored") from None
    finally:
        temporary.unlink(missing_ok=True)


class Store:
    """The Space's records on disk; reads of immutable records are cached in memory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        for folder in (SUBMISSIONS, RECEIPTS, REJECTIONS, RESULTS, LOG):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        self._cache: dict[Path, BaseModel] = {}
        self._lock = threading.Lock()

    # --- writing -------------------------------------------------------------------------------

    def accept(self, record: SubmissionRecord, submission: Submission) -> None:
        """Store an accepted submission: its traces first, then the receipt that makes it visible."""
        header = SubmissionHeader(metadata=submission.metadata).model_dump_json()
        lines = [header, *(trace.model_dump_json() for trace in submission.traces)]
        traces_path = self._path(SUBMISSIONS, f"{record.receipt}.jsonl")
        if not traces_path.exists():
            create_once(traces_path, "\n".join(lines) + "\n")
        create_once(self._path(RECEIPTS, f"{record.receipt}.json"), record.model_dump_json(indent=1))

    def reject(self, record: RejectionRecord) -> None:
        """Keep the first rejection of this content (later ones are in the log)."""
        with contextlib.suppress(RecordExists):
            create_once(self._path(REJECTIONS, f"{record.receipt}.json"), record.model_dump_json(indent=1))

    def add_result(self, result: ResultRecord) -> None:
        create_once(self._result_path(result.receipt, result.stage), result.model_dump_json(indent=1))

    def log(self, decision: Decision, receipt: str, user: str, detail: str = "") -> LogEntry:
        """Append one decision to the log (its own file, named so that names sort by time)."""
        entry = LogEntry(at=datetime.now(UTC), decision=decision, receipt=receipt, user=user, detail=detail)
        name = f"{time_ns_name()}-{uuid.uuid4().hex[:8]}.json"
        create_once(self._path(LOG, name), entry.model_dump_json())
        return entry

    # --- reading -------------------------------------------------------------------------------

    def submission_record(self, receipt: str) -> SubmissionRecord | None:
        return self._read(self._path(RECEIPTS, f"{receipt}.json"), SubmissionRecord)

    def rejection(self, receipt: str) -> RejectionRecord | None:
        return self._read(self._path(REJECTIONS, f"{receipt}.json"), RejectionRecord)

    def result(self, receipt: str, stage: ResultStage) -> ResultRecord | None:
        return self._read(self._result_path(receipt, stage), ResultRecord)

    def submissions(self) -> list[SubmissionRecord]:
        """Every accepted submission, oldest first."""
        records = [self._read(path, SubmissionRecord) for path in self._listing(RECEIPTS, "*.json")]
        return sorted((r for r in records if r is not None), key=lambda record: record.received_at)

    def latest_results(self) -> list[ResultRecord]:
        """The newest result of every scored submission: judged when there is one, else deterministic."""
        latest: dict[str, ResultRecord] = {}
        for path in self._listing(RESULTS, "*.json"):
            result = self._read(path, ResultRecord)
            if result is not None and (result.receipt not in latest or result.stage == "judged"):
                latest[result.receipt] = result
        return sorted(latest.values(), key=lambda result: result.scored_at)

    def traces(self, receipt: str) -> Iterator[Trace]:
        """The stored traces of an accepted submission (read from disk each time, never cached)."""
        path = self._path(SUBMISSIONS, f"{receipt}.jsonl")
        with path.open(encoding="utf-8") as lines:
            next(lines)
            for number, line in enumerate(lines, start=2):
                if line.strip():
                    yield parse_json_as(Trace, line, f"{path.name}:{number}")

    def submission(self, receipt: str) -> Submission:
        path = self._path(SUBMISSIONS, f"{receipt}.jsonl")
        with path.open(encoding="utf-8") as lines:
            header = parse_json_as(SubmissionHeader, next(lines), f"{path.name}:1")
        return Submission(metadata=header.metadata, traces=list(self.traces(receipt)))

    def log_entries(self) -> list[LogEntry]:
        entries = [self._read(path, LogEntry) for path in self._listing(LOG, "*.json")]
        return [entry for entry in entries if entry is not None]

    def result_count(self) -> int:
        """How many result records exist: a cheap version number for caches of the leaderboard."""
        return sum(1 for _ in self._listing(RESULTS, "*.json"))

    # --- helpers -------------------------------------------------------------------------------

    def _path(self, folder: str, name: str) -> Path:
        return self.root / folder / name

    def _result_path(self, receipt: str, stage: ResultStage) -> Path:
        return self._path(RESULTS, f"{receipt}.{stage}.json")

    def _listing(self, folder: str, pattern: str) -> list[Path]:
        # Temporary files start with a dot; glob's `*` does not match them.
        return sorted((self.root / folder).glob(pattern))

    def _read(self, path: Path, model: type[Record]) -> Record | None:
        cached = self._cache.get(path)
        if cached is not None:
            return cached  # type: ignore[return-value]
        if not path.is_file():
            return None
        record = model.model_validate_json(path.read_bytes())
        with self._lock:
            self._cache[path] = record
        return record


def time_ns_name() -> str:
    """A fixed-width decimal of the current time in nanoseconds, so that names sort by time."""
    return f"{time.time_ns():020d}"
