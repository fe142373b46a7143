"""What a prompt gives: labels offered as labels, and open vocabulary the agent must phrase itself."""

from __future__ import annotations

from evaluator.scoring.answer import score_answer
from evaluator.scoring.matching import Verdict
from evaluator.scoring.prompt import Prompt
from evaluator.scoring.submission import submitted_answer
from evaluator.scoring.units import decompose
from evaluator.traces.recorded import read_recorded_trace


def _answer_unit(label: str):
    return next(unit for unit in decompose({"primary_gt": {"answer": label}}) if unit.id == "answer")


def test_a_label_is_given_quoted_in_code_or_as_a_snake_case_word() -> None:
    unit = _answer_unit("sustained_marine_heat_stress")
    for question in (
        'Set answer to "sustained marine heat stress" or "land weather".',
        "Classify it as `sustained_marine_heat_stress` or `land_weather`.",
        "Classify it as sustained_marine_heat_stress when the SST anomaly persists.",
    ):
        assert not Prompt(question).leaves_open(unit), question


def test_the_same_words_in_a_title_or_sentence_leave_the_label_open() -> None:
    unit = _answer_unit("sustained_marine_heat_stress")
    question = "# Arabian Sea Sustained Marine Heat-Stress Diagnosis\n\nReturn a compact mechanism diagnosis."
    assert Prompt(question).leaves_open(unit)


def test_field_names_and_paths_are_extracted_not_authored() -> None:
    question = "Required evidence roles are hourly apparent temperature and daily minimum temperature."
    assert not Prompt(question).leaves_open(_answer_unit("hourly.apparent_temperature"))
    assert not Prompt(question).leaves_open(_answer_unit("data/physical_hazard/file.json"))


def test_a_prose_diagnosis_of_a_title_label_is_for_the_judge(source_release) -> None:
    """CSX-324_Q2's title holds the words of its answer label; the answer template asks for a
    `<compact mechanism diagnosis>`, which gpt-5-5 writes as a sentence: the judge decides it."""
    record = next(record for record in source_release.records if record.task_id == "CSX-324_Q2")
    trace = read_recorded_trace(source_release.trajectories_dir / "gpt-5-5" / "CSX-324_Q2.json")
    report = score_answer(record.ground_truth, submitted_answer(trace.final_answer), record.question)
    verdicts = {result.id: result.verdict for result in report.units}
    assert verdicts["answer"] is Verdict.JUDGE_REQUIRED
