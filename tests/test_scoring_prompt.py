"""What a prompt gives: labels offered as labels, and open vocabulary the agent must phrase itself."""

from __future__ import annotations

from evaluator.scoring.answer import score_answer
from evaluator.scoring.matching import Verdict
from evaluator.scoring.prompt import Prompt
from evaluator.scoring.submission import submitted_answer
from evaluator.scoring.units import decompose
from evaluator.traces.recorded import read_recorded_trace


def _recorded_verdicts(source_release, task_id: str, system: str) -> dict[str, Verdict]:
    """Unit id -> verdict for a recorded run of the paper, scored with its task's prompt."""
    record = next(record for record in source_release.records if record.task_id == task_id)
    trace = read_recorded_trace(source_release.trajectories_dir / system / f"{task_id}.json")
    report = score_answer(record.ground_truth, submitted_answer(trace.final_answer), record.question)
    return {result.id: result.verdict for result in report.units}


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
    question = "Required evidence roles are hourly surface pressure and daily minimum temperature."
    assert not Prompt(question).leaves_open(_answer_unit("hourly.surface_pressure"))
    assert not Prompt(question).leaves_open(_answer_unit("data/physical_hazard/file.json"))


def test_a_prose_diagnosis_of_a_title_label_is_for_the_judge(source_release) -> None:
    """CSX-324_Q2's title holds the words of its answer label; the answer template asks for a
    `<compact mechanism diagnosis>`, which gpt-5-5 writes as a sentence: the judge decides it."""
    assert _recorded_verdicts(source_release, "CSX-324_Q2", "gpt-5-5")["answer"] is Verdict.JUDGE_REQUIRED


def test_a_date_the_prompt_gives_is_an_input_not_a_missing_result(source_release) -> None:
    """CSX-315_Q1 tells the agent the event window (`2015-10-01` through `2016-03-31`); an answer that
    does not restate it misses nothing. A date it does restate is still scored."""
    verdicts = _recorded_verdicts(source_release, "CSX-315_Q1", "tencent-hy3")
    assert verdicts["event_window.start"] is Verdict.UNREQUESTED
    assert verdicts["event_window.end"] is Verdict.UNREQUESTED
    primary = {"window_start": "2015-10-01", "peak_date": "2015-11-02"}
    question = "Use the window from 2015-10-01. Report `window_start` and `peak_date`."
    answered = score_answer({"primary_gt": primary}, {"window_start": "2015-10-02"}, question)
    assert {result.id: result.verdict for result in answered.units} == {
        "window_start": Verdict.INCORRECT,
        "peak_date": Verdict.MISSING,
    }
