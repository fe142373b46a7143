from __future__ import annotations

import pytest

from evaluator.scoring.cost import RunCost, price
from evaluator.scoring.metrics import bootstrap_interval, compare, summarize
from evaluator.scoring.scores import TaskScore
from loaders.models import Task


def _task(task_id, dimensions=("quantitative_calculation",), difficulty="L2_x", family="flood"):
    return Task(
        task_id=task_id,
        event_id=task_id[:7],
        title="t",
        event_name="e",
        hazard_family=family,
        region="r",
        scale="s",
        difficulty=difficulty,
        primary_dimension=dimensions[0],
        dimensions=list(dimensions),
        task_type="numeric",
        target_family="f",
        file_count=1,
        category_counts={},
        question="q",
    )


def _score(task_id, u, h=None, p=None, status="scored", cost=None, system="sys"):
    return TaskScore(
        system_id=system,
        task_id=task_id,
        event_id=task_id[:7],
        status=status,
        u=u,
        h=h,
        p=p,
        judge_status="scored" if h is not None else "not_requested",
        judge_model="judge",
        cost=cost or RunCost(usd=None, source="unpriced"),
    )


TASKS = [_task("CSX-001_Q1"), _task("CSX-002_Q1", ("causal_chain",), "L3_y", "heat"), _task("CSX-003_Q1")]


def test_bootstrap_is_seeded_and_brackets_the_mean():
    values = [0, 10, 20, 30, 100, 50, 70]
    first, second = bootstrap_interval(values), bootstrap_interval(values)
    assert first == second
    assert first.low < sum(values) / len(values) < first.high
    assert bootstrap_interval([42.0] * 10).low == bootstrap_interval([42.0] * 10).high == 42.0


def test_judged_system_gets_answer_process_core_and_views():
    scores = [
        _score("CSX-001_Q1", 100, 80, 90),
        _score("CSX-002_Q1", 50, 70, 60),
        _score("CSX-003_Q1", 96, 100, 100),
    ]
    system = summarize(scores, TASKS)
    assert system.answer == round((80 + 50 + 96) / 3, 2)
    assert system.process == round((90 + 60 + 100) / 3, 2)
    assert system.core == round(((80 + 90) / 2 + (50 + 60) / 2 + (96 + 100) / 2) / 3, 2)
    assert system.strict95 == round(200 / 3, 2)
    assert system.basis == "core"
    assert system.by_capability == {"causal_chain": 55.0, "quantitative_calculation": round((85 + 98) / 2, 2)}
    assert set(system.by_difficulty) == {"L2", "L3"} and set(system.by_hazard_family) == {"flood", "heat"}


def test_a_task_not_run_counts_as_zero_and_judge_free_rows_have_no_core():
    scores = [_score("CSX-001_Q1", 90), _score("CSX-002_Q1", 0, status="not_run"), _score("CSX-003_Q1", 60)]
    system = summarize(scores, TASKS)
    assert system.unit_accuracy == 50.0 and system.tasks_run == 2
    assert system.core is None and system.core_ci is None and system.basis == "unit_accuracy"
    with pytest.raises(ValueError, match="one score per task"):
        summarize(scores[:2], TASKS)


def test_unpriced_is_never_zero_dollars_and_mixed_is_marked():
    unpriced = summarize([_score(t.task_id, 50) for t in TASKS], TASKS)
    assert unpriced.cost_usd is None and unpriced.cost_source == "unpriced" and unpriced.unpriced_runs == 3
    priced = RunCost(usd=0.5, source="recomputed")
    mixed = summarize(
        [_score("CSX-001_Q1", 1, cost=priced), _score("CSX-002_Q1", 1), _score("CSX-003_Q1", 1)], TASKS
    )
    assert mixed.cost_usd == 0.5 and mixed.cost_source == "mixed" and mixed.unpriced_runs == 2


def test_price_recomputes_from_tokens_with_the_price_table():
    cost = price(["gpt-4o"], 1_000_000, 100_000)
    assert cost.source == "recomputed" and cost.usd == pytest.approx(2.5 + 1.0)
    assert price(["openai/gpt-4o"], 1_000_000, 100_000).usd == cost.usd
    assert price(["no-such-model"], 10, 10, self_reported_usd=0.2) == RunCost(usd=0.2, source="self-reported")
    assert price(["no-such-model"], 10, 10).source == "unpriced"


def test_paired_comparison_counts_wins_and_brackets_the_difference():
    a = [_score(t.task_id, 90, system="a") for t in TASKS]
    b = [_score(t.task_id, u, system="b") for t, u in zip(TASKS, (80, 90, 95), strict=True)]
    result = compare(a, b, metric="u")
    assert (result.a_wins, result.b_wins, result.ties) == (1, 1, 1)
    assert result.mean_difference == round((10 + 0 - 5) / 3, 2)
    assert result.interval.low <= result.mean_difference <= result.interval.high
    with pytest.raises(ValueError, match="undefined"):
        compare(a, b, metric="core")
