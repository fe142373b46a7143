"""End to end: the real release builds with the figures the issue asks for; broken input is reported
per task and never leaves a partial output behind."""

from __future__ import annotations

import json
import shutil

import pytest

import dataset.build
from dataset.build import REPORT_JSON, STAMP_NAME, build_release, built_version
from dataset.source import open_source
from evaluator.cli import main
from loaders import layout
from loaders.atomic import ForeignFolderError
from loaders.release import open_release
from tests.mini_release import make_mini_source


def _report(out):
    return json.loads((out / REPORT_JSON).read_text())


def test_real_release_totals(built_release):
    totals = _report(built_release)["totals"]
    assert totals["tasks"] == 405 and totals["events"] == 199
    assert totals["regenerated"] >= 390
    assert totals["regenerated"] + totals["mismatch"] + totals["failed"] == 405
    assert 0 < totals["release_ready"] <= totals["regenerated"]
    assert (built_release / "release_report.md").read_text().startswith("# EarthVerse release report")


def test_empty_package_files_are_named_in_the_report(built_release):
    report = _report(built_release)
    named = {
        (task["event_id"], path)
        for task in report["tasks"].values()
        for path in task["gates"]["package_assembly"]["details"]["empty"]
    }
    on_disk = {
        (path.relative_to(built_release / "packages").parts[0], path.relative_to(package).as_posix())
        for package in (built_release / "packages").iterdir()
        for path in package.rglob("*")
        if path.is_file() and path.stat().st_size == 0
    }
    assert named == on_disk and named
    assert report["totals"]["files_empty"] == len(named)
    event_with_empty = next(event for event, _ in named)
    gate = next(
        task["gates"]["package_assembly"]
        for task in report["tasks"].values()
        if task["event_id"] == event_with_empty
    )
    assert " empty)" in gate["reason"]


def test_every_task_not_regenerated_names_a_precise_cause(built_release):
    tasks = _report(built_release)["tasks"]
    grounding = {task_id: task["gates"]["executable_grounding"] for task_id, task in tasks.items()}
    failing = {task_id: gate for task_id, gate in grounding.items() if not gate["passed"]}
    assert failing
    for task_id, gate in failing.items():
        assert gate["reason"] and gate["reason"] not in ("failed", "mismatch"), task_id
    assert "GeoTIFF raster original" in grounding["CSX-063_Q2"]["reason"]


def test_canonical_layout_holds_every_file(built_release):
    task = built_release / "tasks" / "CSX-001" / "CSX-001_Q1"
    names = sorted(path.name for path in task.iterdir())
    assert names == sorted(["question_en.md", "task.json", *layout.HIDDEN_TASK_FILES])
    assert "solution" not in json.loads((task / "task.json").read_text())
    metadata = built_release / "packages" / "CSX-001" / "metadata"
    header = (metadata / "files.csv").read_text().splitlines()[0].split(",")
    assert {"file_id", "relative_path", "data_category", "url", "bytes", "file_status"} <= set(header)
    assert json.loads((metadata / "event.json").read_text())["package_id"] == "CSX-001"


def test_rebuild_with_unchanged_input_is_up_to_date(built_release, source_archive):
    result = build_release(source_archive, built_release)
    assert result.up_to_date and result.report.totals.tasks == 405


def test_built_version_is_the_version_of_every_form_of_the_build(built_release, source_release):
    version = built_version(source_release)
    assert version == open_release(built_release).version
    assert version == open_release(built_release / "hub" / "public").version


def test_built_version_follows_the_published_content_only(source_release, tmp_path):
    def unpublished(record):  # files.csv has no column for it: the build drops it
        record["event_files"][0]["viewer_path"] = "elsewhere"

    def question(record):
        record["question"] += " (reworded)"

    plain = built_version(open_source(make_mini_source(source_release, tmp_path / "plain")))
    unseen = make_mini_source(source_release, tmp_path / "unseen", edit=unpublished)
    assert built_version(open_source(unseen)) == plain
    reworded = make_mini_source(source_release, tmp_path / "reworded", edit=question)
    version = built_version(open_source(reworded))
    assert version != plain
    assert version == open_release(build_release(reworded, tmp_path / "out", timeout_s=30).out).version


def test_a_damaged_build_is_not_up_to_date_and_is_rebuilt(source_release, tmp_path):
    mini = make_mini_source(source_release, tmp_path / "src")
    out = build_release(mini, tmp_path / "out", timeout_s=30).out
    tasks_table = out / "hub" / "public" / "tasks.parquet"
    whole = tasks_table.read_bytes()
    tasks_table.unlink()
    shutil.rmtree(out / "packages" / "CSX-001" / "data")

    again = build_release(mini, out, timeout_s=30)

    assert not again.up_to_date
    assert tasks_table.read_bytes() == whole and (out / "packages" / "CSX-001" / "data").is_dir()
    assert build_release(mini, out, timeout_s=30).up_to_date


def test_crashing_and_hanging_programs_fail_their_gate_and_the_build_finishes(source_release, tmp_path):
    def edit(record):
        programs = {
            "CSX-001_Q2": "raise SystemExit('cannot parse the anchor')\n",
            "CSX-001_Q3": "while True: pass\n",
        }
        record["compute_gt_py"] = programs.get(record["task_id"], record["compute_gt_py"])

    mini = make_mini_source(source_release, tmp_path / "src", edit=edit)
    result = build_release(mini, tmp_path / "out", timeout_s=3)
    gates = {task_id: task.gates["executable_grounding"] for task_id, task in result.report.tasks.items()}
    assert gates["CSX-001_Q1"].passed
    assert gates["CSX-001_Q2"].reason == "cannot parse the anchor"
    assert gates["CSX-001_Q3"].reason == "timed out after 3 s"
    assert result.report.totals.failed == 2 and result.report.totals.regenerated == 1


def test_missing_file_and_escaping_manifest_path_fail_assembly(source_release, tmp_path):
    def edit(record):
        record["event_files"][1]["relative_path"] = "../../outside.json"

    mini = make_mini_source(source_release, tmp_path / "src", edit=edit)
    removed = next((mini / "packages" / "CSX-001" / "data" / "physical_hazard").glob("*Open-Meteo*"))
    removed.unlink()
    report = build_release(mini, tmp_path / "out", timeout_s=30).report
    assembly = report.tasks["CSX-001_Q1"].gates["package_assembly"]
    assert not assembly.passed
    assert "../../outside.json: unsafe_path (manifest path escapes the package)" in assembly.reason
    assert f"data/physical_hazard/{removed.name}: missing" in assembly.reason
    assert not report.tasks["CSX-001_Q1"].gates["executable_grounding"].passed
    assert not (tmp_path / "outside.json").exists()


def test_a_failing_build_leaves_nothing_that_looks_complete(source_release, tmp_path, monkeypatch):
    mini = make_mini_source(source_release, tmp_path / "src")

    def broken_hub(out, **options):
        raise RuntimeError("disk full")

    monkeypatch.setattr(dataset.build, "build_hub", broken_hub)
    with pytest.raises(RuntimeError, match="disk full"):
        build_release(mini, tmp_path / "out", timeout_s=30)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["src"]


def test_a_failed_rebuild_keeps_the_previous_build(source_release, tmp_path, monkeypatch):
    mini = make_mini_source(source_release, tmp_path / "src")
    out = build_release(mini, tmp_path / "out", timeout_s=30).out
    stamp = (out / STAMP_NAME).read_text()

    def broken_hub(out, **options):
        raise RuntimeError("boom")

    monkeypatch.setattr(dataset.build, "build_hub", broken_hub)
    with pytest.raises(RuntimeError):
        build_release(mini, out, timeout_s=30, force=True)
    assert (out / STAMP_NAME).read_text() == stamp
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out", "src"]


def test_build_refuses_to_replace_a_folder_that_is_not_a_build(source_release, tmp_path):
    mini = make_mini_source(source_release, tmp_path / "src")
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    with pytest.raises(ForeignFolderError, match="not an earlier EarthVerse build"):
        build_release(mini, precious)
    assert (precious / "thesis.tex").read_text() == "years of work"


def test_cli_reports_a_corrupt_archive_in_one_line(source_archive, tmp_path, capsys):
    broken = tmp_path / "release.tar.xz"
    broken.write_bytes(source_archive.read_bytes()[:500_000])
    code = main(
        ["build", "--source", str(broken), "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "c")]
    )
    assert code == 2
    assert "release.tar.xz: cannot unpack the source archive" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
