"""`earthverse demo`: the scripted agent on the embedded, invented DEMO package, offline, scored."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.cli import main
from evaluator.demo.builder import DEMO_EVENT, build_demo_release
from evaluator.scoring.scores_io import read_scores
from evaluator.traces.io import read_submission
from loaders.release import open_ground_truth, open_release


def test_the_demo_release_is_a_layout_the_loaders_read(tmp_path: Path) -> None:
    out = build_demo_release(tmp_path / "release")

    release = open_release(out)
    hidden = open_ground_truth(out)

    assert [task.task_id for task in release.tasks] == [f"{DEMO_EVENT}_Q1", f"{DEMO_EVENT}_Q2"]
    assert "DEMO" in release.events[DEMO_EVENT].event_name
    assert sorted(release.package(DEMO_EVENT).list_files("data")) == [
        "data/event_reports/demo_situation_report.md",
        "data/exposure_impact/demo_district_impacts.json",
        "data/physical_hazard/demo_river_gauge.csv",
    ]
    assert all(entry.relative_path.startswith("data/") for entry in release.manifest(DEMO_EVENT))
    assert hidden[f"{DEMO_EVENT}_Q1"].ground_truth.primary_gt["total_flooded_households"] == 3120


def test_the_demo_runs_scores_and_says_where_everything_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EARTHVERSE_SOURCE_ARCHIVE", str(tmp_path / "no-such-archive.tar.xz"))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "demo"

    assert main(["demo", "--out", str(out)]) == 0

    printed = capsys.readouterr().out
    assert f"traces: {out / 'run' / 'traces'}" in printed
    assert f"scores: {out / 'run' / 'scores.jsonl'}" in printed
    submission = read_submission(out / "run" / "submission.jsonl")
    assert {trace.run_status for trace in submission.traces} == {"ok"}
    assert all(trace.steps[0].action == "list_package_files" for trace in submission.traces)
    scores = read_scores(out / "run" / "scores.jsonl")
    assert [score.status for score in scores] == ["scored", "scored"]
    q1 = next(score for score in scores if score.task_id.endswith("Q1"))
    assert 0 < q1.u < 100  # the baseline finds the gauge file but does not compute the peak


def test_the_demo_refuses_a_folder_in_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "release").mkdir()
    (tmp_path / "release" / "mine.txt").write_text("keep")

    assert main(["demo", "--out", str(tmp_path)]) == 2
    assert "not a new or empty folder; the demo writes release/ and run/ there" in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    (other / "run").write_text("a file")

    assert main(["demo", "--out", str(other)]) == 2
    assert sorted(path.name for path in other.iterdir()) == ["run"]  # nothing built before refusing
