"""EventPackage: safe resolution of package paths, listing and reading."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from loaders.models import REPOSITORY_PACKAGE_PREFIX
from loaders.package import EventPackage, PackagePathError

EVENT_ID = "CSX-007"


def _write(path: Path, content: bytes = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A package with evidence, metadata, hidden files, a stray top-level file and links in and out."""
    package = tmp_path / EVENT_ID
    _write(package / "data/event_reports/report.json", b'{"a": 1}')
    _write(package / "data/remote_sensing/scene.jpg", b"\xff\xd8\xff")
    _write(package / "metadata/event.json", b'{"package_id": "CSX-007"}')
    _write(package / "data/.hidden/secret.txt", b"secret")
    _write(package / "data/.dotfile", b"dot")
    _write(package / "notes.txt", b"not evidence")
    _write(tmp_path / "outside.txt", b"outside")
    (package / "data/link_out.txt").symlink_to(tmp_path / "outside.txt")
    (package / "data/link_notes.txt").symlink_to(package / "notes.txt")
    (package / "data/link_event.json").symlink_to(package / "metadata/event.json")
    (package / "data/dir_out").symlink_to(tmp_path, target_is_directory=True)
    return package


@pytest.fixture
def package(root: Path) -> EventPackage:
    return EventPackage(root)


def test_event_id_defaults_to_the_folder_name(root: Path) -> None:
    assert EventPackage(root).event_id == EVENT_ID
    assert EventPackage(root, "CSX-999").event_id == "CSX-999"


def test_a_missing_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        EventPackage(tmp_path / "nope")


@pytest.mark.parametrize(
    "path",
    [
        "data/event_reports/report.json",
        "./data/event_reports/report.json",
        "././data/event_reports/report.json",
        "data//event_reports/report.json",
        "data\\event_reports\\report.json",
        f"{REPOSITORY_PACKAGE_PREFIX}{EVENT_ID}/data/event_reports/report.json",
        f"./{REPOSITORY_PACKAGE_PREFIX}{EVENT_ID}/data/event_reports/report.json",
    ],
)
def test_accepted_forms_resolve_to_the_same_file(package: EventPackage, root: Path, path: str) -> None:
    resolved = package.resolve(path)
    assert resolved == (root / "data/event_reports/report.json").resolve()
    assert package.relative(path) == "data/event_reports/report.json"


def test_metadata_paths_resolve(package: EventPackage) -> None:
    assert package.read_bytes("metadata/event.json") == b'{"package_id": "CSX-007"}'


def test_a_link_inside_the_areas_is_followed(package: EventPackage, root: Path) -> None:
    assert package.resolve("data/link_event.json") == (root / "metadata/event.json").resolve()


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("data/../metadata/event.json", "'..'"),
        ("../CSX-008/data/x.json", "'..'"),
        ("data/event_reports/../../notes.txt", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows/win.ini", "absolute"),
        ("data/report\x00.json", "NUL"),
        ("data/.hidden/secret.txt", "hidden"),
        ("data/.dotfile", "hidden"),
        ("./.git/config", "hidden"),
        ("data/./event_reports/report.json", "hidden"),
        ("notes.txt", "under data/ or metadata/"),
        ("tasks/CSX-007_Q1/solution_en.md", "under data/ or metadata/"),
        ("", "empty"),
        ("./", "empty"),
        (f"{REPOSITORY_PACKAGE_PREFIX}CSX-008/data/event_reports/report.json", "CSX-008, not CSX-007"),
        (f"{REPOSITORY_PACKAGE_PREFIX}{EVENT_ID}", "names no file"),
        (REPOSITORY_PACKAGE_PREFIX, "names no package"),
        ("data/link_out.txt", "outside the package"),
        ("data/link_notes.txt", "outside data/ and metadata/"),
        ("data/dir_out/outside.txt", "outside the package"),
    ],
)
def test_unsafe_paths_are_rejected_with_path_and_reason(
    package: EventPackage, path: str, reason: str
) -> None:
    with pytest.raises(PackagePathError) as caught:
        package.resolve(path)
    assert caught.value.path == path
    assert reason in str(caught.value)
    assert repr(path) in str(caught.value)


def test_the_absolute_path_of_a_real_package_file_is_rejected(package: EventPackage, root: Path) -> None:
    with pytest.raises(PackagePathError, match="absolute"):
        package.resolve(str(root / "data/event_reports/report.json"))


def test_package_path_error_is_a_value_error(package: EventPackage) -> None:
    with pytest.raises(ValueError):
        package.resolve("../x")


def test_non_string_paths_are_rejected(package: EventPackage) -> None:
    with pytest.raises(PackagePathError, match="string"):
        package.resolve(Path("data/event_reports/report.json"))  # type: ignore[arg-type]


def test_a_symlink_loop_is_rejected(package: EventPackage, root: Path) -> None:
    (root / "data/loop_a").symlink_to(root / "data/loop_b")
    (root / "data/loop_b").symlink_to(root / "data/loop_a")
    with pytest.raises(PackagePathError):
        package.resolve("data/loop_a")


def test_exists_tells_present_from_missing_and_refuses_unsafe_paths(package: EventPackage) -> None:
    assert package.exists("data/event_reports/report.json")
    assert package.exists("data/event_reports")
    assert not package.exists("data/event_reports/missing.json")
    with pytest.raises(PackagePathError):
        package.exists("../outside.txt")


def test_list_files_is_sorted_visible_and_never_leaves_the_areas(package: EventPackage) -> None:
    assert package.list_files() == [
        "data/event_reports/report.json",
        "data/link_event.json",
        "data/remote_sensing/scene.jpg",
        "metadata/event.json",
    ]


def test_list_files_of_a_subdir_in_either_form(package: EventPackage) -> None:
    expected = ["data/event_reports/report.json"]
    assert package.list_files("data/event_reports") == expected
    assert package.list_files(f"{REPOSITORY_PACKAGE_PREFIX}{EVENT_ID}/data/event_reports/") == expected


def test_list_files_caps_at_max_files(package: EventPackage) -> None:
    assert package.list_files("data", max_files=2) == [
        "data/event_reports/report.json",
        "data/link_event.json",
    ]
    assert package.list_files(max_files=0) == []
    with pytest.raises(ValueError, match="max_files"):
        package.list_files(max_files=-1)


def test_list_files_of_a_missing_folder_or_a_file_raises(package: EventPackage) -> None:
    with pytest.raises(FileNotFoundError):
        package.list_files("data/nothing_here")
    with pytest.raises(NotADirectoryError):
        package.list_files("data/event_reports/report.json")
    with pytest.raises(PackagePathError):
        package.list_files("data/.hidden")


def test_list_files_skips_a_missing_metadata_area(tmp_path: Path) -> None:
    _write(tmp_path / "CSX-001/data/other/a.txt")
    assert EventPackage(tmp_path / "CSX-001").list_files() == ["data/other/a.txt"]


def test_list_files_does_not_follow_a_data_folder_linked_out_of_the_package(tmp_path: Path) -> None:
    _write(tmp_path / "elsewhere/evidence.txt")
    (tmp_path / "CSX-002").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "CSX-002/data")
    assert EventPackage(tmp_path / "CSX-002").list_files() == []


def test_read_bytes_and_open_file_return_the_content(package: EventPackage) -> None:
    assert package.read_bytes("data/remote_sensing/scene.jpg") == b"\xff\xd8\xff"
    with package.open_file("./data/event_reports/report.json") as handle:
        assert handle.read() == b'{"a": 1}'
    with pytest.raises(PackagePathError):
        package.open_file("data/link_out.txt")


def test_relative_applies_the_same_checks_as_resolve(package: EventPackage) -> None:
    assert package.relative("metadata/event.json") == "metadata/event.json"
    with pytest.raises(PackagePathError, match="outside the package"):
        package.relative("data/link_out.txt")


def test_package_path_error_survives_pickling() -> None:
    copy = pickle.loads(pickle.dumps(PackagePathError("../x", "'..' components are not allowed")))
    assert (copy.path, copy.reason) == ("../x", "'..' components are not allowed")
