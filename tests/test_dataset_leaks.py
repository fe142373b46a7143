"""dataset.leaks: the real public folder is clean, and every kind of planted leak is caught."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dataset.hub import build_hub
from dataset.leaks import EXCERPT_CHARS, HiddenIndex, LeakFinding
from loaders import layout
from loaders.models import FileEntry, Task


@pytest.fixture(scope="module")
def public(built_release: Path) -> Path:
    return built_release / "hub" / "public"


def hidden_file(out: Path, task_id: str, name: str) -> str:
    return (layout.task_dir(out, task_id.split("_")[0], task_id) / name).read_text(encoding="utf-8")


def public_copy(public: Path, target: Path, names: tuple[str, ...]) -> Path:
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(public / name, target / name)
    return target


def rewrite_zip(path: Path, changes: dict[str, bytes]) -> None:
    """Rewrite an archive with some entries replaced or added."""
    with zipfile.ZipFile(path) as bundle:
        entries = {info.filename: bundle.read(info) for info in bundle.infolist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, data in {**entries, **changes}.items():
            bundle.writestr(name, data)


def set_cell(path: Path, column: str, row: int, value: str) -> None:
    table = pq.read_table(path)
    values = table.column(column).to_pylist()
    values[row] = value
    pq.write_table(table.set_column(table.schema.get_field_index(column), column, pa.array(values)), path)


def kinds(findings: list[LeakFinding]) -> set[tuple[str, str, str]]:
    return {(finding.kind, finding.task_id, finding.file) for finding in findings}


def test_the_real_public_folder_has_no_finding(hidden_index: HiddenIndex, public: Path) -> None:
    assert hidden_index.needle_count > 100_000
    assert hidden_index.scan_public(public) == []


def test_a_solution_paragraph_in_the_card_is_caught(
    built_release: Path, hidden_index: HiddenIndex, public: Path, tmp_path: Path
) -> None:
    folder = public_copy(public, tmp_path, ("README.md",))
    solution = hidden_file(built_release, "CSX-001_Q1", "solution_en.md")
    paragraph = next(
        part for part in solution.split("\n\n") if part.startswith("1. Inspect package metadata")
    )
    with (folder / "README.md").open("a", encoding="utf-8") as card:
        card.write("\n## Worked example\n\n" + paragraph + "\n")
    findings = hidden_index.scan_public(folder)
    assert ("solution", "CSX-001_Q1", "README.md") in kinds(findings)
    assert all(len(finding.excerpt) <= EXCERPT_CHARS for finding in findings)


def test_a_compute_gt_line_in_an_archive_entry_is_caught(
    built_release: Path, hidden_index: HiddenIndex, public: Path, tmp_path: Path
) -> None:
    folder = public_copy(public, tmp_path, ("packages/CSX-001.zip",))
    program = hidden_file(built_release, "CSX-001_Q1", "compute_gt.py")
    line = next(text for text in program.splitlines() if "hot_hour_mean_rh = sum(" in text)
    name = "data/physical_hazard/physical_hazard_001_Open-Meteo_historical_archive.json"
    original = (layout.package_dir(built_release, "CSX-001") / name).read_bytes()
    rewrite_zip(folder / "packages/CSX-001.zip", {name: original + b"\n" + line.encode()})
    findings = hidden_index.scan_public(folder)
    assert [(f.kind, f.task_id, f.entry) for f in findings] == [("compute_gt", "CSX-001_Q1", name)]
    assert "hot_hour_mean_rh" in findings[0].excerpt


def test_a_primary_gt_interpretation_in_a_parquet_cell_is_caught(
    built_release: Path, hidden_index: HiddenIndex, public: Path, tmp_path: Path
) -> None:
    folder = public_copy(public, tmp_path, ("tasks.parquet",))
    truth = json.loads(hidden_file(built_release, "CSX-013_Q1", "computed_gt.json"))
    summary = truth["primary_gt"]["structured_answer"]["final_interpretation"]["summary"]
    set_cell(folder / "tasks.parquet", "title", 0, summary)
    findings = hidden_index.scan_public(folder)
    assert {(f.kind, f.task_id, f.entry) for f in findings} == {("primary_gt", "CSX-013_Q1", "row 0 / title")}


def test_a_rubric_criterion_in_the_events_table_is_caught(
    built_release: Path, hidden_index: HiddenIndex, public: Path, tmp_path: Path
) -> None:
    folder = public_copy(public, tmp_path, ("events.parquet",))
    rubric = json.loads(hidden_file(built_release, "CSX-001_Q1", "rubric.json"))
    criterion = max((c["description"] for c in rubric["criteria"]), key=len)
    set_cell(folder / "events.parquet", "event_name", 5, criterion)
    findings = hidden_index.scan_public(folder)
    assert ("rubric", "CSX-001_Q1", "events.parquet") in kinds(findings)
    assert {f.entry for f in findings} == {"row 5 / event_name"}


def test_hidden_file_names_stray_files_and_unsafe_entries_are_caught(
    hidden_index: HiddenIndex, public: Path, tmp_path: Path
) -> None:
    folder = public_copy(public, tmp_path, ("packages/CSX-001.zip", "README.md"))
    rewrite_zip(
        folder / "packages/CSX-001.zip",
        {"data/other/solution_en.md": b"notes", "../escape.txt": b"x", "metadata/extra.txt": b"y"},
    )
    (folder / "computed_gt.json").write_text("{}", encoding="utf-8")
    (folder / "notes.txt").write_text("scratch", encoding="utf-8")
    (folder / "packages" / "private").mkdir()
    (folder / "packages" / "private" / "ground_truth.parquet").write_bytes(b"")
    found = {(f.kind, f.file, f.entry) for f in hidden_index.scan_public(folder)}
    assert {
        ("hidden_file_name", "packages/CSX-001.zip", "data/other/solution_en.md"),
        ("not_allowed", "packages/CSX-001.zip", "data/other/solution_en.md"),
        ("unsafe_entry", "packages/CSX-001.zip", "../escape.txt"),
        ("not_allowed", "packages/CSX-001.zip", "metadata/extra.txt"),
        ("hidden_file_name", "computed_gt.json", ""),
        ("not_allowed", "computed_gt.json", ""),
        ("not_allowed", "notes.txt", ""),
        ("hidden_file_name", "packages/private/ground_truth.parquet", ""),
    } <= found


def test_a_hidden_column_in_the_tasks_table_is_caught_with_its_text(
    built_release: Path, hidden_index: HiddenIndex, public: Path, tmp_path: Path
) -> None:
    folder = public_copy(public, tmp_path, ("tasks.parquet",))
    table = pq.read_table(folder / "tasks.parquet")
    task_ids = table.column("task_id").to_pylist()
    leaked_ids = task_ids[:12]
    solutions = [
        hidden_file(built_release, task_id, "solution_en.md") if task_id in leaked_ids else ""
        for task_id in task_ids
    ]
    pq.write_table(table.append_column("solution", pa.array(solutions)), folder / "tasks.parquet")
    findings = hidden_index.scan_public(folder)
    assert ("hidden_column", "", "tasks.parquet") in kinds(findings)
    assert {f.task_id for f in findings if f.kind == "solution"} == set(leaked_ids)
    assert all(len(f.excerpt) <= EXCERPT_CHARS for f in findings)


def tiny_layout(out: Path) -> Path:
    """One event and one task, written by hand: a solution sentence also found in the evidence."""
    package = layout.package_dir(out, "CSX-900")
    (package / "data" / "event_reports").mkdir(parents=True)
    (package / "metadata").mkdir()
    evidence = (
        "The gauge at Riverton peaked at 7.42 metres on 3 March after the levee breach upstream of the town."
    )
    (package / "data/event_reports/report.txt").write_text(evidence + "\n", encoding="utf-8")
    event = {"package_id": "CSX-900", "event_name": "Riverton flood", "hazard_family": "river_coastal_flood"}
    (package / "metadata/event.json").write_text(layout.dump_json(event), encoding="utf-8")
    entry = FileEntry(
        file_id="F0001",
        relative_path="data/event_reports/report.txt",
        category="event_reports",
        bytes=len(evidence) + 1,
        sha256_16="0" * 16,
        format="text",
    )
    (package / "metadata/files.csv").write_text(layout.files_csv([entry]), encoding="utf-8")
    question = "Using the report, say when the gauge peaked and what drove the second crest."
    task = Task(
        task_id="CSX-900_Q1",
        event_id="CSX-900",
        title="Second crest",
        event_name="Riverton flood",
        hazard_family="river_coastal_flood",
        region="Europe",
        scale="local",
        difficulty="L3_mechanism",
        primary_dimension="causal_chain",
        dimensions=["causal_chain"],
        task_type="short_answer",
        target_family="mechanism",
        file_count=1,
        category_counts={"event_reports": 1},
        question=question,
    )
    secret = (
        "Therefore the secondary spillway overtopping drove the second crest that flooded the eastern wards."
    )
    rubric = {"criteria": [{"name": "Mechanism", "points": 20, "description": "Names spillway overtopping."}]}
    truth = {"task_id": "CSX-900_Q1", "primary_gt": {"peak_m": 7.42, "driver": secret}, "rubric": rubric}
    folder = layout.task_dir(out, "CSX-900", "CSX-900_Q1")
    folder.mkdir(parents=True)
    files = {
        "question_en.md": question,
        "task.json": layout.dump_json(task.model_dump()),
        "solution_en.md": f"{evidence}\n\n{secret}\n",
        "compute_gt.py": "PEAK_M = max(read_gauge_series(PACKAGE / 'data/event_reports/report.txt'))\n",
        "computed_gt.json": layout.dump_json(truth),
        "rubric.json": layout.dump_json(rubric),
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return out


def test_hidden_text_that_is_also_evidence_is_not_a_leak_but_the_rest_is(tmp_path: Path) -> None:
    out = tiny_layout(tmp_path / "out")
    build_hub(out)
    public = out / "hub" / "public"
    index = HiddenIndex.from_layout(out)
    assert index.scan_public(public) == []
    card = public / "README.md"
    evidence = (layout.package_dir(out, "CSX-900") / "data/event_reports/report.txt").read_text(
        encoding="utf-8"
    )
    card.write_text(card.read_text(encoding="utf-8") + "\n" + evidence, encoding="utf-8")
    assert index.scan_public(public) == []
    card.write_text(
        card.read_text(encoding="utf-8") + "\nThe secondary spillway overtopping drove the second crest.\n"
    )
    assert kinds(index.scan_public(public)) == {("primary_gt", "CSX-900_Q1", "README.md")}


def test_review_notes_are_needles(tmp_path: Path) -> None:
    out = tiny_layout(tmp_path / "out")
    note = "Difficulty comes from separating the levee failure from the later spillway overtopping crest."
    notes = {"difficulty_rationale": note, "dimension_rationale": ""}
    (layout.task_dir(out, "CSX-900", "CSX-900_Q1") / "review_notes.json").write_text(layout.dump_json(notes))
    build_hub(out)
    card = out / "hub" / "public" / "README.md"
    assert HiddenIndex.from_layout(out).scan_public(out / "hub" / "public") == []
    card.write_text(card.read_text(encoding="utf-8") + "\n" + note + "\n", encoding="utf-8")
    expected = {("rationale", "CSX-900_Q1", "README.md")}
    assert kinds(HiddenIndex.from_layout(out).scan_public(out / "hub" / "public")) == expected


def test_scanning_a_missing_folder_is_an_error(hidden_index: HiddenIndex, tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="not a public Hub folder"):
        hidden_index.scan_public(tmp_path / "absent")
