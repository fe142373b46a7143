"""A submission's status as its submitter sees it: queued → scored → published, or rejected and why."""

from __future__ import annotations

import re

from evaluator.scoring.pipeline import version_mismatch
from space.records import SubmissionStatus
from space.store import Store

RECEIPT = re.compile(r"[0-9a-f]{64}")


def status_of(store: Store, receipt: str, judged: bool, release_version: str) -> SubmissionStatus:
    """The status of `receipt`, from the records that exist: nothing here is stored twice. A submission
    stored while the Space served another release version is `rejected` now: it is not ranked here."""
    receipt = receipt.strip().lower()
    if not RECEIPT.fullmatch(receipt):
        return SubmissionStatus(receipt=receipt, status="unknown", message="A receipt is 64 hex characters.")
    record = store.submission_record(receipt)
    if record is None:
        rejection = store.rejection(receipt)
        if rejection is not None:
            return SubmissionStatus(receipt=receipt, status="rejected", message=rejection.reason)
        return SubmissionStatus(receipt=receipt, status="unknown", message="No submission has this receipt.")
    name = record.metadata.system_name
    retired = version_mismatch(record.metadata, release_version)
    if retired:
        return SubmissionStatus(
            receipt=receipt, status="rejected", message=f"{retired}: it is not ranked on this leaderboard."
        )
    if store.result(receipt, "judged") is not None:
        return SubmissionStatus(
            receipt=receipt, status="published", message=f"{name!r} is on the leaderboard."
        )
    if store.result(receipt, "deterministic") is None:
        return SubmissionStatus(
            receipt=receipt, status="queued", message=f"{name!r} is queued for rescoring."
        )
    if not judged:
        return SubmissionStatus(
            receipt=receipt,
            status="published",
            message=f"{name!r} is on the leaderboard (deterministic figures; no judge configured).",
        )
    return SubmissionStatus(
        receipt=receipt,
        status="scored",
        message=f"{name!r} is rescored and on the leaderboard; the LLM judge is pending.",
    )
