"""Helpers for the Space tests: run the app on a free 127.0.0.1 port, and drive Debian's chromium."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"

from evaluator.scoring.judge import AnswerJudge
from evaluator.traces.io import write_submission
from evaluator.traces.schema import Submission
from space.app import build_app
from space.config import Settings
from space.identity import IdentityResolver
from space.services import Services, build_services
from space.ui import THEME

CHROMIUM = Path("/usr/bin/chromium")
SHOTS_FOR_LEAD = Path("/tmp/space-shots")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class RunningApp:
    url: str
    services: Services


@contextmanager
def running_app(
    settings: Settings, judge: AnswerJudge | None = None, identity: IdentityResolver | None = None
) -> Iterator[RunningApp]:
    """The Space over `settings`, served in a background thread until the block ends."""
    services = build_services(settings, judge=judge, identity=identity)
    app = build_app(services)
    port = free_port()
    app.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=port, theme=THEME, quiet=True)
    try:
        yield RunningApp(f"http://127.0.0.1:{port}/", services)
    finally:
        app.close()
        services.close()


def require_chromium() -> Path:
    """Debian's chromium; the browser tests FAIL (never skip) without it."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
    return CHROMIUM


@contextmanager
def chromium_page(viewport: tuple[int, int] = (1500, 1000)) -> Iterator[object]:
    """A headless chromium page (playwright, with the system browser; no download)."""
    from playwright.sync_api import sync_playwright

    executable = require_chromium()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(executable), headless=True)
        try:
            page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
            yield page
        finally:
            browser.close()


def save_shot(page: object, folder: Path, name: str, for_lead: bool = False) -> Path:
    """A full-page screenshot under `folder`; `for_lead` also copies it to /tmp/space-shots/."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    if for_lead:
        SHOTS_FOR_LEAD.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, SHOTS_FOR_LEAD / path.name)
    return path


def renamed(submission: Submission, system_id: str, name: str, model: str | None = None) -> Submission:
    """The same runs as another system (a distinct submission for the store)."""
    metadata = submission.metadata.model_copy(
        update={"system_id": system_id, "system_name": name, "model": model or submission.metadata.model}
    )
    traces = [
        trace.model_copy(
            update={
                "system": trace.system.model_copy(
                    update={"system_id": system_id, "system_name": name, "model": model or trace.system.model}
                )
            }
        )
        for trace in submission.traces
    ]
    return Submission(metadata=metadata, traces=traces)


def write_jsonl(path: Path, submission: Submission) -> Path:
    write_submission(path, submission)
    return path


def local_settings(release: Path, store: Path, **overrides: object) -> Settings:
    """Settings for a test app over a built release folder, with a development identity."""
    values: dict[str, object] = {"release": str(release), "store": store, "local_user": "tester", **overrides}
    return Settings(**values)
