"""Measure `earthverse build` on the real release: a full build (all 405 GT programs, --jobs 2) and
a rebuild with unchanged input, medians of several runs; beside them, as the peer floor, the time
to merely unpack the source archive with tarfile in this same process.

Targets (issue 2): full build at most 180 s on the 2-core machine; unchanged rebuild at most 20 s.
Run: python benchmarks/build_release.py [--runs 3] [--archive PATH]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tarfile
import tempfile
import time
from pathlib import Path

from dataset.build import build_release
from dataset.source import default_archive

FULL_TARGET_S, REBUILD_TARGET_S = 180.0, 20.0


def _timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _unpack_only(archive: Path) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        return _timed(lambda: tarfile.open(archive, "r:xz").extractall(scratch, filter="data"))


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=3)
    options.add_argument("--archive", type=Path, default=default_archive())
    arguments = options.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        cache, out = Path(scratch) / "cache", Path(scratch) / "out"
        first_unpack_and_build = _timed(
            lambda: build_release(arguments.archive, out, jobs=2, cache_dir=cache)
        )
        full = [
            _timed(lambda: build_release(arguments.archive, out, jobs=2, force=True, cache_dir=cache))
            for _ in range(arguments.runs)
        ]
        rebuild = [
            _timed(lambda: build_release(arguments.archive, out, jobs=2, cache_dir=cache))
            for _ in range(arguments.runs)
        ]
        totals = json.loads((out / "release_report.json").read_text())["totals"]
        shutil.rmtree(out)
    unpack = [_unpack_only(arguments.archive) for _ in range(arguments.runs)]
    figures = {
        "cold_build_including_unpack_s": round(first_unpack_and_build, 1),
        "full_build_median_s": round(statistics.median(full), 1),
        "full_build_runs_s": [round(value, 1) for value in full],
        "unchanged_rebuild_median_s": round(statistics.median(rebuild), 2),
        "peer_unpack_only_median_s": round(statistics.median(unpack), 1),
        "full_build_over_unpack": round(statistics.median(full) / statistics.median(unpack), 2),
        "full_build_target_met": statistics.median(full) <= FULL_TARGET_S,
        "rebuild_target_met": statistics.median(rebuild) <= REBUILD_TARGET_S,
        "regenerated": totals["regenerated"],
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
