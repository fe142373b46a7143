"""Executable grounding: run a task's `compute_gt.py` in isolation and compare what it regenerates.

Each program runs in its own subprocess, inside a temporary copy of the authors' original layout
(`tasks/<event>/<task>/compute_gt.py` beside `event_packages/standard_event_packages/packages/<event>/`),
with a time limit, a memory limit, a minimal environment and, where the machine allows it, no network.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from dataset.gt_compare import Difference, compare
from dataset.package_audit import PackageAudit
from loaders import layout
from loaders.models import REPOSITORY_PACKAGE_PREFIX
from loaders.tolerances import task_tolerances

DEFAULT_TIMEOUT_S = 120.0
MEMORY_LIMIT_BYTES = 4 << 30
OUTPUT_NAME = "computed_gt.json"
EARLIER_BUILD_DIR = Path("benchmark_build") / "individual_event_tasks"
"""Some programs were written to sit in (or write to) an earlier build folder of the authors' layout."""


class GroundingResult(BaseModel):
    """What running one task's ground-truth program gave."""

    task_id: str
    status: Literal["regenerated", "mismatch", "failed"]
    reason: str = ""
    differences: list[Difference] = Field(default_factory=list)
    seconds: float = 0.0


class ProgramRun(BaseModel):
    returncode: int | None
    stderr_tail: str
    timed_out: bool
    seconds: float


def ground_task(
    out: Path,
    event_id: str,
    task_id: str,
    audit: PackageAudit | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> GroundingResult:
    """Regenerate one task's ground truth from the built release at `out` and compare it with the record."""
    task_folder = layout.task_dir(out, event_id, task_id)
    recorded = json.loads((task_folder / OUTPUT_NAME).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix=f"earthverse-gt-{task_id}-") as scratch:
        root = Path(scratch)
        program_dir = _stage_authors_layout(out, root, event_id, task_id)
        run = _run_program(program_dir, timeout_s)
        output = _find_output(root, program_dir, task_id)
        if run.timed_out:
            return _failed(task_id, f"timed out after {timeout_s:.0f} s", run.seconds)
        if run.returncode != 0:
            return _failed(task_id, explain_failure(run.stderr_tail, audit), run.seconds)
        if output is None:
            return _failed(task_id, f"the program exited 0 but wrote no {OUTPUT_NAME}", run.seconds)
        return _judge(task_id, recorded, output, run.seconds)


def _stage_authors_layout(out: Path, root: Path, event_id: str, task_id: str) -> Path:
    source_task = layout.task_dir(out, event_id, task_id)
    program_dir = root / "tasks" / event_id / task_id
    earlier_build = root / EARLIER_BUILD_DIR / task_id
    for folder in (program_dir, earlier_build):
        folder.mkdir(parents=True)
        for name in ("compute_gt.py", "question_en.md"):
            shutil.copyfile(source_task / name, folder / name)
    packages = root / REPOSITORY_PACKAGE_PREFIX.rstrip("/")
    packages.mkdir(parents=True)
    # A copy, not a link: a program that writes into its package must not change the release.
    shutil.copytree(layout.package_dir(out, event_id), packages / event_id, copy_function=shutil.copyfile)
    return program_dir


def _run_program(program_dir: Path, timeout_s: float) -> ProgramRun:
    command = [*_isolation_prefix(), sys.executable, "-I", "-B", "compute_gt.py"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(program_dir), "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
    started = time.monotonic()
    process = subprocess.Popen(
        command,
        cwd=program_dir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        _, stderr = process.communicate(timeout=timeout_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate()
        timed_out = True
    tail = stderr.decode("utf-8", errors="replace")[-4000:]
    return ProgramRun(
        returncode=process.returncode,
        stderr_tail=tail,
        timed_out=timed_out,
        seconds=time.monotonic() - started,
    )


@functools.cache
def _isolation_prefix() -> tuple[str, ...]:
    """`unshare -n` (no network) and `prlimit` (memory) where this machine lets us use them."""
    prefix: tuple[str, ...] = ()
    if shutil.which("prlimit"):
        prefix = ("prlimit", f"--as={MEMORY_LIMIT_BYTES}", "--")
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        prefix = (unshare, "-n", *prefix)
    return prefix


def network_isolated() -> bool:
    return "-n" in _isolation_prefix()


def _find_output(root: Path, program_dir: Path, task_id: str) -> Path | None:
    for candidate in (program_dir / OUTPUT_NAME, root / EARLIER_BUILD_DIR / task_id / OUTPUT_NAME):
        if candidate.is_file():
            return candidate
    return None


def _judge(task_id: str, recorded: dict[str, Any], output: Path, seconds: float) -> GroundingResult:
    try:
        regenerated = json.loads(output.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return _failed(task_id, f"{OUTPUT_NAME} is not valid JSON: {error}", seconds)
    if not isinstance(regenerated, dict) or "primary_gt" not in regenerated:
        return _failed(task_id, f"{OUTPUT_NAME} has no primary_gt", seconds)
    differences = compare(recorded.get("primary_gt"), regenerated["primary_gt"], task_tolerances(recorded))
    if not differences:
        return GroundingResult(task_id=task_id, status="regenerated", seconds=seconds)
    fields = ", ".join(difference.path for difference in differences[:5])
    more = f" (+{len(differences) - 5} more)" if len(differences) > 5 else ""
    return GroundingResult(
        task_id=task_id,
        status="mismatch",
        reason=f"{len(differences)} field(s) differ: {fields}{more}",
        differences=differences,
        seconds=seconds,
    )


def _failed(task_id: str, reason: str, seconds: float) -> GroundingResult:
    return GroundingResult(task_id=task_id, status="failed", reason=reason, seconds=seconds)


_MISSING_FILE = re.compile(r"(?:No such file or directory: '([^']+)'|([^\s:']+): No such file or directory)")
_MISSING_MODULE = re.compile(r"No module named '([^']+)'")


def explain_failure(stderr: str, audit: PackageAudit | None) -> str:
    """The precise cause of a crashed program: a withheld or missing file, a module the release
    lacks, or else its last error line."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else "no error output"
    module = _MISSING_MODULE.search(stderr)
    if module:
        name = module.group(1)
        return f"imports {name!r}, a module of the authors' tree that the source release does not include"
    missing = _MISSING_FILE.search(stderr)
    if not missing:
        return last
    path = _package_relative(missing.group(1) or missing.group(2))
    file_audit = audit.by_path().get(path) if audit else None
    if file_audit is not None and file_audit.status == "withheld":
        return f"needs {path}: {file_audit.reason}"
    return f"needs {path}, which is absent ({last})"


def _package_relative(path: str) -> str:
    marker = REPOSITORY_PACKAGE_PREFIX
    if marker not in path:
        return path
    return path.split(marker, 1)[1].split("/", 1)[-1]
