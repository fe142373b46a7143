"""Uploading a run's submission.jsonl to the leaderboard Space, and polling its status.

The Space's contract: `/submit` takes the file and answers {"receipt", "status", "message"}; `/status`
takes a receipt and answers the same shape. Statuses other than the pending ones are final.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from evaluator.traces.io import SUBMISSION_FILE, read_submission

PENDING_STATUSES = frozenset({"queued", "pending", "running", "scoring", "received"})
REFUSED_STATUSES = frozenset({"rejected", "unknown", "failed", "error"})
"""Final statuses that mean the submission is not (and will not be) on the leaderboard."""


class SpaceReply(BaseModel):
    """What the Space answers to a submission or a status query."""

    model_config = ConfigDict(extra="ignore")

    receipt: str
    status: str
    message: str = ""

    @property
    def pending(self) -> bool:
        return self.status.lower() in PENDING_STATUSES

    @property
    def refused(self) -> bool:
        return self.status.lower() in REFUSED_STATUSES


class SubmitError(ValueError):
    """The submission could not be made or the Space answered out of contract; the message says which."""


def submission_file(path: Path, allow_infrastructure_failures: bool = False) -> Path:
    """The submission.jsonl of a run folder (or the file itself), checked to be a valid submission
    whose tasks all ended on the agent's account: an infrastructure failure (the provider down) would
    score zero on the Space although `--resume` can still finish it, so it is refused unless allowed."""
    path = Path(path)
    file = path / SUBMISSION_FILE if path.is_dir() else path
    if not file.is_file():
        raise SubmitError(f"{path}: no {SUBMISSION_FILE}; finish the run first (earthverse run ... --resume)")
    submission = read_submission(file)  # a malformed file fails here with the line, not on the Space
    failed = [trace.task_id for trace in submission.traces if trace.run_status == "infrastructure_failure"]
    if failed and not allow_infrastructure_failures:
        raise SubmitError(
            f"{file}: {len(failed)} task(s) ended in an infrastructure failure ({', '.join(failed[:3])}"
            f"{', ...' if len(failed) > 3 else ''}), which would score zero; finish them with "
            "earthverse run ... --resume, or pass --allow-infrastructure-failures"
        )
    return file


class SpaceClient:
    """The Space behind gradio_client (`space` is a URL or a Space repo id)."""

    def __init__(self, space: str, token: str | None = None) -> None:
        from gradio_client import Client

        try:
            self._client = Client(space, token=token, verbose=False)
        except Exception as error:  # gradio_client raises assorted errors for an unreachable Space
            raise SubmitError(f"cannot reach the Space {space}: {error}") from error

    def submit(self, file: Path) -> SpaceReply:
        """Upload `file` to `/submit`."""
        from gradio_client import handle_file

        return self._call(handle_file(str(file)), api_name="/submit")

    def status(self, receipt: str) -> SpaceReply:
        """Ask `/status` about `receipt`."""
        return self._call(receipt, api_name="/status")

    def wait(
        self,
        receipt: str,
        timeout_s: float,
        interval_s: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> SpaceReply:
        """Poll `/status` until the status is final or `timeout_s` passes; the last reply either way."""
        deadline = time.monotonic() + timeout_s
        reply = self.status(receipt)
        while reply.pending and time.monotonic() < deadline:
            sleep(interval_s)
            reply = self.status(receipt)
        return reply

    def _call(self, argument: Any, api_name: str) -> SpaceReply:
        try:
            result = self._client.predict(argument, api_name=api_name)
        except Exception as error:  # errors raised inside the Space come back as gradio AppErrors
            raise SubmitError(f"the Space's {api_name} failed: {error}") from error
        try:
            return SpaceReply.model_validate(result)
        except ValidationError as error:
            raise SubmitError(f"the Space's {api_name} answered out of contract: {result!r}") from error
