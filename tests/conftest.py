"""Shared fixtures: the real source release (unpacked once into the git-ignored cache) and a full
build of it (reused across test sessions while its inputs and the builder are unchanged)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dataset.build import build_release
from dataset.source import SourceRelease, default_archive, open_source
from loaders.cache import default_cache_dir

PROJECT = Path(__file__).resolve().parents[1]
SOURCE_ARCHIVE = default_archive()


def _require_archive() -> Path:
    if SOURCE_ARCHIVE.is_file():
        return SOURCE_ARCHIVE
    message = f"the source release archive is not at {SOURCE_ARCHIVE}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def source_archive() -> Path:
    return _require_archive()


@pytest.fixture(scope="session")
def source_release(source_archive: Path) -> SourceRelease:
    return open_source(source_archive)


@pytest.fixture(scope="session")
def built_release(source_archive: Path) -> Path:
    """A full `earthverse build` of the real release (layout, report, hub/). Read-only for tests.

    EARTHVERSE_BUILT_RELEASE=<out> points the suite at an existing build instead, for quick local runs."""
    if os.environ.get("EARTHVERSE_BUILT_RELEASE"):
        return Path(os.environ["EARTHVERSE_BUILT_RELEASE"])
    out = default_cache_dir() / "test-build"
    return build_release(source_archive, out, jobs=2).out


@pytest.fixture(scope="session")
def hidden_index(built_release: Path):
    """The release's hidden-material n-gram index (several seconds to build, so built once)."""
    from dataset.leaks import HiddenIndex

    return HiddenIndex.from_layout(built_release)


@pytest.fixture(scope="session")
def imported_runs(tmp_path_factory, source_archive: Path) -> Path:
    """The paper's recorded runs imported once per session: `<dir>/<system_id>/submission.jsonl`."""
    from evaluator.cli.import_trajectories import import_trajectories

    out = tmp_path_factory.mktemp("imported") / "runs"
    import_trajectories(source_archive, out)
    return out
