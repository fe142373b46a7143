"""The warm sandbox worker: builds the sandbox filesystem, imports the scientific stack, then runs each
snippet in a fresh forked child.

Started by `PythonSandbox` as `unshare --mount --net --pid --ipc --uts --fork python -I -S -B worker.py`,
so this process is PID 1 of a new PID namespace, with no network and its own mounts. It is stdlib-only on
purpose: it runs before (and after) the project tree disappears from view.

Protocol (stdin/stdout, one JSON object per line): the host first sends the `Config` (on stdin, not argv,
so `/proc/1/cmdline` shows model code no host path); after setup the worker writes `{"ready": true, ...}`;
then for each request `{"code": str}` it writes one result object with the fields of `ExecResult`.
Each child: new session, rlimits, setuid to the sandbox uid (drops every capability), no_new_privs,
cwd `/scratch`. After every call the worker SIGKILLs every other process of the namespace and reaps
them, so no process outlives its call.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import errno
import io
import json
import os
import platform
import resource
import selectors
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

PACKAGE_MOUNT = "/package"
SCRATCH = "/scratch"
PROJECT_MOUNT = "/opt/earthverse"
WARM_IMPORTS = ("numpy", "pandas", "xarray", "loaders", "loaders.package", "loaders.readers")
OPTIONAL_WARM_IMPORTS = ("netCDF4", "h5netcdf", "scipy.io", "rioxarray", "PIL.Image")
"""File-format backends that xarray and the readers load lazily; imported if installed, so calls skip it."""
DEVICES = ("null", "zero", "full", "random", "urandom")

# Exit statuses 120-125 are reserved: a snippet that exits with one of them is reported as that limit.
EXIT_SETUP = 120
EXIT_MEMORY = 121
EXIT_LIMIT_ERRNO = {errno.EAGAIN: 122, errno.EMFILE: 123, errno.EFBIG: 124, errno.ENOSPC: 125}
"""Exit statuses for an uncaught OSError a limit caused (fork refused, fd table, file size, scratch full)."""

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MNT_DETACH = 2
_PR_SET_NO_NEW_PRIVS = 38
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_KEYCTL = {"x86_64": 250, "aarch64": 219}
_KEYCTL_JOIN_SESSION_KEYRING = 1
_LIBC = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Config:
    """What the host asks for (the first stdin line; the host validated the limits with pydantic)."""

    new_root: str
    package_root: str
    package_link: str
    package_areas: list[str]
    project_root: str
    python_dirs: list[str]
    site_dirs: list[str]
    uid: int
    wall_seconds: float
    cpu_seconds: int
    memory_mb: int
    max_processes: int
    max_open_files: int
    max_output_bytes: int
    max_file_mb: int
    scratch_mb: int


# ---- filesystem setup (runs as namespace root, before the pivot) ----


def _check(result: int, what: str) -> None:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    arguments = [text.encode() if text is not None else None for text in (source, target, fstype)]
    _check(_LIBC.mount(*arguments, flags, data.encode()), f"mount {target}")


def _bind_readonly(source: str, target: str) -> None:
    """Bind `source` at `target`, then remount it read-only, nosuid, nodev (a bind ignores flags at first)."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        Path(target).touch()
    _mount(source, target, None, _MS_BIND | _MS_REC)
    _mount(None, target, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)


def _system_dirs(root: str) -> None:
    """/usr read-only; /bin, /lib, ... as the same links (or binds) the host has."""
    _bind_readonly("/usr", root + "/usr")
    for name in ("bin", "sbin", "lib", "lib64", "lib32"):
        host = "/" + name
        if os.path.islink(host):
            os.symlink(os.readlink(host), f"{root}/{name}")
        elif os.path.isdir(host):
            _bind_readonly(host, f"{root}/{name}")


def _etc(root: str, uid: int) -> None:
    """A synthetic /etc: the loader cache and two one-user account files, nothing of the host's config."""
    os.makedirs(root + "/etc")
    if os.path.isfile("/etc/ld.so.cache"):
        Path(root + "/etc/ld.so.cache").write_bytes(Path("/etc/ld.so.cache").read_bytes())
    Path(root + "/etc/passwd").write_text(
        f"root:x:0:0::/:/bin/false\nsandbox:x:{uid}:{uid}::{SCRATCH}:/bin/false\n"
    )
    Path(root + "/etc/group").write_text(f"root:x:0:\nsandbox:x:{uid}:\n")


def _dev_and_proc(root: str) -> None:
    os.makedirs(root + "/dev")
    for name in DEVICES:
        target = f"{root}/dev/{name}"
        Path(target).touch()
        _mount(f"/dev/{name}", target, None, _MS_BIND)
    os.makedirs(root + "/proc")
    # A fresh proc of this PID namespace: it shows only the worker and its children.
    _mount("proc", root + "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)


def _scratch(root: str, config: Config) -> None:
    os.makedirs(root + SCRATCH)
    options = f"size={config.scratch_mb}m,mode=0700,uid={config.uid},gid={config.uid}"
    _mount("tmpfs", root + SCRATCH, "tmpfs", _MS_NOSUID | _MS_NODEV, options)
    os.symlink(SCRATCH, root + "/tmp")
    # The paths model code habitually uses from its working folder: `data/...` and the repository form.
    link = f"{root}/{config.package_link}"
    os.makedirs(os.path.dirname(link))
    os.symlink(PACKAGE_MOUNT, link)
    top = config.package_link.split("/")[0]
    links = [(area, f"{PACKAGE_MOUNT}/{area}") for area in config.package_areas] + [(top, "/" + top)]
    for name, target in links:
        os.symlink(target, f"{root}{SCRATCH}/{name}")


def build_root(config: Config) -> None:
    """Make `config.new_root` the whole visible filesystem: a read-only tmpfs with only what snippets need."""
    root = config.new_root
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)  # nothing we mount propagates back to the host
    _mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=16m,mode=0755")
    _system_dirs(root)
    for folder in config.python_dirs:
        _bind_readonly(folder, root + folder)
    for area in config.package_areas:  # only these: nothing else at the package's top level shows
        if os.path.isdir(os.path.join(config.package_root, area)):
            _bind_readonly(os.path.join(config.package_root, area), f"{root}{PACKAGE_MOUNT}/{area}")
    _bind_readonly(os.path.join(config.project_root, "loaders"), root + PROJECT_MOUNT + "/loaders")
    _etc(root, config.uid)
    _dev_and_proc(root)
    _scratch(root, config)
    _pivot(root)
    _mount(None, "/", None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    # A fresh, empty session keyring: children must not possess any key of the host's session.
    _check(_LIBC.syscall(_KEYCTL[platform.machine()], _KEYCTL_JOIN_SESSION_KEYRING, None), "keyring")


def _pivot(root: str) -> None:
    """pivot_root into `root` and detach the old root, so the host tree is not in this namespace at all."""
    os.chdir(root)
    _check(_LIBC.syscall(_PIVOT_ROOT[platform.machine()], b".", b"."), "pivot_root")
    _check(_LIBC.umount2(b".", _MNT_DETACH), "umount old root")
    os.chdir("/")


def warm_imports(config: Config) -> None:
    """Import the scientific stack from inside the new root, so every child starts with it loaded."""
    sys.path[:0] = [PROJECT_MOUNT]
    sys.path.extend(config.site_dirs)
    for name in WARM_IMPORTS:
        __import__(name)
    for name in OPTIONAL_WARM_IMPORTS:
        with contextlib.suppress(ImportError):
            __import__(name)


# ---- one call ----


def _child(code: str, out_w: int, err_w: int, config: Config) -> None:
    """In the forked child: confine this process, run the snippet, exit. Never returns."""
    try:
        _confine(out_w, err_w, config)
    except BaseException:
        os._exit(EXIT_SETUP)
    os._exit(_execute(code))


def _confine(out_w: int, err_w: int, config: Config) -> None:
    os.setsid()  # its own process group and session, killable as one
    devnull = os.open("/dev/null", os.O_RDONLY)
    for source, target in ((devnull, 0), (out_w, 1), (err_w, 2)):
        os.dup2(source, target)
    os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    _apply_rlimits(config)
    os.setgroups([])
    os.setgid(config.uid)
    os.setuid(config.uid)  # a non-zero uid loses every capability
    _check(_LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    os.chdir(SCRATCH)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)


def _apply_rlimits(config: Config) -> None:
    baseline = _address_space_bytes()
    limits = {
        resource.RLIMIT_CPU: (config.cpu_seconds, config.cpu_seconds + 1),
        resource.RLIMIT_AS: (baseline + (config.memory_mb << 20),) * 2,
        resource.RLIMIT_NPROC: (config.max_processes,) * 2,
        resource.RLIMIT_NOFILE: (config.max_open_files,) * 2,
        resource.RLIMIT_FSIZE: (config.max_file_mb << 20,) * 2,
        resource.RLIMIT_CORE: (0, 0),
    }
    for which, value in limits.items():
        resource.setrlimit(which, value)


def _address_space_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) << 10
    return 0


def _execute(code: str) -> int:
    """Run `code` as `__main__`; the exit status tells the worker how it ended."""
    try:
        exec(compile(code, "<python_exec>", "exec"), {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as stop:
        return _exit_status(stop.code)
    except MemoryError as error:
        _print_error(error)
        return EXIT_MEMORY
    except OSError as error:
        _print_error(error)
        return EXIT_LIMIT_ERRNO.get(error.errno or 0, 1)
    except BaseException as error:
        _print_error(error)
        return 1
    return 0


def _print_error(error: BaseException) -> None:
    # The traceback starts at the snippet: the worker's own frame is noise to the model.
    frames = error.__traceback__.tb_next if error.__traceback__ else None
    traceback.print_exception(type(error), error, frames)


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


@dataclass
class _Capture:
    stdout: bytearray
    stderr: bytearray
    truncated: bool = False
    timed_out: bool = False


def run_call(code: str, config: Config) -> dict[str, object]:
    """Run one snippet in a confined child and return the result fields of `ExecResult`."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(code, out_w, err_w, config)
    os.close(out_w)
    os.close(err_w)
    capture = _collect(pid, out_r, err_r, started + config.wall_seconds, config.max_output_bytes)
    returncode, cpu = _finish(pid)
    return {
        "stdout": capture.stdout.decode("utf-8", errors="replace"),
        "stderr": capture.stderr.decode("utf-8", errors="replace"),
        "returncode": returncode,
        "timed_out": capture.timed_out,
        "killed_reason": _killed_reason(capture, returncode, cpu, config),
        "truncated": capture.truncated,
        "seconds": time.monotonic() - started,
    }


def _collect(pid: int, out_r: int, err_r: int, deadline: float, cap: int) -> _Capture:
    """Read both streams until the snippet has exited and they are closed; past the deadline, or once a
    stream exceeds `cap`, kill everything first."""
    capture = _Capture(bytearray(), bytearray())
    buffers = {out_r: capture.stdout, err_r: capture.stderr}
    exit_fd = os.pidfd_open(pid)  # readable once the snippet's process has exited
    selector = selectors.DefaultSelector()
    for fd in (out_r, err_r, exit_fd):
        selector.register(fd, selectors.EVENT_READ)
    swept = False
    while selector.get_map():
        remaining = deadline - time.monotonic()
        if remaining <= 0 and swept:
            break  # killed writers close their ends at once; give up on any that did not
        if not swept and (remaining <= 0 or capture.truncated):
            capture.timed_out = not capture.truncated
            _kill_all()
            swept, deadline = True, time.monotonic() + 1.0
            continue
        for key, _ in selector.select(remaining):
            if key.fd == exit_fd:
                _kill_all()  # the snippet ended; descendants still holding the pipes go with it
                swept, deadline = True, min(deadline, time.monotonic() + 1.0)
            elif not _read_into(key.fd, buffers[key.fd], cap, capture):
                continue
            selector.unregister(key.fd)
            os.close(key.fd)
    for fd in list(selector.get_map()):
        os.close(fd)
    selector.close()
    return capture


def _read_into(fd: int, buffer: bytearray, cap: int, capture: _Capture) -> bool:
    """Append what `fd` has (up to `cap` bytes in all); True at end of stream."""
    chunk = os.read(fd, 65536)
    if not chunk:
        return True
    room = cap - len(buffer)
    buffer += chunk[: max(room, 0)]
    capture.truncated = capture.truncated or len(chunk) > room
    return False


def _kill_all() -> None:
    # As PID 1 of the namespace, kill(-1) reaches every other process in it, whatever its group.
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signal.SIGKILL)


def _finish(pid: int) -> tuple[int, float]:
    """Wait for the snippet's process, then kill and reap every other one; its exit code and CPU time."""
    _, status, usage = os.wait4(pid, 0)
    while True:
        _kill_all()  # again before each wait, in case something forked while the last kill landed
        try:
            os.wait()
        except ChildProcessError:
            break
    return os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime


def _killed_reason(capture: _Capture, code: int, cpu: float, config: Config) -> str | None:
    """Which limit stopped the call, from how it ended; None if it ended on its own."""
    if capture.timed_out:
        return f"wall time limit ({config.wall_seconds:g} s)"
    if capture.truncated:
        return f"output limit ({config.max_output_bytes} bytes per stream)"
    # The kernel sends SIGXCPU at the soft limit and SIGKILL at the hard one (a second later).
    if code == -signal.SIGXCPU or (code == -signal.SIGKILL and cpu >= config.cpu_seconds):
        return f"cpu time limit ({config.cpu_seconds} s)"
    reasons = {
        EXIT_MEMORY: f"memory limit ({config.memory_mb} MB)",
        EXIT_LIMIT_ERRNO[errno.EAGAIN]: f"process limit ({config.max_processes})",
        EXIT_LIMIT_ERRNO[errno.EMFILE]: f"open file limit ({config.max_open_files})",
        EXIT_LIMIT_ERRNO[errno.EFBIG]: f"file size limit ({config.max_file_mb} MB)",
        EXIT_LIMIT_ERRNO[errno.ENOSPC]: f"scratch space limit ({config.scratch_mb} MB)",
        EXIT_SETUP: "the sandbox could not confine the call",
        -signal.SIGKILL: "killed (SIGKILL)",
    }
    return reasons.get(code)


# ---- main loop ----


def _send(message: dict[str, object]) -> None:
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def serve(config: Config) -> None:
    """Answer requests until stdin closes."""
    for line in sys.stdin.buffer:
        request = json.loads(line)
        _send(run_call(request["code"], config))


def main() -> None:
    config = Config(**json.loads(sys.stdin.buffer.readline()))
    started = time.monotonic()
    build_root(config)
    warm_imports(config)
    _send({"ready": True, "seconds": time.monotonic() - started})
    serve(config)


if __name__ == "__main__":
    main()
