"""Scoring a finished run on this machine when the hidden ground truth is at hand: deterministic figures
(answer units, U, Strict@95, diagnostics), no judge. The scores cover the tasks the run was asked to do."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evaluator.scoring.metrics import summarize
from evaluator.scoring.pipeline import Scorer
from evaluator.scoring.scores import SystemScore, TaskScore
from evaluator.scoring.scores_io import write_scores
from evaluator.traces.schema import Submission
from loaders.models import HiddenTask, Task
from loaders.release import Release, ReleaseError, open_ground_truth

SCORES_FILE = "scores.jsonl"


def hidden_truth(release: Release, ground_truth: str | Path | None) -> dict[str, HiddenTask] | None:
    """The hidden ground truth from `ground_truth`, else from a built release folder; None when neither
    holds it (a public release: nothing to score locally)."""
    source = ground_truth if ground_truth is not None else release.location
    if ground_truth is None and release.kind != "layout":
        return None
    try:
        return open_ground_truth(source)
    except ReleaseError:
        if ground_truth is not None:
            raise
        return None


def score_run(
    release: Release, hidden: dict[str, HiddenTask], submission: Submission, tasks: Sequence[Task], out: Path
) -> tuple[Path, SystemScore]:
    """Score `submission` on `tasks`, write `out/scores.jsonl`, and return it with the system's row."""
    wanted = {task.task_id for task in tasks}
    missing = sorted(wanted - set(hidden))
    if missing:
        raise ValueError(f"the ground truth has no task {missing[0]} ({len(missing)} missing)")
    scored = Scorer(release, hidden).score(submission)
    scores: list[TaskScore] = [score for score in scored.scores if score.task_id in wanted]
    path = out / SCORES_FILE
    write_scores(path, scores)
    return path, summarize(scores, list(tasks), scored.system_name)
