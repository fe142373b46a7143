"""The python_exec sandbox: what model code can use, and an escape suite of attempts that must be contained.

Every escape attempt is followed by a trivial call, so the harness is shown to keep working after it.
A release-like tree is built in tmp: the package, a second package beside it, and hidden ground truth
(`computed_gt.json`) beside the package and under `tasks/`, all holding a marker that must never appear.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluator.sandbox import (
    ExecResult,
    PythonSandbox,
    SandboxError,
    SandboxLimits,
    python_exec,
    sandbox_available,
)
from evaluator.sandbox.python_exec import PROJECT_ROOT, SANDBOX_ENV

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="needs root and unshare namespaces")

SECRET = "GT-SECRET-4242"
LIMITS = SandboxLimits(
    wall_seconds=3,
    cpu_seconds=2,
    memory_mb=256,
    max_processes=32,
    max_open_files=64,
    max_output_bytes=65536,
    max_file_mb=8,
    scratch_mb=32,
)
PROBE = """
def attempt(label, action):
    try:
        value = action()
    except BaseException as error:
        print(label, "BLOCKED", type(error).__name__)
    else:
        print(label, "LEAK", repr(value)[:300])
"""


class Tree:
    """Host paths of the tmp release tree."""

    def __init__(self, root: Path) -> None:
        self.release = root / "release"
        self.package = self.release / "packages" / "CSX-900"
        self.other = self.release / "packages" / "CSX-901" / "data" / "secret.txt"
        self.beside = self.release / "packages" / "computed_gt.json"
        self.top = self.release / "computed_gt.json"
        self.task_gt = self.release / "tasks" / "CSX-900" / "CSX-900_Q1" / "computed_gt.json"


def _make_tree(root: Path) -> Tree:
    tree = Tree(root)
    (tree.package / "data").mkdir(parents=True)
    (tree.package / "metadata").mkdir()
    (tree.package / "data" / "obs.csv").write_text("t,v\n1,2.5\n2,3.5\n")
    (tree.package / "metadata" / "event.json").write_text(json.dumps({"event_id": "CSX-900"}))
    # A link inside the package that points at hidden ground truth by its host path.
    (tree.package / "data" / "escape.json").symlink_to(tree.beside)
    for hidden in (tree.other, tree.beside, tree.top, tree.task_gt, tree.package / "computed_gt.json"):
        hidden.parent.mkdir(parents=True, exist_ok=True)
        hidden.write_text(json.dumps({"primary_gt": SECRET}))
    return tree


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    return _make_tree(tmp_path_factory.mktemp("sandbox"))


@pytest.fixture(scope="module")
def sandbox(tree: Tree) -> Iterator[PythonSandbox]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", f"sk-{SECRET}")
        patch.setenv("HF_TOKEN", f"hf_{SECRET}")
        with PythonSandbox(tree.package, LIMITS) as box:
            yield box


def contained(box: PythonSandbox, code: str) -> ExecResult:
    """Run an attempt, check nothing hidden came out, and check the harness still answers after it."""
    result = box.run(PROBE + code)
    assert SECRET not in result.stdout + result.stderr
    assert " LEAK " not in result.stdout, result.stdout
    alive = box.run("print('alive')")
    assert alive.ok and alive.stdout == "alive\n", alive
    return result


def blocked(box: PythonSandbox, action: str) -> ExecResult:
    result = contained(box, f"attempt('try', lambda: {action})")
    assert "try BLOCKED" in result.stdout, result
    return result


# ---- what model code can do ----


def test_scientific_stack_and_loaders_read_the_package(sandbox: PythonSandbox) -> None:
    code = (
        "import os, pandas, xarray, numpy\n"
        "from loaders.package import EventPackage\n"
        "frame = pandas.read_csv('/package/data/obs.csv')\n"
        "print(float(xarray.Dataset.from_dataframe(frame).v.mean()), numpy.__name__)\n"
        "print(sorted(EventPackage('/package').list_files()), os.getcwd())\n"
    )
    result = sandbox.run(code)
    assert result.ok, result
    assert result.stdout.splitlines() == ["3.0 numpy", "['data/obs.csv', 'metadata/event.json'] /scratch"]


def test_package_relative_and_repository_paths_work_from_scratch(sandbox: PythonSandbox) -> None:
    code = (
        "print(open('data/obs.csv').read() == open("
        "'event_packages/standard_event_packages/packages/CSX-900/data/obs.csv').read())"
    )
    assert sandbox.run(code).stdout == "True\n"


def test_scratch_files_persist_across_calls_but_variables_do_not(sandbox: PythonSandbox) -> None:
    assert sandbox.run("open('notes.txt', 'w').write('kept')\nvalue = 1").ok
    assert sandbox.run("print(open('/scratch/notes.txt').read())").stdout == "kept\n"
    assert "NameError" in sandbox.run("print(value)").stderr


def test_errors_and_exit_codes_are_reported(sandbox: PythonSandbox) -> None:
    crash = sandbox.run("1 / 0")
    assert not crash.ok and crash.returncode == 1 and "ZeroDivisionError" in crash.stderr
    assert crash.killed_reason is None
    assert sandbox.run("raise SystemExit(3)").returncode == 3


def test_a_dead_worker_is_restarted(tree: Tree) -> None:
    with PythonSandbox(tree.package, LIMITS) as box:
        box.close()  # as if the worker had died
        result = box.run("print('back')")
    assert result.ok and result.stdout == "back\n" and box.restarts == 1


# ---- the escape suite: reading what must stay hidden ----


def test_root_holds_only_the_sandbox_tree(sandbox: PythonSandbox) -> None:
    result = contained(sandbox, "import os; print(sorted(os.listdir('/')))")
    expected = [
        "bin",
        "dev",
        "etc",
        "event_packages",
        "lib",
        "lib64",
        "opt",
        "package",
        "proc",
        "root",
        "sbin",
        "scratch",
        "tmp",
        "usr",
    ]
    assert result.stdout.strip() == repr(expected)


def test_no_hidden_name_anywhere_outside_system_folders(sandbox: PythonSandbox) -> None:
    code = (
        "import os\n"
        "for top in ('/package', '/opt', '/etc', '/scratch', '/dev', '/root'):\n"
        "    for folder, dirs, files in os.walk(top):\n"
        "        for name in dirs + files:\n"
        "            if 'computed_gt' in name or 'CSX-901' in name or name == 'tasks':\n"
        "                print('try LEAK', folder, name)\n"
    )
    contained(sandbox, code)


@pytest.mark.parametrize(
    "path",
    [
        "/package/../computed_gt.json",
        "../computed_gt.json",
        "../../../../computed_gt.json",
        "/package/data/escape.json",
        "/package/../CSX-901/data/secret.txt",
        "/package/computed_gt.json",
    ],
)
def test_parent_and_relative_paths(sandbox: PythonSandbox, path: str) -> None:
    blocked(sandbox, f"open({path!r}).read()")


@pytest.mark.parametrize("name", ["beside", "top", "task_gt", "other"])
def test_host_paths_of_hidden_files_and_other_packages(sandbox: PythonSandbox, tree: Tree, name: str) -> None:
    blocked(sandbox, f"open({str(getattr(tree, name))!r}).read()")


def test_symlinks_made_in_scratch_point_nowhere(sandbox: PythonSandbox, tree: Tree) -> None:
    code = (
        "import os\n"
        f"os.symlink({str(tree.beside)!r}, 'out')\n"
        "os.symlink('/', 'up')\n"
        "attempt('direct', lambda: open('out').read())\n"
        f"attempt('through root', lambda: open('up/../..' + {str(tree.top)!r}).read())\n"
    )
    result = contained(sandbox, code)
    assert "direct BLOCKED" in result.stdout and "through root BLOCKED" in result.stdout


@pytest.mark.parametrize("proc", ["/proc/self/root", "/proc/1/root", "/proc/self/cwd/../.."])
def test_proc_root_links(sandbox: PythonSandbox, tree: Tree, proc: str) -> None:
    blocked(sandbox, f"open({proc!r} + {str(tree.beside)!r}).read()")


def test_proc_1_environ(sandbox: PythonSandbox) -> None:
    blocked(sandbox, "open('/proc/1/environ', 'rb').read()")


def test_parent_keys_never_reach_model_code(sandbox: PythonSandbox) -> None:
    result = contained(sandbox, "import os, json; print(json.dumps(dict(os.environ)))")
    environment = json.loads(result.stdout)
    assert "OPENAI_API_KEY" not in environment and "HF_TOKEN" not in environment
    assert {key: environment.get(key) for key in SANDBOX_ENV} == SANDBOX_ENV
    # Only what the warm imports themselves set (rasterio and pyproj point GDAL and PROJ at certifi).
    extra = set(environment) - set(SANDBOX_ENV) - {"LC_CTYPE"}
    assert all(key.startswith(("GDAL_", "PROJ_")) for key in extra), extra


def test_project_source_is_not_importable_or_readable(sandbox: PythonSandbox) -> None:
    code = (
        "import os, loaders\n"
        "attempt('dataset', lambda: __import__('dataset'))\n"
        "attempt('evaluator', lambda: __import__('evaluator'))\n"
        f"attempt('source', lambda: open({str(PROJECT_ROOT / 'dataset' / 'gt_runner.py')!r}).read())\n"
        f"attempt('build', lambda: os.listdir({str(PROJECT_ROOT / '.cache')!r}))\n"
        "print(os.listdir(os.path.dirname(os.path.dirname(loaders.__file__))))\n"
    )
    result = contained(sandbox, code)
    for label in ("dataset", "evaluator", "source", "build"):
        assert f"{label} BLOCKED" in result.stdout
    assert result.stdout.splitlines()[-1] == "['loaders']"


def test_loaders_cannot_open_another_package(sandbox: PythonSandbox, tree: Tree) -> None:
    code = (
        "from loaders.package import EventPackage\n"
        "attempt('beside', lambda: EventPackage('/package/../CSX-901').list_files())\n"
        f"attempt('host', lambda: EventPackage({str(tree.other.parents[1])!r}).list_files())\n"
    )
    result = contained(sandbox, code)
    assert "beside BLOCKED" in result.stdout and "host BLOCKED" in result.stdout


def test_home_folders_are_absent(sandbox: PythonSandbox) -> None:
    result = contained(
        sandbox, "import os\nattempt('home', lambda: os.listdir('/home'))\nprint(os.listdir('/root'))"
    )
    assert "home BLOCKED" in result.stdout and result.stdout.splitlines()[-1] == "['.pyenv']"


# ---- the escape suite: network, processes, privileges ----


@pytest.fixture
def local_server() -> Iterator[tuple[int, list[str]]]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    accepted: list[str] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, peer = server.accept()
            except TimeoutError:
                continue
            accepted.append(str(peer))
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


def test_no_tcp_to_a_local_server(sandbox: PythonSandbox, local_server: tuple[int, list[str]]) -> None:
    port, accepted = local_server
    blocked(sandbox, f"__import__('socket').create_connection(('127.0.0.1', {port}), timeout=1)")
    assert accepted == []


@pytest.mark.parametrize(
    "action",
    [
        "__import__('socket').create_connection(('1.1.1.1', 53), timeout=1)",
        "__import__('socket').getaddrinfo('huggingface.co', 443)",
        "__import__('socket').socket(__import__('socket').AF_UNIX).connect('\\0earthverse')",
    ],
)
def test_no_outside_network(sandbox: PythonSandbox, action: str) -> None:
    blocked(sandbox, action)


def test_subprocess_runs_but_sees_nothing_hidden(sandbox: PythonSandbox, tree: Tree) -> None:
    code = (
        "import subprocess\n"
        f"done = subprocess.run(['cat', {str(tree.beside)!r}], capture_output=True, text=True)\n"
        "print(done.returncode, done.stdout, done.stderr)\n"
    )
    result = contained(sandbox, code)
    assert result.ok and not result.stdout.startswith("0")


def test_no_process_outlives_its_call(sandbox: PythonSandbox) -> None:
    code = (
        "import os, subprocess\n"
        "subprocess.Popen(['sleep', '1000'], start_new_session=True)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    __import__('time').sleep(1000)\n"
    )
    assert sandbox.run(code).ok
    census = (
        "import os; print([p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())])"
    )
    assert contained(sandbox, census).stdout == "[]\n"


def test_fork_bomb(sandbox: PythonSandbox) -> None:
    result = contained(sandbox, "import os\nwhile True:\n    os.fork()\n")
    assert result.killed_reason == "process limit (32)"


def test_memory_bomb_at_once(sandbox: PythonSandbox) -> None:
    result = contained(sandbox, "import numpy\nblock = numpy.ones(1 << 30)\n")
    assert result.killed_reason == "memory limit (256 MB)"


def test_memory_bomb_growing(sandbox: PythonSandbox) -> None:
    result = contained(sandbox, "chunks = []\nwhile True:\n    chunks.append(bytearray(1 << 24))\n")
    assert result.killed_reason == "memory limit (256 MB)"


def test_infinite_loop_hits_the_cpu_limit(tree: Tree) -> None:
    # A wall limit far above the CPU one, so a loaded machine cannot turn this into a wall timeout.
    with PythonSandbox(tree.package, LIMITS.model_copy(update={"wall_seconds": 20, "cpu_seconds": 1})) as box:
        result = contained(box, "while True:\n    pass\n")
    assert not result.ok and result.killed_reason == "cpu time limit (1 s)"


def test_sleeping_forever_hits_the_wall_limit(sandbox: PythonSandbox) -> None:
    result = contained(sandbox, "import time\ntime.sleep(1000)\n")
    assert result.timed_out and result.killed_reason == "wall time limit (3 s)"
    assert result.seconds < LIMITS.wall_seconds + 2


def test_a_1_gb_print_is_cut_off(sandbox: PythonSandbox) -> None:
    code = "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\n"
    result = contained(sandbox, code)
    assert result.truncated and result.killed_reason.startswith("output limit")
    assert len(result.stdout) == LIMITS.max_output_bytes


@pytest.mark.parametrize(
    "target",
    [
        "/package/data/new.txt",
        "/package/data/obs.csv",
        "/etc/passwd",
        "/usr/evil",
        "/opt/earthverse/loaders/x.py",
        "/x",
    ],
)
def test_no_writing_outside_scratch(sandbox: PythonSandbox, tree: Tree, target: str) -> None:
    blocked(sandbox, f"open({target!r}, 'a').write('x')")
    assert not (tree.package / "data" / "new.txt").exists()
    assert (tree.package / "data" / "obs.csv").read_text().startswith("t,v")


def test_large_files_and_many_descriptors_are_limited(sandbox: PythonSandbox) -> None:
    big = contained(sandbox, "open('big.bin', 'wb').write(b'x' * (16 << 20))")
    assert big.killed_reason == "file size limit (8 MB)"
    many = contained(sandbox, "files = [open('/dev/null') for _ in range(1000)]")
    assert many.killed_reason == "open file limit (64)"


@pytest.mark.parametrize(
    "action",
    [
        "__import__('os').kill(1, 9)",
        "__import__('os').chroot('/scratch')",
        "__import__('os').setuid(0)",
        "open('/proc/sysrq-trigger', 'w').write('b')",
        "__import__('ctypes').CDLL(None).mount(b'/', b'/scratch', None, 4096, None) == 0 or 1 / 0",
    ],
)
def test_no_privileged_operations(sandbox: PythonSandbox, action: str) -> None:
    blocked(sandbox, action)


def test_scratch_space_is_capped(sandbox: PythonSandbox) -> None:
    code = "for index in range(8):\n    open(f'fill{index}.bin', 'wb').write(b'x' * (7 << 20))\n"
    result = contained(sandbox, code)
    assert result.killed_reason == "scratch space limit (32 MB)"
    assert sandbox.run("import glob, os\nfor name in glob.glob('fill*.bin'):\n    os.remove(name)").ok


def test_worker_command_line_names_no_host_path(sandbox: PythonSandbox, tree: Tree) -> None:
    result = contained(sandbox, "print(open('/proc/1/cmdline', 'rb').read().decode(errors='replace'))")
    assert str(tree.release) not in result.stdout and "root" not in result.stdout.replace("/root/.pyenv", "")


def test_no_key_of_the_host_session_keyring(sandbox: PythonSandbox) -> None:
    result = contained(
        sandbox, "print(open('/proc/keys').read() if __import__('os').path.exists('/proc/keys') else '')"
    )
    assert result.ok and "user" not in result.stdout.split()


def test_closing_its_streams_does_not_escape_the_wall_limit(sandbox: PythonSandbox) -> None:
    result = contained(sandbox, "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(1000)\n")
    assert result.timed_out and result.seconds < LIMITS.wall_seconds + 2


def test_a_hung_worker_is_killed_and_replaced(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(python_exec, "REPLY_GRACE_S", 0.5)
    with PythonSandbox(tree.package, LIMITS.model_copy(update={"wall_seconds": 0.5})) as box:
        assert box._process is not None
        launcher = box._process.pid  # `unshare`; its only child is the worker
        worker_pid = int(Path(f"/proc/{launcher}/task/{launcher}/children").read_text().split()[0])
        os.kill(worker_pid, signal.SIGSTOP)
        lost = box.run("print('never')")
        assert lost.timed_out and "restarted" in (lost.killed_reason or "") and box.restarts == 1
        assert _dead(worker_pid)
        assert box.run("print('back')").stdout == "back\n"


def _dead(pid: int) -> bool:
    """Gone, or a zombie left for the host's init to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_worker_that_cannot_start_raises_with_its_error(
    tree: Tree, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken_worker.py"
    broken.write_text("raise SystemExit('no namespaces today')\n")
    monkeypatch.setattr(python_exec, "WORKER_PATH", broken)
    with pytest.raises(SandboxError, match="no namespaces today"):
        PythonSandbox(tree.package, LIMITS).start()
