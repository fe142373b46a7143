"""The python sandbox behind the `python_exec(code)` tool: model-written code runs in a forked child of a
warm worker, inside its own namespaces, with nothing of the host's filesystem but what it needs.

Isolation layers in force (all of them, always; `PythonSandbox.start` fails rather than run without one):

1. Namespaces (`unshare --mount --net --pid --ipc --uts`): no network at all (only a down loopback, so
   no TCP, UDP, DNS or abstract unix sockets reach the host or anything else); a PID namespace whose
   PID 1 is the worker, so model code sees and can signal no host process; private SysV IPC and
   hostname; a fresh, empty session keyring.
2. Filesystem: the worker `pivot_root`s into a fresh read-only tmpfs and detaches the host tree. The
   only things mounted in it are `/usr` (and the `/bin`, `/lib*` links), the Python installation
   (read-only, at its own path), the package's `data/` and `metadata/` (read-only under `/package`;
   nothing else at the package's top level), the project's `loaders` package alone (read-only at
   `/opt/earthverse/loaders`), device nodes null, zero, full, random and urandom, a fresh `/proc` of
   the PID namespace, a synthetic `/etc` (loader cache, one-user passwd and group) and `/scratch`, a
   size-capped tmpfs owned by the sandbox uid (`/tmp` links to it; it also holds links for
   `data/`, `metadata/` and the repository form of package paths). Other packages, hidden ground
   truth, the project source, home folders and the host's `/etc`, `/tmp`, `/work` or `/root`
   contents are not in the namespace at all, so no path, `..`, symlink or `/proc/*/root` reaches
   them. Every bind is nosuid and nodev.
3. Credentials: each call's child drops to a per-sandbox unprivileged uid (no capabilities: no mount,
   chroot, ptrace of the root worker, signal to it or read of its `/proc/1/environ`) and sets
   no_new_privs. The worker's configuration comes on stdin, so its command line names no host path.
4. Environment: an allow-list (`python_exec.SANDBOX_ENV`) is the whole environment of the worker; the
   parent's API keys and tokens never enter the namespace, and the worker is exec'd, not forked from
   the host process, so none are in its memory either.
5. Limits: wall time (then the worker SIGKILLs every process of the namespace, not just the snippet's
   group, and does so after every call, so no process outlives its call), RLIMIT_CPU, RLIMIT_AS
   (address space beyond the warm worker's own), RLIMIT_NPROC, RLIMIT_NOFILE, RLIMIT_FSIZE, the
   scratch tmpfs size, and an output cap per stream (more kills the call). The host also gives up on a
   worker silent past the wall limit plus a grace, kills its namespace and starts a new one.

NOT protected: the kernel itself (no seccomp filter: every syscall is reachable, so a kernel exploit
escapes); CPU, memory and disk-bandwidth contention with the host (rlimits are per process, there is no
cgroup; memory is capped as address space, not resident size); timing and other side channels; the host
paths of the bind sources, which `/proc/self/mountinfo` shows (names only, never contents); everything
under `/usr` and the Python installation, which is readable; dot-files inside the package's `data/`
(the release gates keep hidden material out of packages). Files written in `/scratch` persist across the
calls of one sandbox. Requires root (or equivalent capabilities) and `unshare`; `sandbox_available()`
says whether this machine has them.

Reuse: `dataset/gt_runner.py` isolates `compute_gt.py` with `unshare -n` and `prlimit` only. It could run
the program through `worker.build_root` + `run_call` instead (same namespaces, limits and process-group
sweep) once the worker can stage a writable, host-visible task folder beside the package for the
program's `computed_gt.json`; that option does not exist yet.
"""

from evaluator.sandbox.limits import SandboxLimits
from evaluator.sandbox.python_exec import ExecResult, PythonSandbox, SandboxError, sandbox_available

__all__ = ["ExecResult", "PythonSandbox", "SandboxError", "SandboxLimits", "sandbox_available"]
