"""dataset.hub: the public and private Hub folders of the real build, and builds of a small layout."""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard

import dataset.hub.build
from dataset.hub import build_hub
from dataset.hub.archives import write_package_archive
from loaders import layout
from loaders.download import parse_checksums
from loaders.models import HIDDEN_TASK_FIELDS, Task
from loaders.package import EventPackage
from loaders.paper_results import PAPER_LEADERBOARD_FILE
from loaders.release import GROUND_TRUTH_COLUMNS, ReleaseError, read_hidden_records, task_from_row

PUBLIC_NAMES = {"README.md", "tasks.parquet", "events.parquet", PAPER_LEADERBOARD_FILE, "checksums.sha256"}


def copy_layout(out: Path, target: Path, event_ids: tuple[str, ...]) -> Path:
    """A small canonical layout: the packages and task folders of `event_ids` copied from a build."""
    for event_id in event_ids:
        shutil.copytree(layout.package_dir(out, event_id), layout.package_dir(target, event_id))
        shutil.copytree(out / "tasks" / event_id, target / "tasks" / event_id)
    shutil.copyfile(out / PAPER_LEADERBOARD_FILE, target / PAPER_LEADERBOARD_FILE)
    return target


def public_files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module")
def public(built_release: Path) -> Path:
    return built_release / "hub" / "public"


@pytest.fixture(scope="module")
def private(built_release: Path) -> Path:
    return built_release / "hub" / "private"


def test_public_folder_holds_the_card_tables_paper_figures_checksums_and_one_archive_per_event(
    built_release: Path, public: Path
) -> None:
    names = {p.relative_to(public).as_posix() for p in public.rglob("*") if p.is_file()}
    event_ids = sorted(p.name for p in (built_release / "packages").iterdir())
    assert len(event_ids) == 199
    assert names == PUBLIC_NAMES | {f"packages/{event_id}.zip" for event_id in event_ids}


def test_checksums_cover_every_public_file_but_themselves_and_match(public: Path) -> None:
    digests = parse_checksums((public / "checksums.sha256").read_text(encoding="utf-8"))
    files = {p.relative_to(public).as_posix() for p in public.rglob("*") if p.is_file()}
    assert set(digests) == files - {"checksums.sha256"}
    for name, expected in digests.items():
        assert hashlib.sha256((public / name).read_bytes()).hexdigest() == expected, name


def test_load_dataset_gives_405_tasks_and_199_events_without_hidden_columns(
    public: Path, tmp_path: Path
) -> None:
    tasks = datasets.load_dataset(str(public), "tasks", split="test", cache_dir=str(tmp_path))
    events = datasets.load_dataset(str(public), "events", split="test", cache_dir=str(tmp_path))
    assert tasks.num_rows == 405
    assert events.num_rows == 199
    assert tasks.column_names == list(Task.model_fields)
    hidden = set(HIDDEN_TASK_FIELDS) | set(GROUND_TRUTH_COLUMNS) - {"task_id", "event_id"}
    assert not hidden & set(tasks.column_names)
    assert not hidden & set(events.column_names)
    assert tasks.features["dimensions"].feature.dtype == "string"
    assert sorted(events["event_id"]) == events["event_id"]


def test_task_rows_are_the_layout_task_records(built_release: Path, public: Path) -> None:
    rows = pq.read_table(public / "tasks.parquet").to_pylist()
    for row in rows:
        task = task_from_row(row)
        folder = layout.task_dir(built_release, task.event_id, task.task_id)
        assert task == Task.model_validate_json((folder / "task.json").read_bytes())
        assert task.question == (folder / "question_en.md").read_text(encoding="utf-8")


def test_event_rows_carry_record_manifest_counts_and_archive(built_release: Path, public: Path) -> None:
    rows = {row["event_id"]: row for row in pq.read_table(public / "events.parquet").to_pylist()}
    row = rows["CSX-001"]
    metadata = layout.package_dir(built_release, "CSX-001") / "metadata"
    assert json.loads(row["event_json"]) == json.loads((metadata / "event.json").read_text(encoding="utf-8"))
    manifest_lines = (metadata / "files.csv").read_text(encoding="utf-8").splitlines()
    assert row["file_count"] == len(row["manifest"]) == len(manifest_lines) - 1
    assert row["manifest"][0]["relative_path"].startswith("data/")
    assert row["task_ids"] == ["CSX-001_Q1", "CSX-001_Q2", "CSX-001_Q3"]
    assert row["task_count"] == 3
    assert row["data_integrity_final_data_score"] == "63"
    assert row["archive"] == "packages/CSX-001.zip"
    assert row["archive_sha256"] == hashlib.sha256((public / row["archive"]).read_bytes()).hexdigest()
    assert sum(r["task_count"] for r in rows.values()) == 405


def test_archives_hold_exactly_the_package_files_sorted_dated_1980_mode_644_deflated(
    built_release: Path, public: Path
) -> None:
    for event_id in ("CSX-001", "CSX-330"):
        package = EventPackage(layout.package_dir(built_release, event_id), event_id)
        with zipfile.ZipFile(public / "packages" / f"{event_id}.zip") as bundle:
            infos = bundle.infolist()
            names = [info.filename for info in infos]
            assert names == sorted(names) == package.list_files()
            assert "metadata/event.json" in names and "metadata/files.csv" in names
            for info in infos:
                assert info.date_time == (1980, 1, 1, 0, 0, 0)
                assert info.external_attr >> 16 == 0o100644
                assert info.compress_type == zipfile.ZIP_DEFLATED
                assert bundle.read(info) == package.read_bytes(info.filename)


def test_an_archive_rebuilt_is_byte_identical_to_the_published_one(
    built_release: Path, public: Path, tmp_path: Path
) -> None:
    root = layout.package_dir(built_release, "CSX-001")
    write_package_archive(root, tmp_path / "first.zip")
    write_package_archive(root, tmp_path / "second.zip")
    published = (public / "packages" / "CSX-001.zip").read_bytes()
    assert (tmp_path / "first.zip").read_bytes() == (tmp_path / "second.zip").read_bytes() == published


def test_card_declares_both_configs_license_and_documents_loading_fields_citation(
    built_release: Path, public: Path
) -> None:
    card = DatasetCard.load(public / "README.md")
    configs = {config["config_name"]: config for config in card.data.configs}
    assert configs["tasks"]["data_files"] == [{"split": "test", "path": "tasks.parquet"}]
    assert configs["events"]["data_files"] == [{"split": "test", "path": "events.parquet"}]
    assert card.data.license == "cc-by-4.0"
    assert card.data.pretty_name == "EarthVerse"
    assert card.data.task_categories and card.data.tags
    text = card.text
    assert 'load_dataset("earthverse/core", "tasks", split="test")' in text
    assert 'filename="packages/CSX-001.zip", repo_type="dataset"' in text
    assert "from loaders import download_event_package" in text
    assert "eprint        = {2608.23525}" in text
    assert "Benchmarking Scientific Agents Across Dynamic Earth Systems and Natural Hazards" in text
    assert "## Ground truth is private" in text
    assert "upstream licenses" in text
    assert "| `question` | string | The public prompt, markdown. |" in text
    assert "| `dimensions` | list<string> | Capability tags, a subset of CAPABILITY_TAGS. |" in text
    assert "| `manifest` | list<struct> |" in text
    assert "405 tasks, 199 events, 199 package archives." in text
    report = built_release / "release_report.json"
    if report.is_file():
        totals = json.loads(report.read_text(encoding="utf-8"))["totals"]
        assert f"| tasks | {totals['tasks']} |" in text


def test_private_folder_holds_the_whole_ground_truth_of_every_task(
    built_release: Path, private: Path
) -> None:
    assert {p.name for p in private.iterdir()} == {"README.md", "ground_truth.parquet"}
    table = pq.read_table(private / "ground_truth.parquet")
    assert table.column_names == list(GROUND_TRUTH_COLUMNS)
    rows = {row["task_id"]: row for row in table.to_pylist()}
    assert len(rows) == 405
    row = rows["CSX-001_Q1"]
    folder = layout.task_dir(built_release, "CSX-001", "CSX-001_Q1")
    truth = json.loads((folder / "computed_gt.json").read_text(encoding="utf-8"))
    assert json.loads(row["ground_truth"]) == truth
    assert json.loads(row["primary_gt"]) == truth["primary_gt"]
    assert json.loads(row["tolerances"])["numeric_tolerances"] == truth["numeric_tolerances"]
    assert json.loads(row["rubric"]) == truth["rubric"]
    assert row["solution"] == (folder / "solution_en.md").read_text(encoding="utf-8")
    assert row["compute_gt"] == (folder / "compute_gt.py").read_text(encoding="utf-8")
    assert row["evaluation_mode"] == "hybrid"
    assert "PRIVATE" in (private / "README.md").read_text(encoding="utf-8")
    assert read_hidden_records(private) == read_hidden_records(built_release)


def test_two_builds_of_a_layout_give_byte_identical_public_folders(
    built_release: Path, tmp_path: Path
) -> None:
    first = copy_layout(built_release, tmp_path / "first", ("CSX-001", "CSX-003"))
    second = copy_layout(built_release, tmp_path / "second", ("CSX-001", "CSX-003"))
    summary = build_hub(first)
    build_hub(second)
    assert public_files(first / "hub" / "public") == public_files(second / "hub" / "public")
    assert summary.tasks == 5 and summary.events == 2 and summary.archives == 2
    assert set(summary.public_files) == PUBLIC_NAMES | {"packages/CSX-001.zip", "packages/CSX-003.zip"}
    assert summary.private_files.keys() == {"README.md", "ground_truth.parquet"}


def test_review_notes_of_the_layout_fill_the_private_columns(built_release: Path, tmp_path: Path) -> None:
    out = copy_layout(built_release, tmp_path / "out", ("CSX-001",))
    notes = {"difficulty_rationale": "calculation-led", "dimension_rationale": "select the heat source"}
    (layout.task_dir(out, "CSX-001", "CSX-001_Q1") / "review_notes.json").write_text(layout.dump_json(notes))
    build_hub(out)
    rows = {r["task_id"]: r for r in pq.read_table(out / "hub/private/ground_truth.parquet").to_pylist()}
    assert rows["CSX-001_Q1"]["difficulty_rationale"] == "calculation-led"
    assert rows["CSX-001_Q1"]["dimension_rationale"] == "select the heat source"
    assert rows["CSX-001_Q2"]["difficulty_rationale"].startswith("Manual review")


def test_a_failed_rebuild_leaves_the_previous_folders_and_no_staging(
    built_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = copy_layout(built_release, tmp_path / "out", ("CSX-001",))
    build_hub(out)
    before = public_files(out / "hub" / "public")

    def broken_card(facts: object) -> str:
        raise RuntimeError("card renderer broke")

    monkeypatch.setattr(dataset.hub.build, "render_card", broken_card)
    with pytest.raises(RuntimeError, match="card renderer broke"):
        build_hub(out)
    assert public_files(out / "hub" / "public") == before
    assert sorted(p.name for p in (out / "hub").iterdir()) == ["private", "public"]


def test_a_layout_task_without_its_package_is_refused(built_release: Path, tmp_path: Path) -> None:
    out = copy_layout(built_release, tmp_path / "out", ("CSX-001",))
    shutil.copytree(built_release / "tasks" / "CSX-003", out / "tasks" / "CSX-003")
    with pytest.raises(ReleaseError, match="tasks of CSX-003 have no event package"):
        build_hub(out)
    assert not (out / "hub" / "public").exists()
