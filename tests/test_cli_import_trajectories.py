from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from dataset.build import built_version
from dataset.source import open_source
from evaluator.cli import main
from evaluator.traces import read_submission
from evaluator.traces.recorded import trace_to_recorded
from loaders.release import open_release

SYSTEMS = 25
RECORDED_RUNS = 1591


@pytest.fixture(scope="module")
def imported(source_archive, tmp_path_factory) -> tuple[Path, str]:
    """One import of the real archive, shared by the tests that only read it; (out folder, stdout)."""
    out = tmp_path_factory.mktemp("import") / "submissions"
    stdout = io.StringIO()
    with redirect_stdout(stdout):
        assert main(["import-trajectories", "--source", str(source_archive), "--out", str(out)]) == 0
    return out, stdout.getvalue()


@pytest.fixture(scope="module")
def release_version(built_release) -> str:
    """The version of the build of the archive the tests import."""
    return open_release(built_release).version


def _mini_source(source_release, target: Path, runs: tuple[str, ...]) -> Path:
    """A folder source with the real models.json, a few real recorded runs and their task records."""
    for folder in ("tasks", "packages", "paper_results"):
        (target / folder).mkdir(parents=True)
    shutil.copy(source_release.root / "paper_results" / "models.json", target / "paper_results")
    for run in runs:
        destination = target / "trajectories" / f"{run}.json"
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source_release.trajectories_dir / f"{run}.json", destination)
        task_id = Path(run).name
        shutil.copy(source_release.tasks_dir / f"{task_id}.json", target / "tasks")
    return target


def test_import_writes_one_submission_per_system_with_every_run(imported, source_release, release_version):
    out, stdout = imported
    assert stdout.strip() == stdout.strip().splitlines()[0]
    assert f"{SYSTEMS} submissions, {RECORDED_RUNS} traces imported" in stdout
    assert f"dataset version {release_version}" in stdout
    paper = {
        entry["id"]: entry
        for entry in json.loads((source_release.root / "paper_results/models.json").read_text())["models"]
    }
    submissions = sorted(out.glob("*/submission.jsonl"))
    assert len(submissions) == SYSTEMS
    total = 0
    for path in submissions:
        submission = read_submission(path)
        system_id = path.parent.name
        recorded = sorted(p.stem for p in (source_release.trajectories_dir / system_id).glob("*.json"))
        assert [trace.task_id for trace in submission.traces] == recorded
        metadata = submission.metadata
        assert (metadata.system_id, metadata.system_name) == (system_id, paper[system_id]["name"])
        assert (metadata.harness, metadata.organisation, metadata.contact) == ("unknown",) * 3
        assert metadata.dataset_version == release_version
        assert {trace.dataset_version for trace in submission.traces} == {release_version}
        total += len(submission.traces)
    assert total == RECORDED_RUNS


def test_import_index_and_schemas(imported, release_version):
    out, _ = imported
    index = json.loads((out / "index.json").read_text())
    assert index["runs"] == RECORDED_RUNS and len(index["systems"]) == SYSTEMS
    assert index["dataset_version"] == release_version
    assert index["schema_files"] == ["schema/trace.schema.json", "schema/submission.schema.json"]
    first = index["systems"][0]
    assert first == {
        "system_id": "claude-fable-5",
        "system_name": "Claude Fable 5",
        "rank": 1,
        "runs": 152,
        "submission": "claude-fable-5/submission.jsonl",
    }
    assert sum(system["runs"] for system in index["systems"]) == RECORDED_RUNS
    for name in index["schema_files"]:
        assert json.loads((out / name).read_text())["title"] in ("Trace", "Submission")
    assert sorted(path.name for path in out.iterdir() if not path.is_dir()) == ["index.json"]
    assert not list(out.parent.glob(".*"))


def test_folder_source_import_and_rerun_replaces_the_previous_import(
    source_release, release_version, tmp_path, capsys
):
    source = _mini_source(source_release, tmp_path / "source", ("gpt-5-5/CSX-321_Q2", "gpt-4o/CSX-175_Q2"))
    out = tmp_path / "out"
    arguments = ["import-trajectories", "--source", str(source), "--out", str(out)]
    assert main(arguments) == 0
    (source / "trajectories" / "gpt-4o" / "CSX-175_Q2.json").unlink()
    assert main(arguments) == 0
    index = json.loads((out / "index.json").read_text())
    # The version of what a build of this two-task source would publish, not of the full release.
    assert index["dataset_version"] == built_version(open_source(source)) != release_version
    assert [(system["system_id"], system["runs"]) for system in index["systems"]] == [
        ("gpt-4o", 0),
        ("gpt-5-5", 1),
    ]
    assert "2 submissions, 1 traces imported" in capsys.readouterr().out
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out", "source"]


def test_a_source_without_task_records_has_no_release_version(source_release, tmp_path, capsys):
    source = _mini_source(source_release, tmp_path / "source", ("gpt-5-5/CSX-321_Q2",))
    (source / "tasks" / "CSX-321_Q2.json").unlink()
    out = tmp_path / "out"
    assert main(["import-trajectories", "--source", str(source), "--out", str(out)]) == 2
    assert "tasks: no task records (*.json) found" in capsys.readouterr().err
    assert not out.exists()


def test_malformed_run_fails_naming_the_file_and_writes_nothing(source_release, tmp_path, capsys):
    source = _mini_source(source_release, tmp_path / "source", ("gpt-5-5/CSX-321_Q2",))
    broken = source / "trajectories" / "gpt-5-5" / "CSX-321_Q2.json"
    broken.write_text(broken.read_text(encoding="utf-8")[:5000], encoding="utf-8")
    out = tmp_path / "out"
    assert main(["import-trajectories", "--source", str(source), "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("earthverse import-trajectories: error: ")
    assert "trajectories/gpt-5-5/CSX-321_Q2.json: not a valid RecordedRun" in error
    assert sorted(path.name for path in tmp_path.iterdir()) == ["source"]


def test_unlisted_system_and_foreign_out_folder_are_refused(source_release, tmp_path, capsys):
    source = _mini_source(source_release, tmp_path / "source", ("gpt-5-5/CSX-321_Q2",))
    (source / "trajectories" / "mystery-agent").mkdir()
    assert main(["import-trajectories", "--source", str(source), "--out", str(tmp_path / "out")]) == 2
    assert "system 'mystery-agent' is not listed in paper_results/models.json" in capsys.readouterr().err
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert main(["import-trajectories", "--source", str(source), "--out", str(foreign)]) == 2
    assert "not empty and not an earlier import" in capsys.readouterr().err
    assert [path.name for path in foreign.iterdir()] == ["notes.txt"]


def test_imported_traces_give_back_the_recorded_runs(imported, source_release):
    out, _ = imported
    for trace in read_submission(out / "gpt-5-5" / "submission.jsonl").traces:
        path = source_release.trajectories_dir / "gpt-5-5" / f"{trace.task_id}.json"
        assert trace_to_recorded(trace) == json.loads(path.read_text(encoding="utf-8"))
