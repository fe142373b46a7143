"""Taking in a submission: identify, bound, validate, deduplicate, rate-limit, store and queue it.

Nothing the submitter says about scores is kept: the traces are stored without the paper judge's
`recorded` block and every figure is recomputed by the rescoring queue.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from space.records import RejectionRecord, SubmissionRecord, SubmissionStatus
from space.status import status_of
from space.store import Store
from space.validation import (
    MetadataForm,
    UploadLimits,
    UploadRejected,
    check_tasks,
    check_version,
    parse_upload,
    read_upload_bytes,
    receipt_of,
)

ANONYMOUS = "anonymous"
NOT_SIGNED_IN = "Sign in with Hugging Face (or call the API with a Hub token) to submit."


class Intake:
    """The one entry point for submissions, from the form and from the `submit` API alike."""

    def __init__(
        self,
        store: Store,
        release_version: str,
        known_tasks: set[str],
        limits: UploadLimits,
        daily_limit: int,
        enqueue: Callable[[str], None],
        judged: bool,
    ) -> None:
        self.store = store
        self.release_version = release_version
        self.known_tasks = known_tasks
        self.limits = limits
        self.daily_limit = daily_limit
        self.enqueue = enqueue
        self.judged = judged
        # Checks against earlier submissions and the write that follows must not interleave.
        self._lock = threading.Lock()

    def submit(
        self, path: Path | None, filename: str, user: str | None, form: MetadataForm | None = None
    ) -> SubmissionStatus:
        """Accept the upload at `path` (queued) or reject it with the reason; every decision is logged."""
        form = form or MetadataForm()
        if path is None:
            return SubmissionStatus(receipt="", status="rejected", message="No file was uploaded.")
        try:
            data = read_upload_bytes(path, filename, self.limits)
        except UploadRejected as error:
            self.store.log("rejected", "", user or ANONYMOUS, str(error))
            return SubmissionStatus(receipt="", status="rejected", message=str(error))
        receipt = receipt_of(data, form)
        if user is None:
            return self._reject(receipt, ANONYMOUS, filename, NOT_SIGNED_IN)
        if self.store.submission_record(receipt) is not None:
            self.store.log("duplicate", receipt, user, "the same content was submitted before")
            current = self.status(receipt)
            return current.model_copy(update={"message": f"Already received. {current.message}"})
        try:
            submission = parse_upload(data, filename, self.limits, form)
            check_version(submission, self.release_version, filename)
            check_tasks(submission, self.known_tasks, filename)
        except UploadRejected as error:
            return self._reject(receipt, user, filename, str(error))
        with self._lock:
            problem = self._conflict(user, submission.metadata.system_name)
            if problem:
                return self._reject(receipt, user, filename, problem)
            record = SubmissionRecord(
                receipt=receipt,
                user=user,
                received_at=datetime.now(UTC),
                filename=filename,
                size_bytes=len(data),
                metadata=submission.metadata,
                traces=len(submission.traces),
            )
            self.store.accept(record, submission)
        self.store.log(
            "accepted", receipt, user, f"{record.traces} traces of {record.metadata.system_name!r}"
        )
        self.enqueue(receipt)
        return self.status(receipt)

    def status(self, receipt: str) -> SubmissionStatus:
        """What the submitter of `receipt` is told (see `status_of`)."""
        return status_of(self.store, receipt, self.judged, self.release_version)

    def _conflict(self, user: str, system_name: str) -> str | None:
        """Why this user may not submit this system now: a name already used, or the daily limit."""
        wanted = system_name.strip().casefold()
        today = datetime.now(UTC).date()
        mine_today = 0
        for record in self.store.submissions():
            # a name is taken only on this release: a system may be submitted again on a new one
            named = record.metadata.system_name.strip().casefold() == wanted
            same_name = named and record.on_release(self.release_version)
            if same_name and record.user == user:
                return (
                    f"You already submitted a system named {system_name!r} (receipt {record.receipt[:12]}…)."
                )
            if same_name:
                return f"The system name {system_name!r} is taken by another submitter; choose another."
            mine_today += record.user == user and record.received_at.date() == today
        if mine_today >= self.daily_limit:
            return f"Daily limit reached: {self.daily_limit} submissions per user per day (UTC)."
        return None

    def _reject(self, receipt: str, user: str, filename: str, reason: str) -> SubmissionStatus:
        now = datetime.now(UTC)
        self.store.reject(
            RejectionRecord(receipt=receipt, user=user, received_at=now, filename=filename, reason=reason)
        )
        self.store.log("rejected", receipt, user, reason)
        return SubmissionStatus(receipt=receipt, status="rejected", message=reason)
