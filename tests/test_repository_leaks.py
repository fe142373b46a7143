"""No task's hidden answer is written in the repository: its code, tests and docs are public, and the
Space ships the code. Failures name the file, line and task, never the value (logs are public too)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from dataset.leaks import HiddenIndex
from dataset.repository_leaks import MIN_PASSAGE_MATCHES, HiddenValues, copied_passages
from loaders import layout
from loaders.release import HiddenRecord

PROJECT = Path(__file__).resolve().parents[1]


def _record(task_id: str, primary_gt: dict) -> HiddenRecord:
    return HiddenRecord(
        task_id=task_id, event_id="CSX-900", ground_truth={"primary_gt": primary_gt}, solution="",
        compute_gt_py="",
    )  # fmt: skip


def test_distinctive_answers_are_needles_unless_a_public_record_states_them(tmp_path: Path) -> None:
    records = {
        "T-1": _record("T-1", {"peak_mm": 7734.2, "count": 12, "year": 2024, "share": 0.5, "given": 5531.7,
                               "label": "slow_onset_compound_drought", "stated": "stated_in_prompt_label"}),
        "T-2": _record("T-2", {"total": 918273, "again": 7734.2, "round": 40000, "span": "about 6150.25 km"}),
    }  # fmt: skip
    public = [b"The prompt asks for stated_in_prompt_label, 5,531.7 and 2024."]
    values = HiddenValues.of(records, public)
    assert values.numbers == {7734.2: "T-1", 918273.0: "T-2", 6150.25: "T-2"}
    assert values.labels == {"slow_onset_compound_drought": "T-1", "about 6150.25 km": "T-2"}
    (tmp_path / "example.py").write_text(
        "x = 7734.20  # fine print\nlimit = '918,273'\nname = 'slow_onset_compound_drought'\ny = 7734\n"
        "z = 5531.7 + 615.025\nkm = 6150.25\n"
    )
    found = [(leak.line, leak.task_id) for leak in values.find({"example.py": tmp_path / "example.py"})]
    assert found == [(1, "T-1"), (2, "T-2"), (3, "T-1"), (6, "T-2")]


def _tracked_text_files() -> dict[str, Path]:
    """Every tracked UTF-8 file: its path in the repository -> the file."""
    listing = subprocess.run(["git", "ls-files"], cwd=PROJECT, capture_output=True, text=True, check=True)
    files = {}
    for relative in listing.stdout.splitlines():
        try:
            (PROJECT / relative).read_bytes().decode("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        files[relative] = PROJECT / relative
    return files


@pytest.mark.release
def test_no_hidden_answer_is_written_in_the_repository(built_release: Path) -> None:
    values = HiddenValues.of_release(built_release)
    assert len(values.numbers) > 500 and len(values.labels) > 100
    files = _tracked_text_files()
    assert "dataset/repository_leaks.py" in files
    leaks = values.find(files)
    assert not leaks, "hidden answers written in: " + ", ".join(
        f"{leak.file}:{leak.line} ({leak.task_id})" for leak in leaks
    )


def _hidden(out: Path, task_id: str, name: str) -> str:
    return (layout.task_dir(out, task_id.split("_")[0], task_id) / name).read_text(encoding="utf-8")


@pytest.mark.release
def test_a_copied_passage_is_found_but_a_shared_phrase_or_code_idiom_is_not(
    built_release: Path, hidden_index: HiddenIndex, tmp_path: Path
) -> None:
    """Read at run time from the built release, never written in the repository."""
    program = _hidden(built_release, "CSX-001_Q1", "compute_gt.py")
    solution = _hidden(built_release, "CSX-001_Q1", "solution_en.md")
    paragraph = max(solution.split("\n\n"), key=len)
    imports = "\n".join(line for line in program.splitlines() if line.startswith(("import ", "from ")))
    files = {
        "program.py": program,
        "paragraph.md": paragraph,
        "imports.py": imports,
        "phrase.md": " ".join(re.findall(r"[a-z0-9]+", paragraph.lower())[:8]),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    paths = {name: tmp_path / name for name in files}
    every_match = {(f.file, f.kind) for f in hidden_index.scan_files(paths)}
    assert {("imports.py", "compute_gt"), ("phrase.md", "solution")} <= every_match
    copies = {(f.file, f.kind, f.task_id) for f in copied_passages(hidden_index, paths)}
    assert {("program.py", "compute_gt", "CSX-001_Q1"), ("paragraph.md", "solution", "CSX-001_Q1")} <= copies
    assert not {name for name, _, _ in copies} & {"imports.py", "phrase.md"}
    assert MIN_PASSAGE_MATCHES["compute_gt"] > MIN_PASSAGE_MATCHES["solution"] > 1


@pytest.mark.release
def test_no_hidden_passage_is_copied_into_the_repository(hidden_index: HiddenIndex) -> None:
    passages = copied_passages(hidden_index, _tracked_text_files())
    assert not passages, "hidden text copied into: " + ", ".join(
        f"{finding.file} ({finding.task_id}: {finding.printable})" for finding in passages
    )
