"""loaders.release: the three forms of a release give the same public content; ground truth stays apart."""

from __future__ import annotations

import json
import re
import shutil
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dataset.hub import build_hub
from loaders import layout
from loaders.download import ChecksumError, UnsafeArchiveError, extract_package, file_sha256, format_checksums
from loaders.models import HiddenTask
from loaders.release import (
    Release,
    ReleaseError,
    open_ground_truth,
    open_release,
    read_hidden_records,
    read_manifest,
)


@pytest.fixture(scope="module")
def local(built_release: Path) -> Release:
    return open_release(built_release)


@pytest.fixture(scope="module")
def hub(built_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Release:
    return open_release(built_release / "hub" / "public", cache_dir=tmp_path_factory.mktemp("cache"))


def test_a_built_release_opens_with_405_tasks_199_events_and_their_manifests(
    built_release: Path, local: Release
) -> None:
    assert local.kind == "layout"
    assert len(local.tasks) == 405 and len(local.events) == 199
    task = local.task("CSX-001_Q1")
    assert task.event_id == "CSX-001"
    assert task.question == (
        layout.task_dir(built_release, "CSX-001", "CSX-001_Q1") / "question_en.md"
    ).read_text(encoding="utf-8")
    assert local.events["CSX-001"].event_name == "June 2021 Pacific Northwest heat wave"
    manifest = local.manifest("CSX-001")
    assert len(manifest) == local.task("CSX-001_Q1").file_count
    assert manifest[0].relative_path.startswith("data/")
    assert manifest[0].model_extra == {"repository_path": manifest[0].repository_path}
    assert local.package("CSX-001").root == layout.package_dir(built_release, "CSX-001").resolve()


def test_the_public_hub_folder_gives_the_same_tasks_events_manifests_and_version(
    local: Release, hub: Release
) -> None:
    assert hub.kind == "hub_folder"
    assert hub.tasks == local.tasks
    assert hub.events == local.events
    assert all(hub.manifest(event_id) == local.manifest(event_id) for event_id in local.events)
    assert hub.version == local.version
    assert hub.version.startswith("ev-")


def test_the_paper_leaderboard_travels_with_the_release_in_every_form(
    source_release, local: Release, hub: Release
) -> None:
    source = json.loads((source_release.root / "paper_results" / "models.json").read_text(encoding="utf-8"))
    paper = local.paper_leaderboard
    assert paper is not None and hub.paper_leaderboard == paper
    assert [system.id for system in paper.systems] == [
        model["id"] for model in sorted(source["models"], key=lambda model: model["rank"])
    ]
    first = next(model for model in source["models"] if model["id"] == paper.systems[0].id)
    assert paper.systems[0].metrics.mean_core == first["metrics"]["mean_core"]
    assert paper.systems[0].capabilities == first["capabilities"]
    assert "EarthVerse" in paper.citation


def test_a_tampered_paper_leaderboard_in_a_hub_folder_is_refused(built_release: Path, tmp_path: Path) -> None:
    folder = tmp_path / "public"
    shutil.copytree(built_release / "hub" / "public", folder, ignore=shutil.ignore_patterns("*.zip"))
    paper = folder / "paper_leaderboard.json"
    paper.write_text(paper.read_text(encoding="utf-8").replace('"rank": 1,', '"rank": 2,'), encoding="utf-8")
    with pytest.raises(ChecksumError, match=r"paper_leaderboard\.json"):
        open_release(folder)


def test_a_hub_package_is_extracted_once_and_holds_the_layout_files(local: Release, hub: Release) -> None:
    package = hub.package("CSX-003")
    expected = local.package("CSX-003")
    assert package.list_files() == expected.list_files()
    assert all(package.read_bytes(path) == expected.read_bytes(path) for path in package.list_files())
    marker = package.root.parent / f".{package.root.name}.complete"
    stamp = marker.stat().st_mtime_ns
    assert hub.package("CSX-003").root == package.root
    assert marker.stat().st_mtime_ns == stamp


def test_unknown_task_and_event_raise_key_errors_naming_them(local: Release) -> None:
    with pytest.raises(KeyError, match="CSX-001_Q9"):
        local.task("CSX-001_Q9")
    with pytest.raises(KeyError, match="CSX-999"):
        local.manifest("CSX-999")
    with pytest.raises(KeyError, match="CSX-999"):
        local.package("CSX-999")


def test_a_release_reaches_no_hidden_material(built_release: Path, local: Release, hub: Release) -> None:
    solution = (layout.task_dir(built_release, "CSX-001", "CSX-001_Q1") / "solution_en.md").read_text(
        encoding="utf-8"
    )
    snippet = solution.split("\n\n")[-1][:60]
    for release in (local, hub):
        assert not [name for name in vars(release) if "truth" in name or "hidden" in name]
        assert snippet not in repr([task.model_dump() for task in release.tasks])
        names = {Path(path).name for path in release.package("CSX-001").list_files()}
        assert not names & set(layout.HIDDEN_TASK_FILES)


def test_a_tampered_table_in_a_hub_folder_is_refused(built_release: Path, tmp_path: Path) -> None:
    folder = tmp_path / "public"
    folder.mkdir()
    for name in ("tasks.parquet", "events.parquet", "checksums.sha256"):
        shutil.copyfile(built_release / "hub" / "public" / name, folder / name)
    with (folder / "tasks.parquet").open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(ChecksumError, match=r"tasks\.parquet"):
        open_release(folder)


def test_bad_locations_are_refused_with_clear_errors(built_release: Path, tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="revision"):
        open_release(built_release, revision="main")
    with pytest.raises(ReleaseError, match="not a release"):
        open_release(tmp_path)
    with pytest.raises(ReleaseError, match="not a Hub repo id"):
        open_release(str(tmp_path / "absent" / "folder"))
    (tmp_path / "files.csv").write_text("file_id,bytes\nF1,not-a-number\n", encoding="utf-8")
    with pytest.raises(ReleaseError, match=r"files\.csv"):
        read_manifest(tmp_path / "files.csv")


def zip_with(path: Path, name: str, data: bytes = b"x", mode: int = 0o100644) -> Path:
    with zipfile.ZipFile(path, "w") as bundle:
        bundle.writestr("data/ok.txt", b"fine")
        info = zipfile.ZipInfo(name)
        info.external_attr = mode << 16
        bundle.writestr(info, data)
    return path


@pytest.mark.parametrize(
    ("name", "mode", "reason"),
    [
        ("../escape.txt", 0o100644, "'..'"),
        ("data/../../escape.txt", 0o100644, "'..'"),
        ("/etc/passwd", 0o100644, "absolute"),
        ("C:/windows.txt", 0o100644, "absolute"),
        ("data\\evil.txt", 0o100644, "backslash"),
        ("notes/readme.txt", 0o100644, "outside data/ and metadata/"),
        ("data/.hidden", 0o100644, "hidden"),
        ("data/link", stat.S_IFLNK | 0o777, "symbolic link"),
    ],
)
def test_unsafe_archive_entries_are_refused_and_leave_nothing(
    tmp_path: Path, name: str, mode: int, reason: str
) -> None:
    archive = zip_with(tmp_path / "bad.zip", name, mode=mode)
    target = tmp_path / "packages" / "CSX-001"
    with pytest.raises(UnsafeArchiveError, match=reason):
        extract_package(archive, target, file_sha256(archive))
    assert sorted(p.name for p in target.parent.iterdir()) == []
    assert not (tmp_path / "escape.txt").exists()


def test_an_archive_that_does_not_match_its_checksum_is_not_extracted(tmp_path: Path) -> None:
    archive = zip_with(tmp_path / "ok.zip", "metadata/event.json", b"{}")
    target = tmp_path / "packages" / "CSX-001"
    with pytest.raises(ChecksumError, match="does not match"):
        extract_package(archive, target, "0" * 64)
    assert not target.parent.exists() or not any(target.parent.iterdir())
    assert extract_package(archive, target, file_sha256(archive)) == target
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == [
        "data/ok.txt",
        "metadata/event.json",
    ]


def test_ground_truth_reads_from_the_layout_and_the_private_folder_alike(
    built_release: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    for event_id in ("CSX-001",):
        shutil.copytree(layout.package_dir(built_release, event_id), layout.package_dir(out, event_id))
        shutil.copytree(built_release / "tasks" / event_id, out / "tasks" / event_id)
    build_hub(out)
    from_layout = open_ground_truth(out)
    from_private = open_ground_truth(out / "hub" / "private")
    assert sorted(from_layout) == ["CSX-001_Q1", "CSX-001_Q2", "CSX-001_Q3"]
    assert from_private == from_layout
    truth = from_layout["CSX-001_Q1"]
    assert isinstance(truth, HiddenTask)
    assert truth.ground_truth.primary_gt["answer_type"] == "expert_source_arbitration"
    assert truth.ground_truth.rubric.criteria and truth.solution.startswith("# Final Answer")
    assert open_ground_truth(out / "hub" / "private" / "ground_truth.parquet") == from_layout


def test_the_raw_ground_truth_of_the_real_build_reads_the_same_from_both_sides(built_release: Path) -> None:
    from_layout = read_hidden_records(built_release)
    assert len(from_layout) == 405
    assert read_hidden_records(built_release / "hub" / "private") == from_layout


def test_ground_truth_of_a_folder_that_is_no_release_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="expected a built release folder"):
        open_ground_truth(tmp_path)


def _hub_tables(built_release: Path, folder: Path, edit_tasks: Callable[[pa.Table], pa.Table]) -> Path:
    """A copy of the public tables with tasks.parquet edited and the checksums rewritten to match."""
    folder.mkdir()
    for name in ("tasks.parquet", "events.parquet"):
        shutil.copyfile(built_release / "hub" / "public" / name, folder / name)
    pq.write_table(edit_tasks(pq.read_table(folder / "tasks.parquet")), folder / "tasks.parquet")
    digests = {name: file_sha256(folder / name) for name in ("tasks.parquet", "events.parquet")}
    (folder / "checksums.sha256").write_text(format_checksums(digests), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("edit", "complaint"),
    [
        (lambda table: table.drop_columns(["category_counts"]), r"row 1: no column 'category_counts'"),
        (
            lambda table: table.set_column(
                table.schema.get_field_index("category_counts"),
                "category_counts",
                pa.array(["[not json"] * table.num_rows),
            ),
            r"row 1: a cell is not JSON",
        ),
        (
            lambda table: table.set_column(
                table.schema.get_field_index("task_id"), "task_id", pa.array(["Q1"] * table.num_rows)
            ),
            r"row 1: task_id: String should match pattern",
        ),
    ],
)
def test_a_table_row_that_does_not_convert_is_named_by_file_and_row(
    built_release: Path, tmp_path: Path, edit: Callable[[pa.Table], pa.Table], complaint: str
) -> None:
    folder = _hub_tables(built_release, tmp_path / "public", edit)
    with pytest.raises(ReleaseError, match=rf"tasks\.parquet: {complaint}"):
        open_release(folder)


def test_a_ground_truth_row_that_does_not_fit_is_named_without_its_hidden_values(
    built_release: Path, tmp_path: Path
) -> None:
    private = tmp_path / "ground_truth.parquet"
    table = pq.read_table(built_release / "hub" / "private" / "ground_truth.parquet")
    truths = [json.loads(cell) for cell in table.column("ground_truth").to_pylist()]
    truths[0]["numeric_tolerances"] = secret = "hidden-tolerance-value-7731"
    column = pa.array([json.dumps(truth) for truth in truths])
    pq.write_table(
        table.set_column(table.schema.get_field_index("ground_truth"), "ground_truth", column), private
    )

    with pytest.raises(
        ReleaseError, match=r"ground_truth\.numeric_tolerances: Input should be a valid dictionary"
    ) as error:
        open_ground_truth(private)
    assert secret not in str(error.value)


@pytest.mark.parametrize(
    ("damage", "complaint"),
    [
        (lambda out: shutil.rmtree(out / "packages" / "CSX-003"), "tasks of CSX-003 have no event package"),
        (
            lambda out: shutil.copytree(out / "tasks" / "CSX-001", out / "tasks" / "CSX-777"),
            "task(s) CSX-001_Q1, CSX-001_Q2, CSX-001_Q3 appear more than once",
        ),
        (
            lambda out: (out / "packages" / "CSX-003").rename(out / "packages" / "CSX-004"),
            "event records disagree with their package: CSX-004 holds CSX-003",
        ),
        (lambda out: [shutil.rmtree(folder) for folder in (out / "tasks").iterdir()], "it holds no task"),
    ],
)
def test_a_release_whose_parts_disagree_is_refused(
    built_release: Path, tmp_path: Path, damage: Callable[[Path], object], complaint: str
) -> None:
    out = tmp_path / "out"
    for event_id in ("CSX-001", "CSX-003"):
        shutil.copytree(layout.package_dir(built_release, event_id), layout.package_dir(out, event_id))
        shutil.copytree(built_release / "tasks" / event_id, out / "tasks" / event_id)
    assert len(open_release(out).tasks) == 5
    damage(out)

    with pytest.raises(ReleaseError, match=re.escape(complaint)):
        open_release(out)
