"""Per-system leaderboard figures from per-task scores: means, views, bootstrap intervals, and paired
comparisons between two systems."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel

from evaluator.scoring.scores import Interval, SystemScore, TaskScore
from loaders.models import Task

BOOTSTRAP_RESAMPLES = 5000
BOOTSTRAP_SEED = 2026
DIAGNOSTICS = ("evidence_recall", "citation_validity", "answer_in_trace")
TRAJECTORY = (
    "rounds",
    "tool_calls",
    "file_reads",
    "unique_files",
    "python_calls",
    "latency_s",
    "total_tokens",
)


def bootstrap_interval(
    values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> Interval:
    """The 95% percentile interval of the mean of `values`, resampling tasks with replacement."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return Interval(low=0.0, high=0.0)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Interval(low=round(float(low), 2), high=round(float(high), 2))


def summarize(scores: Sequence[TaskScore], tasks: Sequence[Task], system_name: str = "") -> SystemScore:
    """One system's row; `scores` holds exactly one TaskScore per task of `tasks` (not-run ones at zero)."""
    by_id = {score.task_id: score for score in scores}
    known = {task.task_id for task in tasks}
    missing = sorted(known - set(by_id))
    unknown = sorted(set(by_id) - known)
    if missing or unknown or len(scores) != len(tasks):
        raise ValueError(
            f"summarize needs one score per task; missing {missing[:5]}, not in the release {unknown[:5]}, "
            f"{len(scores)} scores for {len(tasks)} tasks"
        )
    ordered = [by_id[task.task_id] for task in tasks]
    cores = [score.core for score in ordered]
    judged = all(core is not None for core in cores)
    basis = cores if judged else [score.u for score in ordered]
    units = [score.u for score in ordered if score.u is not None]
    run = [score for score in ordered if score.status == "scored"]
    return SystemScore(
        system_id=ordered[0].system_id,
        system_name=system_name,
        tasks=len(ordered),
        tasks_run=len(run),
        **(_judged_figures(ordered) if judged else _JUDGE_FREE),
        strict95=_mean([100.0 * score.strict for score in ordered]),
        unit_accuracy=_mean(units),
        unit_accuracy_ci=bootstrap_interval(units),
        basis="core" if judged else "unit_accuracy",
        by_capability=_view(basis, tasks, lambda task: task.dimensions),
        by_difficulty=_view(basis, tasks, lambda task: [task.difficulty_level]),
        by_hazard_family=_view(basis, tasks, lambda task: [task.hazard_family]),
        diagnostics={
            name: _mean_known([getattr(s.diagnostics, name, None) for s in run]) for name in DIAGNOSTICS
        },
        trajectory={name: _mean_known([getattr(s.trajectory, name) for s in run]) for name in TRAJECTORY},
        total_tokens=_sum_known([score.trajectory.total_tokens for score in run]),
        **_cost(run),
    )


_JUDGE_FREE: dict[str, object] = {"judge_model": None, "answer": None, "process": None, "core": None}


def _judged_figures(scores: list[TaskScore]) -> dict[str, object]:
    cores = [float(score.core) for score in scores]  # type: ignore[arg-type]
    return {
        "judge_model": next((score.judge_model for score in scores if score.judge_model), None),
        "answer": _mean([float(score.a) for score in scores]),  # type: ignore[arg-type]
        "process": _mean([float(score.p) for score in scores]),  # type: ignore[arg-type]
        "core": _mean(cores),
        "core_ci": bootstrap_interval(cores),
    }


class PairedComparison(BaseModel):
    """System A minus system B on the same tasks, with a bootstrap interval of the mean difference."""

    metric: str
    system_a: str
    system_b: str
    tasks: int
    mean_difference: float
    interval: Interval
    a_wins: int
    b_wins: int
    ties: int


def compare(a: Sequence[TaskScore], b: Sequence[TaskScore], metric: str = "core") -> PairedComparison:
    """Paired comparison of two systems on the tasks both were scored on (`metric`: core, u, a or p)."""
    b_by_id = {score.task_id: score for score in b}
    pairs = [(score, b_by_id[score.task_id]) for score in a if score.task_id in b_by_id]
    differences = [_metric(x, metric) - _metric(y, metric) for x, y in pairs]
    return PairedComparison(
        metric=metric,
        system_a=a[0].system_id if a else "",
        system_b=b[0].system_id if b else "",
        tasks=len(pairs),
        mean_difference=_mean(differences),
        interval=bootstrap_interval(differences),
        a_wins=sum(1 for difference in differences if difference > 0),
        b_wins=sum(1 for difference in differences if difference < 0),
        ties=sum(1 for difference in differences if difference == 0),
    )


def _metric(score: TaskScore, metric: str) -> float:
    value = getattr(score, metric)
    if value is None:
        raise ValueError(
            f"{score.system_id} {score.task_id}: {metric} is undefined (no judge verdict, or U of a "
            "judge-only task)"
        )
    return float(value)


def _view(
    values: Sequence[float | None], tasks: Sequence[Task], groups: Callable[[Task], list[str]]
) -> dict[str, float]:
    """Mean of `values` per group; a task whose value is undefined (U of a judge-only task) is left out."""
    grouped: dict[str, list[float]] = defaultdict(list)
    for value, task in zip(values, tasks, strict=True):
        if value is None:
            continue
        for group in groups(task):
            grouped[group].append(value)
    return {group: _mean(members) for group, members in sorted(grouped.items())}


def _cost(run: list[TaskScore]) -> dict[str, object]:
    priced = [score.cost for score in run if score.cost.usd is not None]
    sources = {cost.source for cost in priced}
    if not priced:
        source = "unpriced"
    elif len(priced) < len(run) or len(sources) > 1:
        source = "mixed"
    else:
        source = sources.pop()
    return {
        "cost_usd": round(sum(cost.usd or 0.0 for cost in priced), 4) if priced else None,
        "cost_source": source,
        "unpriced_runs": len(run) - len(priced),
    }


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 2) if values else 0.0


def _mean_known(values: Sequence[float | int | None]) -> float | None:
    known = [float(value) for value in values if value is not None]
    return round(sum(known) / len(known), 2) if known else None


def _sum_known(values: Sequence[int | None]) -> int | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None
