from __future__ import annotations

import json
import shutil
import socket
import threading
from pathlib import Path

import pytest

from dataset.gt_runner import explain_failure, ground_task, network_isolated
from dataset.package_audit import FileAudit, PackageAudit
from loaders import layout


@pytest.fixture
def one_task_release(built_release, tmp_path):
    """A copy of CSX-001's package and its Q1 task folder, whose program a test may rewrite."""
    out = tmp_path / "release"
    for source, target in (
        (layout.package_dir(built_release, "CSX-001"), layout.package_dir(out, "CSX-001")),
        (
            layout.task_dir(built_release, "CSX-001", "CSX-001_Q1"),
            layout.task_dir(out, "CSX-001", "CSX-001_Q1"),
        ),
    ):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target)
    return out


def _program(out, text):
    (layout.task_dir(out, "CSX-001", "CSX-001_Q1") / "compute_gt.py").write_text(text)


def test_real_program_regenerates_its_ground_truth(one_task_release):
    result = ground_task(one_task_release, "CSX-001", "CSX-001_Q1")
    assert result.status == "regenerated", result.reason


def test_changed_value_is_a_mismatch_naming_the_field(one_task_release):
    folder = layout.task_dir(one_task_release, "CSX-001", "CSX-001_Q1")
    recorded = json.loads((folder / "computed_gt.json").read_text())
    recorded["primary_gt"]["selected_calculation"]["peak_daily_tmax_c"] = 40.0
    (folder / "computed_gt.json").write_text(json.dumps(recorded))
    result = ground_task(one_task_release, "CSX-001", "CSX-001_Q1")
    assert result.status == "mismatch"
    assert [d.path for d in result.differences] == ["selected_calculation.peak_daily_tmax_c"]


def test_crashing_program_fails_with_its_error(one_task_release):
    _program(one_task_release, "raise RuntimeError('the anchor file disagrees')\n")
    result = ground_task(one_task_release, "CSX-001", "CSX-001_Q1")
    assert result.status == "failed"
    assert result.reason == "RuntimeError: the anchor file disagrees"


def test_hanging_program_is_killed_at_the_time_limit_with_its_children(one_task_release, tmp_path):
    pid_file = tmp_path / "child.pid"
    _program(
        one_task_release,
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "while True: pass\n",
    )
    result = ground_task(one_task_release, "CSX-001", "CSX-001_Q1", timeout_s=3)
    assert result.status == "failed" and result.reason == "timed out after 3 s"
    child = int(pid_file.read_text())
    assert not Path(f"/proc/{child}").exists() or "zombie" in Path(f"/proc/{child}/status").read_text()


def test_program_that_writes_nothing_fails(one_task_release):
    _program(one_task_release, "print('done')\n")
    result = ground_task(one_task_release, "CSX-001", "CSX-001_Q1")
    assert result.status == "failed" and "wrote no computed_gt.json" in result.reason


def test_program_cannot_change_the_release(one_task_release):
    package = layout.package_dir(one_task_release, "CSX-001")
    anchor = next((package / "data" / "event_reports").glob("*Locked_event_anchor*"))
    before = anchor.read_bytes()
    _program(
        one_task_release,
        "from pathlib import Path\n"
        "root = Path(__file__).resolve().parents[3]\n"
        "for p in (root / 'event_packages').rglob('*Locked_event_anchor*'): p.write_text('overwritten')\n",
    )
    ground_task(one_task_release, "CSX-001", "CSX-001_Q1")
    assert anchor.read_bytes() == before


@pytest.mark.skipif(not network_isolated(), reason="unshare -n is not available on this machine")
def test_program_has_no_network(one_task_release):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    threading.Thread(target=lambda: server.accept(), daemon=True).start()
    _program(
        one_task_release,
        f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)\n",
    )
    result = ground_task(one_task_release, "CSX-001", "CSX-001_Q1")
    server.close()
    assert result.status == "failed" and (
        "ConnectionRefusedError" in result.reason or "OSError" in result.reason
    )


def test_failure_explanations_name_the_cause():
    audit = PackageAudit(
        event_id="CSX-063",
        files=[
            FileAudit(relative_path="data/remote_sensing/r.zip", status="withheld", reason="GeoTIFF original")
        ],
    )
    rasterio = (
        "rasterio.errors.RasterioIOError: /tmp/x/event_packages/standard_event_packages/packages/"
        "CSX-063/data/remote_sensing/r.zip: No such file or directory"
    )
    assert explain_failure(rasterio, audit) == "needs data/remote_sensing/r.zip: GeoTIFF original"
    module = "ModuleNotFoundError: No module named 'gt_semantic_overrides'"
    assert "'gt_semantic_overrides', a module of the authors' tree" in explain_failure(module, audit)
    assert explain_failure("", None) == "no error output"
