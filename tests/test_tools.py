"""The package tools on the real built release: ok results, errors as results, the observation cap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.tools import OBSERVATION_CAP, FinalAnswerArguments, Tool, ToolArguments, ToolRegistry
from evaluator.tools.base import TRUNCATION_MARKER, cap_observation
from evaluator.tools.registry import default_registry
from loaders.package import EventPackage
from loaders.release import open_release

EVENT = "CSX-001"
REPOSITORY = f"event_packages/standard_event_packages/packages/{EVENT}/"
JSON_FILE = "data/physical_hazard/physical_hazard_001_Open-Meteo_historical_archive.json"
IMAGE = "data/remote_sensing/remote_sensing_005_pre.jpg"
LARGE_FILE = "data/exposure_impact/exposure_impact_005_OpenStreetMap_Overpass_bounded_AOI_slice.json"
BINARY = "data/event_reports/event_reports_001_Locked_package_evidence_report.bin"


@pytest.fixture(scope="module")
def package(built_release: Path) -> EventPackage:
    return open_release(built_release).package(EVENT)


@pytest.fixture(scope="module")
def tools() -> ToolRegistry:
    return default_registry()


def test_registry_holds_the_six_tools_with_json_schemas(tools: ToolRegistry) -> None:
    assert tools.names() == [
        "list_package_files",
        "read_text_file",
        "search_package_files",
        "summarize_table_or_json",
        "inspect_image",
        "python_exec",
    ]
    read = tools.specs()[1]["function"]
    assert read["parameters"]["required"] == ["path"]
    assert set(read["parameters"]["properties"]) == {"path", "max_chars", "offset_chars"}


def test_a_custom_tool_registers_without_controller_changes(package: EventPackage) -> None:
    class Echo(Tool):
        name = "echo"
        description = "Echo the text."

        class Arguments(ToolArguments):
            text: str

        def execute(self, package: EventPackage, arguments: Arguments) -> str:
            return arguments.text

    registry = default_registry()
    registry.register(Echo())
    assert registry.get("echo").run(package, {"text": "hi"}).text == "hi"
    with pytest.raises(ValueError, match="already registered"):
        registry.register(Echo())


def test_list_package_files_counts_and_repository_paths(package: EventPackage, tools: ToolRegistry) -> None:
    result = tools.get("list_package_files").run(package, {"subdir": "data/remote_sensing", "max_files": 2})
    listing = json.loads(result.text)
    assert result.ok and listing["file_count_returned"] == 2
    assert listing["truncated_extra_files"] == listing["file_count_total"] - 2
    first = listing["files"][0]
    assert first["path"] == REPOSITORY + first["package_relative_path"]
    assert first["bytes"] == package.resolve(first["package_relative_path"]).stat().st_size


def test_list_of_a_missing_folder_is_a_result(package: EventPackage, tools: ToolRegistry) -> None:
    result = tools.get("list_package_files").run(package, {"subdir": "data/nowhere"})
    assert not result.ok and result.text == "subdir not found: data/nowhere"
    assert "list '.'" in result.error


def test_read_text_file_window_and_repository_form(package: EventPackage, tools: ToolRegistry) -> None:
    read = tools.get("read_text_file")
    short = read.run(package, {"path": REPOSITORY + JSON_FILE, "max_chars": 100})
    body = json.loads(short.text)
    content = package.read_bytes(JSON_FILE).decode()
    assert short.ok and body["path"] == REPOSITORY + JSON_FILE
    assert body["text"] == content[:100] + TRUNCATION_MARKER
    shifted = json.loads(read.run(package, {"path": JSON_FILE, "max_chars": 50, "offset_chars": 10}).text)
    assert shifted["text"].startswith(content[10:60])


def test_read_states_the_observation_cap(package: EventPackage, tools: ToolRegistry) -> None:
    result = tools.get("read_text_file").run(package, {"path": LARGE_FILE, "max_chars": 100_000})
    assert result.ok and result.truncated
    assert len(result.text) == OBSERVATION_CAP and result.original_chars > OBSERVATION_CAP
    assert f"cut to {OBSERVATION_CAP} of {result.original_chars} characters" in result.text


@pytest.mark.parametrize(
    ("path", "observation"),
    [
        ("data/physical_hazard/nothing.json", "file not found: data/physical_hazard/nothing.json"),
        (BINARY, "not a text-supported suffix: .bin"),
    ],
)
def test_read_errors_are_results(
    package: EventPackage, tools: ToolRegistry, path: str, observation: str
) -> None:
    result = tools.get("read_text_file").run(package, {"path": path})
    assert not result.ok and result.text == observation and result.error.startswith(observation)


@pytest.mark.parametrize(
    "path",
    ["../../etc/passwd", "/etc/passwd", "event_packages/standard_event_packages/packages/CSX-003/data/x"],
)
def test_path_escapes_are_rejected_as_results(package: EventPackage, tools: ToolRegistry, path: str) -> None:
    for name in ("read_text_file", "summarize_table_or_json", "inspect_image"):
        result = tools.get(name).run(package, {"path": path})
        assert not result.ok
        assert json.loads(result.text)["error_type"] == "PermissionError"
        assert "data/..." in result.error


def test_missing_arguments_are_results(package: EventPackage, tools: ToolRegistry) -> None:
    result = tools.get("read_text_file").run(package, {})
    assert not result.ok and json.loads(result.text)["error"] == "path is required"
    assert tools.get("search_package_files").run(package, {"query": " "}).text == "query is required"


def test_search_finds_files_holding_every_term(package: EventPackage, tools: ToolRegistry) -> None:
    result = tools.get("search_package_files").run(
        package, {"query": "latitude longitude", "glob": "data/**/*"}
    )
    found = json.loads(result.text)
    assert result.ok and found["match_count"] == len(found["matches"]) > 0
    assert all(match["path"].startswith(REPOSITORY + "data/") for match in found["matches"])
    bad = tools.get("search_package_files").run(package, {"query": "x", "glob": "**.json"})
    assert not bad.ok and json.loads(bad.text)["error_type"] == "ValueError"


def test_summarize_json_shape_and_numeric_lists(package: EventPackage, tools: ToolRegistry) -> None:
    result = tools.get("summarize_table_or_json").run(package, {"path": JSON_FILE})
    summary = json.loads(result.text) if not result.truncated else None
    assert result.ok
    assert summary is None or summary["type"] == "json"
    assert '"type": "json"' in result.text and '"numeric_list_summaries"' in result.text
    unsupported = tools.get("summarize_table_or_json").run(package, {"path": BINARY})
    assert not unsupported.ok and unsupported.text == "unsupported table/json suffix: .bin"


def test_summarize_csv(package: EventPackage, tools: ToolRegistry) -> None:
    summary = json.loads(
        tools.get("summarize_table_or_json").run(package, {"path": "metadata/files.csv"}).text
    )
    assert summary["type"] == "csv" and summary["rows"] == len(open_rows(package))
    assert "relative_path" in summary["columns"] and len(summary["sample_rows"]) <= 5


def open_rows(package: EventPackage) -> list[str]:
    return package.read_bytes("metadata/files.csv").decode().strip().splitlines()[1:]


def test_inspect_image(package: EventPackage, tools: ToolRegistry) -> None:
    result = tools.get("inspect_image").run(package, {"path": IMAGE})
    image = json.loads(result.text)
    assert result.ok and image["format"] == "JPEG" and len(image["rgb_mean"]) == 3
    not_image = tools.get("inspect_image").run(package, {"path": BINARY})
    assert not not_image.ok and not_image.text.startswith("image inspection failed:")


def test_cap_observation_keeps_short_text() -> None:
    assert cap_observation("abc") == ("abc", False)


def test_final_answer_schema_validates_evidence() -> None:
    answer = FinalAnswerArguments.model_validate(
        {"answer": {"x": 1}, "confidence": 0.5, "evidence": [{"claim": "c", "source_file": JSON_FILE}]}
    )
    assert answer.evidence[0].support_type is None
    with pytest.raises(ValueError):
        FinalAnswerArguments.model_validate({"answer": "a", "confidence": 2})
