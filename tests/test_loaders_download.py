"""loaders.download and open_release on a Hub repo, offline, against a local stand-in of the Hub."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loaders import layout
from loaders.atomic import ForeignFolderError
from loaders.download import EXTRACTING, ChecksumError, UnknownEventError, download_event_package
from loaders.package import EventPackage
from loaders.release import ReleaseError, open_release, read_hidden_records
from tests.hub_standin import HubStandin, StandinRepo

TOKEN = "hf_standin_token"


@pytest.fixture(scope="module")
def hub(built_release: Path) -> HubStandin:
    repos = {
        "earthverse/core": StandinRepo(built_release / "hub" / "public"),
        "earthverse/core-private": StandinRepo(built_release / "hub" / "private", token=TOKEN),
    }
    with HubStandin(repos) as standin:
        yield standin


@pytest.fixture(autouse=True)
def fresh_requests(hub: HubStandin) -> None:
    hub.requests.clear()


def same_files(package: Path, expected: Path) -> None:
    got, want = EventPackage(package), EventPackage(expected)
    assert got.list_files() == want.list_files()
    assert all(got.read_bytes(path) == want.read_bytes(path) for path in want.list_files())


def test_one_event_package_is_downloaded_verified_and_extracted(
    built_release: Path, hub: HubStandin, tmp_path: Path
) -> None:
    folder = download_event_package("CSX-001", local_dir=tmp_path, endpoint=hub.url)
    assert folder == tmp_path / "CSX-001"
    same_files(folder, layout.package_dir(built_release, "CSX-001"))
    assert sorted(p.name for p in tmp_path.iterdir()) == [".CSX-001.complete", "CSX-001"]
    assert hub.downloads(".zip") == ["earthverse/core/packages/CSX-001.zip"]
    assert hub.downloads() == ["earthverse/core/checksums.sha256", "earthverse/core/packages/CSX-001.zip"]


def test_a_second_download_reuses_the_extracted_package(hub: HubStandin, tmp_path: Path) -> None:
    first = download_event_package("CSX-003", local_dir=tmp_path, endpoint=hub.url)
    hub.requests.clear()
    assert download_event_package("CSX-003", local_dir=tmp_path, endpoint=hub.url) == first
    assert hub.downloads(".zip") == []


def test_hf_endpoint_set_after_import_points_the_download_at_the_stand_in(
    hub: HubStandin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    folder = download_event_package("CSX-004", local_dir=tmp_path)
    assert (folder / "metadata" / "event.json").is_file()
    assert hub.downloads(".zip") == ["earthverse/core/packages/CSX-004.zip"]


def test_unknown_and_malformed_event_ids_raise_clear_errors(hub: HubStandin, tmp_path: Path) -> None:
    with pytest.raises(UnknownEventError, match=r"no package for CSX-999 \(199 events, CSX-001 … CSX-330\)"):
        download_event_package("CSX-999", local_dir=tmp_path, endpoint=hub.url)
    assert hub.downloads(".zip") == []
    hub.requests.clear()
    for bad in ("csx-001", "CSX-1", "CSX-001/../x", "../CSX-001"):
        with pytest.raises(ValueError, match="CSX-NNN"):
            download_event_package(bad, local_dir=tmp_path, endpoint=hub.url)
    assert hub.requests == []
    assert list(tmp_path.iterdir()) == []


def test_a_folder_that_is_not_an_extracted_package_is_never_replaced(hub: HubStandin, tmp_path: Path) -> None:
    mine = tmp_path / "CSX-008"
    mine.mkdir()
    (mine / "thesis.tex").write_text("precious")

    with pytest.raises(
        ForeignFolderError, match=r"CSX-008: exists and is not a package extracted by earthverse"
    ):
        download_event_package("CSX-008", local_dir=tmp_path, endpoint=hub.url)

    assert [path.name for path in mine.iterdir()] == ["thesis.tex"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["CSX-008"]


def test_an_extraction_cut_short_is_redone(built_release: Path, hub: HubStandin, tmp_path: Path) -> None:
    folder = download_event_package("CSX-006", local_dir=tmp_path, endpoint=hub.url)
    shutil.rmtree(folder / "data")
    (tmp_path / ".CSX-006.complete").write_text(EXTRACTING)  # as a kill between swap and marker leaves it

    assert download_event_package("CSX-006", local_dir=tmp_path, endpoint=hub.url) == folder
    same_files(folder, layout.package_dir(built_release, "CSX-006"))


def test_a_package_damaged_after_extraction_is_extracted_again(
    built_release: Path, hub: HubStandin, tmp_path: Path
) -> None:
    folder = download_event_package("CSX-013", local_dir=tmp_path, endpoint=hub.url)
    files = EventPackage(folder).list_files()
    (folder / files[0]).unlink()
    edited = folder / files[-1]
    edited.write_bytes(b"x" * edited.stat().st_size)  # same size, other bytes
    hub.requests.clear()

    assert download_event_package("CSX-013", local_dir=tmp_path, endpoint=hub.url) == folder
    same_files(folder, layout.package_dir(built_release, "CSX-013"))
    assert hub.downloads(".zip") == ["earthverse/core/packages/CSX-013.zip"]

    hub.requests.clear()
    download_event_package("CSX-013", local_dir=tmp_path, endpoint=hub.url)
    assert hub.downloads(".zip") == []


def test_unknown_repo_and_revision_raise_lookup_errors(hub: HubStandin, tmp_path: Path) -> None:
    with pytest.raises(LookupError, match="earthverse/absent"):
        download_event_package("CSX-001", repo_id="earthverse/absent", local_dir=tmp_path, endpoint=hub.url)
    with pytest.raises(LookupError, match="no revision 'v9'"):
        download_event_package("CSX-001", revision="v9", local_dir=tmp_path, endpoint=hub.url)


def test_a_tampered_archive_raises_and_leaves_nothing_that_looks_complete(
    built_release: Path, tmp_path: Path
) -> None:
    public = built_release / "hub" / "public"
    tampered = tmp_path / "tampered"
    (tampered / "packages").mkdir(parents=True)
    shutil.copyfile(public / "checksums.sha256", tampered / "checksums.sha256")
    data = bytearray((public / "packages" / "CSX-001.zip").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (tampered / "packages" / "CSX-001.zip").write_bytes(bytes(data))
    local_dir = tmp_path / "packages"
    expected = r"CSX-001\.zip: sha256 .* does not match checksums\.sha256"
    with (
        HubStandin({"earthverse/core": StandinRepo(tampered)}) as standin,
        pytest.raises(ChecksumError, match=expected),
    ):
        download_event_package("CSX-001", local_dir=local_dir, endpoint=standin.url)
    assert not local_dir.exists() or list(local_dir.iterdir()) == []


def test_a_release_opens_from_the_repo_with_packages_on_demand(
    built_release: Path, hub: HubStandin, tmp_path: Path
) -> None:
    remote = open_release("earthverse/core", endpoint=hub.url, cache_dir=tmp_path)
    local = open_release(built_release)
    assert remote.kind == "hub_repo"
    assert remote.tasks == local.tasks and remote.events == local.events
    assert remote.version == local.version
    assert hub.downloads(".zip") == []
    assert set(hub.downloads()) == {
        f"earthverse/core/{name}"
        for name in (
            "checksums.sha256",
            "README.md",
            "tasks.parquet",
            "events.parquet",
            "paper_leaderboard.json",
        )
    }
    assert remote.paper_leaderboard is not None and remote.paper_leaderboard == local.paper_leaderboard
    package = remote.package("CSX-008")
    same_files(package.root, layout.package_dir(built_release, "CSX-008"))
    assert remote.package("CSX-008").root == package.root
    assert hub.downloads(".zip") == ["earthverse/core/packages/CSX-008.zip"]


def test_a_release_pinned_to_its_commit_opens_the_same(hub: HubStandin, tmp_path: Path) -> None:
    commit = hub.repos["earthverse/core"].commit
    pinned = open_release("earthverse/core", revision=commit, endpoint=hub.url, cache_dir=tmp_path)
    assert pinned.location == f"earthverse/core@{commit[:12]}"
    assert len(pinned.tasks) == 405


def test_the_private_ground_truth_needs_the_token(
    built_release: Path, hub: HubStandin, tmp_path: Path
) -> None:
    records = read_hidden_records(
        "earthverse/core-private", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path
    )
    assert records == read_hidden_records(built_release)
    with pytest.raises(ReleaseError, match=r"no such folder; as a Hub repo id: .* not found"):
        read_hidden_records("earthverse/core-private", endpoint=hub.url, token=False, cache_dir=tmp_path)


def test_a_missing_folder_that_looks_like_a_repo_id_says_both(tmp_path: Path) -> None:
    unreachable = "http://127.0.0.1:9"
    with pytest.raises(ReleaseError, match=r"'runs/build': no such folder; as a Hub repo id: cannot reach"):
        open_release("runs/build", endpoint=unreachable, cache_dir=tmp_path)
    with pytest.raises(ConnectionError, match=f"cannot reach {unreachable} for 'earthverse/core'"):
        download_event_package("CSX-001", local_dir=tmp_path, endpoint=unreachable)
