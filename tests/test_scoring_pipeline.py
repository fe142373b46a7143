"""Scoring a submission against the hidden ground truth, deterministically and with the judge
(through litellm against the local OpenAI-compatible stand-in)."""

from __future__ import annotations

import json

import pytest

from evaluator.provider_errors import Backoff
from evaluator.scoring.judge import Judge, NoJudge
from evaluator.scoring.metrics import summarize
from evaluator.scoring.pipeline import ScoredSubmission, Scorer, score_submission
from evaluator.scoring.scores import TaskScore
from evaluator.traces.io import read_submission
from evaluator.traces.schema import FinalAnswer, Submission
from loaders.models import Rubric
from loaders.release import open_ground_truth, open_release
from tests.openai_standin import OpenAIStandin, Reply

KEY_ENV = "EARTHVERSE_TEST_JUDGE_KEY"


@pytest.fixture(scope="module")
def release(built_release):
    return open_release(built_release)


@pytest.fixture(scope="module")
def hidden(built_release):
    return open_ground_truth(built_release)


@pytest.fixture(scope="module")
def imported(imported_runs):
    return imported_runs


def _submission(imported, system_id) -> Submission:
    return read_submission(imported / system_id / "submission.jsonl")


def test_every_task_is_scored_and_tasks_not_run_count_as_zero(imported, release, hidden):
    submission = _submission(imported, "gpt-4o")
    result = score_submission(submission, release, hidden, NoJudge())
    assert len(result.scores) == 405
    run = {trace.task_id for trace in submission.traces}
    scored = [score for score in result.scores if score.status == "scored"]
    assert {score.task_id for score in scored} == run
    assert all(score.u == 0 and score.reason for score in result.scores if score.task_id not in run)
    assert all(score.units is not None and score.diagnostics is not None for score in scored)
    assert all(score.judge_status == "not_requested" for score in result.scores)
    assert all(score.core is None for score in scored)
    assert all(score.core == 0 for score in result.scores if score.task_id not in run)
    system = summarize(result.scores, release.tasks, result.system_name)
    assert system.tasks == 405 and system.tasks_run == len(run)
    assert system.unit_accuracy == round(sum(score.u for score in result.scores) / 405, 2)
    assert system.core is None and system.basis == "unit_accuracy"
    assert system.cost_source == "recomputed" and system.cost_usd > 0


def test_submitted_scores_are_never_read(imported, release, hidden):
    submission = _submission(imported, "gpt-4o")
    honest = score_submission(submission, release, hidden).scores
    boasting = [
        trace.model_copy(update={"recorded": trace.recorded.model_copy(update={"unit_accuracy": 100.0})})
        for trace in submission.traces
    ]
    inflated = score_submission(submission.model_copy(update={"traces": boasting}), release, hidden).scores
    assert [score.u for score in inflated] == [score.u for score in honest]


def test_unknown_tasks_are_reported_not_scored(imported, release, hidden):
    submission = _submission(imported, "gpt-4o")
    stray = submission.traces[0].model_copy(update={"task_id": "CSX-999_Q9", "event_id": "CSX-999"})
    result = score_submission(submission.model_copy(update={"traces": [stray]}), release, hidden)
    assert result.problems == ["CSX-999_Q9: not a task of this release; ignored"]
    assert all(score.status == "not_run" for score in result.scores)


def _verdict(rubric: Rubric, answer_score: float, zero_first: bool = False) -> dict:
    """A valid judge verdict: every criterion at full points (the first at zero when asked)."""
    criteria = [{"name": c.name, "points": c.points, "rationale": "ok"} for c in rubric.criteria]
    if zero_first:
        criteria[0]["points"] = 0
    return {
        "answer_score": answer_score,
        "answer_rationale": "ok",
        "criteria": criteria,
        "critical_errors": [],
    }


def _judged(submission, release, hidden, verdict: dict, tmp_path, monkeypatch) -> ScoredSubmission:
    """`submission` scored with the judge on the local stand-in, which answers `verdict`."""
    monkeypatch.setenv(KEY_ENV, "test-key")
    with OpenAIStandin([Reply(content=json.dumps(verdict))]) as api:
        judge = Judge(
            "openai/standin-judge",
            cache_dir=tmp_path,
            api_base=api.url,
            api_key_env=KEY_ENV,
            backoff=Backoff(initial_s=0.01, factor=2.0, max_s=0.1),
        )
        return score_submission(submission, release, hidden, judge)


def _score_of(result: ScoredSubmission, task_id: str) -> TaskScore:
    return next(score for score in result.scores if score.task_id == task_id)


def test_the_judge_adds_h_and_p_and_a_is_min_of_h_and_u(imported, release, hidden, tmp_path, monkeypatch):
    submission = _submission(imported, "gpt-4o")
    trace = submission.traces[0]
    rubric = hidden[trace.task_id].ground_truth.rubric
    one = submission.model_copy(update={"traces": [trace]})
    result = _judged(one, release, hidden, _verdict(rubric, 99.0, zero_first=True), tmp_path, monkeypatch)
    score = _score_of(result, trace.task_id)
    expected_p = round(100 * (sum(c.points for c in rubric.criteria) - rubric.criteria[0].points) / 20, 2)
    assert score.judge_status == "scored" and score.h == 99.0
    assert round(score.p, 2) == expected_p
    assert score.a == min(99.0, score.u)
    assert score.core == pytest.approx((score.a + score.p) / 2)
    system = summarize(result.scores, release.tasks)  # one task judged, 404 not run: those count as zero
    assert system.basis == "core" and system.judge_model == "openai/standin-judge"
    assert system.core == round(score.core / 405, 2)


def test_a_task_no_unit_can_decide_leaves_u_undefined_and_a_is_h(
    imported, release, hidden, tmp_path, monkeypatch
):
    # CSX-045_Q1 requests no deterministic unit: an answer that gives none of the others leaves U undefined.
    submission = _submission(imported, "gpt-4o")
    trace = submission.traces[0].model_copy(
        update={"task_id": "CSX-045_Q1", "event_id": "CSX-045", "final_answer": FinalAnswer.from_object({})}
    )
    one = submission.model_copy(update={"traces": [trace]})
    result = score_submission(one, release, hidden)
    free = _score_of(result, "CSX-045_Q1")
    assert free.status == "scored" and free.u is None and free.units.scorable == 0
    assert free.a is None and not free.strict
    system = summarize(result.scores, release.tasks)
    assert system.tasks == 405 and system.unit_accuracy == 0.0  # 404 not run; the undefined U left out
    verdict = _verdict(hidden["CSX-045_Q1"].ground_truth.rubric, 70.0)
    judged = _score_of(_judged(one, release, hidden, verdict, tmp_path, monkeypatch), "CSX-045_Q1")
    assert judged.u is None and judged.a == 70.0 and judged.core == pytest.approx((70.0 + judged.p) / 2)


def test_a_warmed_up_scorer_reads_no_package_list_again_and_a_stopped_warm_up_ends_early(
    imported, release, hidden, monkeypatch
):
    submission = _submission(imported, "gpt-4o")
    listed: list[str] = []
    opened = release.package

    def counted(event_id):
        listed.append(event_id)
        return opened(event_id)

    monkeypatch.setattr(release, "package", counted)
    warm = Scorer(release, hidden)
    warm.warm_up()
    assert sorted(set(listed)) == sorted(listed) and len(listed) == len({t.event_id for t in release.tasks})
    listed.clear()
    assert len(warm.score(submission).scores) == len(release.tasks) and listed == []

    checks = iter(range(10))
    stopped = Scorer(release, hidden)
    stopped.warm_up(lambda: next(checks) >= 3)
    assert len(listed) == len({task.event_id for task in release.tasks[:3]})
