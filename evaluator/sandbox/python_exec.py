"""`PythonSandbox`: the host side of `python_exec(code)` — starts the warm worker, sends it code, reads
results, and restarts it if it stops answering.

See the package docstring (`evaluator.sandbox`) for the isolation layers and what they do not cover.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import selectors
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel

from evaluator.sandbox import worker
from evaluator.sandbox.limits import SandboxLimits
from loaders.models import REPOSITORY_PACKAGE_PREFIX
from loaders.package import PACKAGE_AREAS

PROJECT_ROOT = Path(__file__).resolve().parents[2]
WORKER_PATH = Path(worker.__file__).resolve()
NAMESPACES = ("--mount", "--net", "--pid", "--ipc", "--uts", "--fork", "--kill-child")
REPLY_GRACE_S = 10.0
"""How much longer than the wall limit the host waits for the worker before it declares it hung."""
SANDBOX_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": worker.SCRATCH,
    "TMPDIR": worker.SCRATCH,
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "MPLBACKEND": "Agg",
    "HF_HUB_OFFLINE": "1",
    "EARTHVERSE_PACKAGE": worker.PACKAGE_MOUNT,
}
"""The whole environment of the worker and of model code: an allow-list, never the parent's variables."""


class SandboxError(RuntimeError):
    """The sandbox could not be started (the message carries the worker's own error output)."""


class ExecResult(BaseModel):
    """What one `python_exec` call did. `killed_reason` names the limit that stopped it, if any."""

    ok: bool
    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool
    killed_reason: str | None
    truncated: bool
    seconds: float


class PythonSandbox:
    """A warm, isolated Python for one event package; use as a context manager.

    Model code sees the package read-only at `/package`, works in `/scratch` (kept across calls of
    one sandbox, lost if the worker has to be restarted), and has numpy, pandas, xarray and `loaders`
    already imported in the process it is forked from. From `/scratch`, `data/...`, `metadata/...`
    and the repository form (`event_packages/standard_event_packages/packages/<id>/data/...`, the
    folder name of `package_root` being the id) reach the package too. Each call is a fresh process:
    files in `/scratch` carry over to the next call, Python variables do not. One call at a time.
    """

    def __init__(self, package_root: Path, limits: SandboxLimits | None = None) -> None:
        self.package_root = Path(package_root).resolve()
        if not self.package_root.is_dir():
            raise NotADirectoryError(f"event package root is not a directory: {package_root}")
        self.limits = limits or SandboxLimits()
        self.restarts = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._run_dir: Path | None = None
        self._buffer = b""

    def __enter__(self) -> PythonSandbox:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> None:
        """Start the warm worker and wait until it has imported the scientific stack; SandboxError if not."""
        self._run_dir = Path(tempfile.mkdtemp(prefix="earthverse-sandbox-"))
        new_root = self._run_dir / "root"
        new_root.mkdir()
        self._process = self._launch()
        self._buffer = b""
        ready = self._send(self._config(new_root)) and self._read_reply(
            time.monotonic() + self.limits.startup_seconds
        )
        if not ready:
            log = self._worker_log()
            self.close()
            raise SandboxError(f"the sandbox worker did not start: {log}")

    def run(self, code: str) -> ExecResult:
        """Run `code` in a fresh confined child of the warm worker and report how it ended.

        Never raises for anything the code does: limits, crashes and a hung worker all come back as an
        ExecResult (a hung worker is killed with its whole namespace and restarted for the next call).
        """
        if self._process is None or self._process.poll() is not None:
            self._restart()
        started = time.monotonic()
        deadline = started + self.limits.wall_seconds + REPLY_GRACE_S
        reply = self._send(json.dumps({"code": code})) and self._read_reply(deadline)
        if not reply:
            lost = _lost_worker(time.monotonic() - started)
            self._restart()
            return lost
        return _result(reply)

    def close(self) -> None:
        """Kill the worker (and with it every process of its namespace) and remove the run folder."""
        if self._process is not None:
            _kill_group(self._process)
            self._process = None
        if self._run_dir is not None:
            shutil.rmtree(self._run_dir, ignore_errors=True)
            self._run_dir = None

    def _restart(self) -> None:
        self.close()
        self.restarts += 1
        self.start()

    def _launch(self) -> subprocess.Popen[bytes]:
        assert self._run_dir is not None
        with (self._run_dir / "worker.log").open("wb") as log:
            return subprocess.Popen(
                ["unshare", *NAMESPACES, sys.executable, "-I", "-S", "-B", str(WORKER_PATH)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=SANDBOX_ENV,
                cwd=self._run_dir,
                start_new_session=True,  # one process group: killing it takes the whole namespace
            )

    def _send(self, line: str) -> bool:
        """Write one line to the worker; False if it has gone."""
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(line.encode() + b"\n")
            self._process.stdin.flush()
        except BrokenPipeError:
            return False
        return True

    def _config(self, new_root: Path) -> str:
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        config = worker.Config(
            new_root=str(new_root),
            package_root=str(self.package_root),
            package_link=REPOSITORY_PACKAGE_PREFIX + self.package_root.name,
            package_areas=list(PACKAGE_AREAS),
            project_root=str(PROJECT_ROOT),
            python_dirs=sorted(str(Path(prefix).resolve()) for prefix in prefixes),
            site_dirs=site.getsitepackages(),
            uid=_sandbox_uid(),
            **self.limits.model_dump(exclude={"startup_seconds"}),
        )
        return json.dumps(config.__dict__)

    def _read_reply(self, deadline: float) -> dict[str, object] | None:
        """The worker's next JSON line, or None if it dies or stays silent past `deadline`."""
        assert self._process is not None and self._process.stdout is not None
        fd = self._process.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    return None
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return None
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def _worker_log(self) -> str:
        path = self._run_dir / "worker.log" if self._run_dir else None
        if path is None or not path.is_file():
            return "no worker output"
        return path.read_text(encoding="utf-8", errors="replace")[-4000:] or "no worker output"


@functools.cache
def sandbox_available() -> bool:
    """Whether this machine lets us create the namespaces and mounts the sandbox needs (root + unshare)."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    probe = subprocess.run(["unshare", *NAMESPACES, "true"], capture_output=True, env=SANDBOX_ENV)
    return probe.returncode == 0


def _sandbox_uid() -> int:
    # A uid of its own per sandbox: RLIMIT_NPROC counts per uid, so parallel sandboxes do not share it.
    return 2_000_000 + secrets.randbelow(1_000_000)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()


def _result(reply: dict[str, object]) -> ExecResult:
    fields = {**reply, "ok": reply["returncode"] == 0 and reply["killed_reason"] is None}
    return ExecResult.model_validate(fields)


def _lost_worker(seconds: float) -> ExecResult:
    return ExecResult(
        ok=False,
        stdout="",
        stderr="",
        returncode=None,
        timed_out=True,
        killed_reason="the sandbox worker stopped answering; it was killed and restarted",
        truncated=False,
        seconds=seconds,
    )
