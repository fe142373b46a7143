"""Bad submissions never crash a scoring run: each bad task scores zero (or low) with the reason kept."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from evaluator.scoring.pipeline import Scorer
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import FinalAnswer, Submission, SubmissionMetadata
from loaders.release import open_ground_truth, open_release

TASK = "CSX-001_Q1"


@pytest.fixture(scope="module")
def scorer(built_release):
    return Scorer(open_release(built_release), open_ground_truth(built_release))


@pytest.fixture(scope="module")
def trace(source_release):
    return read_recorded_trace(source_release.trajectories_dir / "gpt-4o" / f"{TASK}.json")


def _metadata(trace):
    system = trace.system
    return SubmissionMetadata(
        system_name=system.system_name,
        system_id=system.system_id,
        model=system.model,
        harness=system.harness,
        organisation="o",
        contact="c",
        dataset_version="v",
    )


def _score(scorer, trace, answer: FinalAnswer):
    submission = Submission(
        metadata=_metadata(trace), traces=[trace.model_copy(update={"final_answer": answer})]
    )
    return next(score for score in scorer.score(submission).scores if score.task_id == TASK)


def test_the_real_answer_scores_above_zero(scorer, trace):
    assert _score(scorer, trace, trace.final_answer).u > 0


def test_a_prose_answer_scores_zero_with_a_note(scorer, trace):
    score = _score(scorer, trace, FinalAnswer.from_text("I could not finish the analysis in time."))
    assert score.status == "scored" and score.u == 0
    assert score.units.missing == score.units.scorable


def test_nan_and_infinite_numbers_are_incorrect_not_a_crash(scorer, trace):
    poisoned = {key: math.nan for key in trace.final_answer.parsed} | {"peak_daily_tmax_c": math.inf}
    score = _score(scorer, trace, FinalAnswer.from_object(poisoned))
    assert score.u == 0 and all(unit.verdict != "correct" for unit in score.units.units)


def test_a_50_mb_answer_is_not_parsed_and_scores_zero(scorer, trace):
    score = _score(scorer, trace, FinalAnswer.from_text("x" * 50_000_000))
    assert score.u == 0 and any("too large" in note for note in score.units.notes)


def test_duplicated_tasks_are_refused_by_name(trace):
    with pytest.raises(ValidationError, match="CSX-001_Q1"):
        Submission(metadata=_metadata(trace), traces=[trace, trace])


def test_an_integer_beyond_any_float_is_not_a_number_not_a_crash(scorer, trace):
    poisoned = _numbers_replaced(trace.final_answer.parsed, 10**400)

    score = _score(scorer, trace, FinalAnswer.from_object(poisoned))

    assert score.status == "scored"
    numbers = [unit for unit in score.units.units if unit.rule.startswith("number")]
    assert numbers and all(unit.reason.startswith("not a number: 1000") for unit in numbers)
    assert all(unit.verdict != "correct" for unit in numbers)
    assert score.diagnostics.answer_in_trace is None  # no submitted number a float can hold


def test_a_trace_the_scorer_cannot_handle_is_invalid_with_the_reason_and_the_run_goes_on(
    scorer, trace, monkeypatch
):
    def cannot(*_):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("evaluator.scoring.pipeline.score_units", cannot)
    submission = Submission(metadata=_metadata(trace), traces=[trace])

    scored = scorer.score(submission)

    score = next(score for score in scored.scores if score.task_id == TASK)
    assert (score.status, score.u, score.h, score.p) == ("invalid", 0.0, 0.0, 0.0)
    assert score.reason == "the trace cannot be scored (RecursionError)"
    assert scored.problems == [f"{TASK}: {score.reason}"]
    assert len(scored.scores) == 405


def _numbers_replaced(value, number):
    """`value` with every number in it (not flags) replaced by `number`."""
    if isinstance(value, dict):
        return {key: _numbers_replaced(item, number) for key, item in value.items()}
    if isinstance(value, list):
        return [_numbers_replaced(item, number) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number
    return value
