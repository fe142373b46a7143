"""Measure a trivial warm `python_exec` call (`PythonSandbox.run("x = 1")`) and, beside it as the peer,
the cold cost of `python -c "import numpy, pandas, xarray"` (what a fresh interpreter per call would pay
before running any model code). Also reports the one-off worker start.

Target (issue 5, item 3): warm p50 at most 50 ms. Figures are medians over several rounds.
Run: python benchmarks/sandbox.py [--rounds 5] [--calls 50] [--package .cache/test-build/packages/CSX-001]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evaluator.sandbox import PythonSandbox, sandbox_available

PROJECT = Path(__file__).resolve().parents[1]
DEFAULT_PACKAGE = PROJECT / ".cache" / "test-build" / "packages" / "CSX-001"
TARGET_P50_S = 0.050


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def warm_round(box: PythonSandbox, calls: int) -> tuple[float, float]:
    """p50 and p95 of `calls` trivial calls on an already started sandbox."""
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        result = box.run("x = 1")
        samples.append(time.perf_counter() - started)
        if not result.ok:
            raise RuntimeError(f"trivial call failed: {result}")
    return percentile(samples, 0.50), percentile(samples, 0.95)


def cold_import() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy, pandas, xarray"], check=True)
    return time.perf_counter() - started


def _package(path: Path | None) -> Path:
    if path is not None:
        return path
    if DEFAULT_PACKAGE.is_dir():
        return DEFAULT_PACKAGE
    folder = Path(tempfile.mkdtemp(prefix="earthverse-bench-package-"))
    (folder / "data").mkdir()
    (folder / "metadata").mkdir()
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--package", type=Path, default=None)
    args = parser.parse_args()
    if not sandbox_available():
        sys.exit("the sandbox needs root and unshare namespaces on this machine")
    package = _package(args.package)
    starts, p50s, p95s = [], [], []
    for _ in range(args.rounds):
        started = time.perf_counter()
        with PythonSandbox(package) as box:
            starts.append(time.perf_counter() - started)
            box.run("x = 1")  # the first call after start is not the steady state
            p50, p95 = warm_round(box, args.calls)
        p50s.append(p50)
        p95s.append(p95)
    cold = statistics.median(cold_import() for _ in range(args.rounds))
    warm_p50 = statistics.median(p50s)
    verdict = "meets" if warm_p50 <= TARGET_P50_S else "MISSES"
    print(f"package: {package}  rounds: {args.rounds} x {args.calls} calls")
    warm_p95 = statistics.median(p95s)
    print(f"warm python_exec trivial call  p50 {warm_p50 * 1000:7.1f} ms   p95 {warm_p95 * 1000:7.1f} ms")
    print(f"peer: cold python -c 'import numpy, pandas, xarray'  {cold * 1000:7.1f} ms")
    print(
        f"one-off worker start (namespaces, mounts, warm imports)  {statistics.median(starts) * 1000:7.1f} ms"
    )
    print(f"target p50 <= {TARGET_P50_S * 1000:.0f} ms: {verdict}")


if __name__ == "__main__":
    main()
