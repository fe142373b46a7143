"""Reading and writing task scores: `scores.jsonl`, one TaskScore per line."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from evaluator.scoring.scores import TaskScore
from evaluator.traces.io import describe
from loaders.atomic import write_text_atomic


def write_scores(path: Path, scores: list[TaskScore]) -> None:
    """All task scores, one JSON object per line, written atomically."""
    write_text_atomic(path, (score.model_dump_json() + "\n" for score in scores))


def read_scores(path: Path) -> list[TaskScore]:
    """The task scores of a scores.jsonl; a ValueError names the file and line of a bad record."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such scores file")
    scores = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                scores.append(TaskScore.model_validate_json(line))
            except ValidationError as error:
                raise ValueError(f"{path}:{number}: not a task score: {describe(error)}") from error
    return scores


def by_system(scores: list[TaskScore]) -> dict[str, list[TaskScore]]:
    """Task scores grouped by system id, in order of first appearance."""
    systems: dict[str, list[TaskScore]] = {}
    for score in scores:
        systems.setdefault(score.system_id, []).append(score)
    return systems
