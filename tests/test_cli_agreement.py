"""`earthverse agreement` end to end over every recorded run of the real release."""

from __future__ import annotations

import json

from evaluator.cli import main


def test_agreement_over_all_recorded_runs_writes_the_figures(built_release, source_release, tmp_path, capsys):
    out = tmp_path / "agreement.json"
    trajectories = source_release.trajectories_dir
    code = main(
        ["agreement", "--release", str(built_release), "--trajectories", str(trajectories), "--out", str(out)]
    )
    assert code == 0
    figures = json.loads(out.read_text())
    assert figures["n"] == 1591
    assert figures["pearson"] >= 0.80 and figures["mae"] <= 15
    assert len(figures["worst"]) == 20 and "by_task_type" in figures
    assert figures["paper_holistic"]["n"] == 1591
    printed = capsys.readouterr().out
    assert printed.startswith("overall") and "runs that disagree most" in printed
    assert "reference: paper unit accuracy vs its H" in printed


def test_agreement_without_recorded_runs_is_a_clear_error(built_release, tmp_path, capsys):
    code = main(["agreement", "--release", str(built_release), "--trajectories", str(tmp_path)])
    assert code == 2 and "no recorded runs" in capsys.readouterr().err
