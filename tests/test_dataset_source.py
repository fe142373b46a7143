from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from dataset.source import (
    ARCHIVE_ENV,
    COMPLETE_MARKER,
    SourceError,
    default_archive,
    open_source,
    recorded_runs_dir,
)
from loaders.cache import file_sha256
from tests.mini_release import make_mini_source

RELEASE_SHA256 = "26cd1d50ffe04ecae2d89fbb020ce201383556c34ebc661ec563dd53dec3a7e7"


def test_archive_unpacks_once_into_a_cache_keyed_by_its_hash(source_archive, source_release):
    assert source_release.sha256 == RELEASE_SHA256 == file_sha256(source_archive)
    assert source_release.root.parent.name == f"source-{RELEASE_SHA256[:16]}"
    assert (source_release.root.parent / COMPLETE_MARKER).is_file()
    again = open_source(source_archive)
    assert again.root == source_release.root


def test_records_hold_405_tasks_over_199_events(source_release):
    records = source_release.records
    assert len(records) == 405
    assert len(source_release.event_ids()) == 199
    task = records[0].public_task()
    assert task.task_id == "CSX-001_Q1" and task.difficulty_level == "L2"
    assert "solution" not in task.model_dump()


def test_truncated_archive_is_a_clear_error_and_leaves_no_cache(source_archive, tmp_path):
    broken = tmp_path / "broken.tar.xz"
    with source_archive.open("rb") as whole:
        broken.write_bytes(whole.read(2_000_000))
    cache = tmp_path / "cache"
    with pytest.raises(SourceError, match=r"broken\.tar\.xz: cannot unpack"):
        open_source(broken, cache)
    assert [path.name for path in cache.iterdir()] == []


def test_corrupt_archive_is_a_clear_error_and_leaves_no_cache(source_release, tmp_path):
    mini = make_mini_source(source_release, tmp_path / "earthverse-source")
    archive = tmp_path / "corrupt.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(mini, arcname=mini.name)
    corrupt = bytearray(archive.read_bytes())
    middle = len(corrupt) // 2
    corrupt[middle : middle + 64] = bytes(64)
    archive.write_bytes(bytes(corrupt))
    cache = tmp_path / "cache"
    with pytest.raises(SourceError, match=r"corrupt\.tar\.xz: cannot unpack the source archive \(LZMAError"):
        open_source(archive, cache)
    assert [path.name for path in cache.iterdir()] == []


def test_missing_source_and_non_release_folder_are_named(tmp_path):
    with pytest.raises(SourceError, match="no such archive or folder"):
        open_source(tmp_path / "nowhere.tar.xz")
    with pytest.raises(SourceError, match="not a source release"):
        open_source(tmp_path)


def test_malformed_record_names_its_file(source_release, tmp_path):
    mini = make_mini_source(source_release, tmp_path / "mini")
    record_path = mini / "tasks" / "CSX-001_Q1.json"
    record = json.loads(record_path.read_text())
    del record["question"]
    record_path.write_text(json.dumps(record))
    with pytest.raises(SourceError, match=r"CSX-001_Q1\.json: not a valid task record"):
        _ = open_source(mini).records


@pytest.mark.parametrize(
    ("field", "edit", "complaint"),
    [
        ("event_id", lambda record: record.update(event_id="../../escaped"), "event_id"),
        ("task_id", lambda record: record.update(task_id="CSX-002_Q1"), "does not belong to event 'CSX-001'"),
        (
            "ground_truth",
            lambda record: record["ground_truth"].update(numeric_tolerances="5%"),
            "numeric_tol",
        ),
        ("ground_truth", lambda record: record["ground_truth"].pop("primary_gt"), "primary_gt"),
        ("event_files", lambda record: record["event_files"][0].pop("relative_path"), "relative_path"),
        ("event", lambda record: record["event"].update(package_id="CSX-1"), "package_id"),
    ],
)
def test_a_record_part_that_does_not_fit_the_data_model_is_refused_on_reading(
    source_release, tmp_path, field, edit, complaint
):
    mini = make_mini_source(source_release, tmp_path / "mini")
    record_path = mini / "tasks" / "CSX-001_Q2.json"
    record = json.loads(record_path.read_text())
    edit(record)
    record_path.write_text(json.dumps(record))
    with pytest.raises(SourceError, match=r"CSX-001_Q2\.json: not a valid task record") as refused:
        _ = open_source(mini).records
    assert complaint in str(refused.value)
    assert "input_value" not in str(refused.value)  # the record's (hidden) values are never echoed


def test_folder_source_is_accepted_as_is(source_release, tmp_path):
    mini = make_mini_source(source_release, tmp_path / "mini")
    opened = open_source(mini)
    assert opened.root == mini
    assert [record.task_id for record in opened.records] == ["CSX-001_Q1", "CSX-001_Q2", "CSX-001_Q3"]
    shutil.rmtree(mini / "packages")
    with pytest.raises(SourceError, match="no packages/ folder"):
        open_source(Path(mini))


def test_the_default_archive_is_the_shared_one_beside_the_project_unless_configured(monkeypatch, tmp_path):
    monkeypatch.delenv(ARCHIVE_ENV, raising=False)
    beside = Path(__file__).resolve().parents[2]
    assert default_archive() == beside / "shared" / "earthverse-source" / "earthverse-source-v1.tar.xz"
    monkeypatch.setenv(ARCHIVE_ENV, str(tmp_path / "other.tar.xz"))
    assert default_archive() == tmp_path / "other.tar.xz"


def test_the_recorded_runs_are_found_in_the_release(source_release):
    runs = sorted(source_release.trajectories_dir.glob("*/CSX-*.json"))
    assert len(runs) == 1591 and len({path.parent.name for path in runs}) == 25


def test_recorded_runs_are_found_from_the_archive_the_source_folder_or_the_runs_folder(
    source_archive, source_release
):
    runs = source_release.trajectories_dir
    assert recorded_runs_dir(source_archive) == runs
    assert recorded_runs_dir(source_release.root) == runs
    assert recorded_runs_dir(source_release.root.parent) == runs  # the folder holding earthverse-source/
    assert recorded_runs_dir(runs) == runs
    assert recorded_runs_dir(runs / "gpt-4o") == runs / "gpt-4o"
