"""No task's hidden answer is written in the repository: its code, tests and docs are public, and the
Space ships the code. Failures name the file, line and task, never the value (logs are public too)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from dataset.repository_leaks import HiddenValues
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
    found = [(leak.line, leak.task_id) for leak in values.find(tmp_path, ["example.py"])]
    assert found == [(1, "T-1"), (2, "T-2"), (3, "T-1"), (6, "T-2")]


def _tracked_text_files() -> list[str]:
    listing = subprocess.run(["git", "ls-files"], cwd=PROJECT, capture_output=True, text=True, check=True)
    paths = []
    for relative in listing.stdout.splitlines():
        try:
            (PROJECT / relative).read_bytes().decode("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        paths.append(relative)
    return paths


@pytest.mark.release
def test_no_hidden_answer_is_written_in_the_repository(built_release: Path) -> None:
    values = HiddenValues.of_release(built_release)
    assert len(values.numbers) > 500 and len(values.labels) > 100
    files = _tracked_text_files()
    assert "dataset/repository_leaks.py" in files
    leaks = values.find(PROJECT, files)
    assert not leaks, "hidden answers written in: " + ", ".join(
        f"{leak.file}:{leak.line} ({leak.task_id})" for leak in leaks
    )
