"""The scripts in benchmarks/ keep working: each runs as a person runs it, on the real release, with the
smallest sizes it takes, and prints its figures. Timings are never asserted here (the scripts report
them against their targets); the suite only guards the scripts against rot as the code under them moves.
`build_release` is left out: it is a full build, which the suite's release fixture already runs."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.release


def _commands(release: Path) -> dict[str, list[str]]:
    at = ["--release", str(release)]
    package = str(release / "packages" / "CSX-001")
    # longest first, so that the two workers finish at about the same time
    return {
        "space": ["space", "--runs", "1", "--stored", "3", *at],
        "harness_overhead": ["harness", "overhead", "--rounds", "1", *at],
        "tools": ["tools", "--events", "1", "--rounds", "1", "--python-calls", "1", *at],
        "agreement": ["agreement", "--runs", "1", "--worst", "2"],
        "scoring": ["scoring", "--runs", "1", *at],
        "harness_replay": ["harness", "replay405", "--tasks", "6", "--concurrency", "2", *at],
        "sandbox": ["sandbox", "--rounds", "1", "--calls", "3", "--package", package],
    }


def _run(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", f"benchmarks.{arguments[0]}", *arguments[1:]]
    return subprocess.run(command, cwd=PROJECT, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def printed(built_release: Path) -> dict[str, str]:
    """What each benchmark printed; two at a time, as the machine has two cores."""
    commands = _commands(built_release)
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(commands, pool.map(_run, commands.values()), strict=True))
    failed = {name: run.stderr[-2000:] for name, run in done.items() if run.returncode != 0}
    assert failed == {}, f"benchmarks that failed: {failed}"
    return {name: run.stdout for name, run in done.items()}


def _json_of(output: str) -> dict:
    return json.loads(output[output.index("{") :])


def test_scoring_rescores_a_full_submission(printed: dict[str, str]) -> None:
    figures = _json_of(printed["scoring"])
    assert figures["tasks"] == 405
    assert figures["rescoring_median_s"] > 0 and isinstance(figures["target_met"], bool)


def test_agreement_covers_every_recorded_run(printed: dict[str, str]) -> None:
    overall = next(line for line in printed["agreement"].splitlines() if line.startswith("overall"))
    fields = dict(part.split("=") for part in overall.replace("= ", "=").split()[1:])
    assert int(fields["n"]) == 1591
    assert 0.5 < float(fields["pearson"]) <= 1 and 0 <= float(fields["mae"]) < 50
    assert "the 2 runs that disagree most" in printed["agreement"]
    assert "reference: paper unit accuracy vs its H" in printed["agreement"]


def test_sandbox_reports_warm_calls_beside_a_cold_interpreter(printed: dict[str, str]) -> None:
    output = printed["sandbox"]
    assert "warm python_exec trivial call" in output and "cold python -c" in output
    assert "target p50 <= 50 ms" in output


def test_tools_reports_every_tool_beside_inspect(printed: dict[str, str]) -> None:
    rows = {line.split()[0] for line in printed["tools"].splitlines() if line.strip()}
    tools = {"list_package_files", "read_text_file", "search_package_files", "summarize_table_or_json"}
    assert tools | {"inspect_image", "python_exec"} <= rows


def test_harness_overhead_compares_ours_with_inspect(printed: dict[str, str]) -> None:
    figures = _json_of(printed["harness_overhead"])
    for runner in ("ours_http", "ours_in_process", "inspect", "inspect_http"):
        assert figures[runner]["per_step_ms"] > 0
    paired = figures["ours_http_vs_inspect"]["per_step_paired"]
    assert paired["min"] <= paired["median"] <= paired["max"] and figures["steps"] == 17


def test_harness_replay_runs_every_selected_task(printed: dict[str, str]) -> None:
    figures = _json_of(printed["harness_replay"])
    assert figures["tasks"] == 6 == sum(figures["statuses"].values())
    assert figures["statuses"].get("ok", 0) == figures["tasks_with_a_recorded_run"] > 0
    assert figures["peak_rss_mb"] > 0


def test_space_reports_first_render_and_upload_to_visible(printed: dict[str, str]) -> None:
    output = printed["space"]
    assert "first render, 3 stored submissions: median" in output
    assert "405-task submission, upload to visible: median" in output
