"""`earthverse score --release R --traces <dir or submission> --out scores.jsonl [--judge MODEL|none]`.

A submission whose `dataset_version` is not the release's was run on other tasks or package contents: it
is refused unless `--allow-other-version`; every score records the release version it was computed
against."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from evaluator.cli.base import INCOMPLETE, Command, CommandError
from evaluator.cli.tables import print_leaderboard
from evaluator.scoring.judge import judge_from_option
from evaluator.scoring.metrics import summarize
from evaluator.scoring.pipeline import Scorer, version_mismatch
from evaluator.scoring.scores_io import write_scores
from evaluator.traces.io import METADATA_FILE, SUBMISSION_FILE, TraceFormatError, read_submission
from evaluator.traces.schema import Submission
from loaders.cache import default_cache_dir
from loaders.release import open_ground_truth, open_release

log = logging.getLogger("earthverse.score")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--release", required=True, help="a built release folder (with its hidden ground truth)"
    )
    parser.add_argument(
        "--traces",
        type=Path,
        required=True,
        help="a submission.jsonl, a folder of traces with metadata.json, or a folder of such submissions",
    )
    parser.add_argument(
        "--out", type=Path, required=True, help="scores.jsonl to write (one TaskScore per line)"
    )
    parser.add_argument(
        "--judge", default="none", help='litellm model id of the judge (e.g. gpt-4.1), or "none"'
    )
    parser.add_argument("--api-base", default=None, help="judge API base URL (e.g. a local server)")
    parser.add_argument(
        "--api-key-env", default=None, help="environment variable holding the judge's API key"
    )
    parser.add_argument("--judge-cache", type=Path, default=None, help="verdict cache folder")
    parser.add_argument(
        "--allow-other-version",
        action="store_true",
        help="score a submission whose dataset_version is not the release's (a warning names both; the "
        "scores record the release's)",
    )


def run(arguments: argparse.Namespace) -> int:
    release = open_release(arguments.release)
    hidden = open_ground_truth(arguments.release)
    known = {task.task_id for task in release.tasks}
    judge = judge_from_option(
        arguments.judge,
        cache_dir=arguments.judge_cache or default_cache_dir() / "judge",
        api_base=arguments.api_base,
        api_key_env=arguments.api_key_env,
    )
    submissions = load_submissions(arguments.traces)
    check_versions(submissions, release.version, arguments.allow_other_version)
    unmatched = [s.metadata.system_id for s in submissions if not {t.task_id for t in s.traces} & known]
    if unmatched:
        raise CommandError(
            f"--traces: no trace of {', '.join(unmatched)} is a task of {release.location} "
            "(a submission for another release?); nothing scored"
        )
    scorer = Scorer(release, hidden)
    scored = [scorer.score(submission, judge) for submission in submissions]
    for result in scored:
        for problem in result.problems:
            log.warning("%s: %s", result.system_id, problem)
    write_scores(arguments.out, [score for result in scored for score in result.scores])
    print_leaderboard([summarize(result.scores, release.tasks, result.system_name) for result in scored])
    judged = (
        "no judge: deterministic figures only" if arguments.judge == "none" else f"judge {arguments.judge}"
    )
    count = sum(len(result.scores) for result in scored)
    print(f"{arguments.out}: {count} task scores of {len(scored)} systems ({judged})")
    unjudged = sum(score.judge_status == "unavailable" for result in scored for score in result.scores)
    if unjudged:
        print(
            f"earthverse score: the judge gave no verdict for {unjudged} task(s) (judge_status unavailable, "
            "not scored as zero); score again to retry them, verdicts already given are cached",
            file=sys.stderr,
        )
        return INCOMPLETE
    return 0


def check_versions(submissions: list[Submission], release_version: str, allowed: bool) -> None:
    """Refuse submissions run on another release version than `release_version` (a CommandError naming
    every one and both versions, nothing scored); with `allowed`, warn and score them."""
    mismatches = [
        problem
        for submission in submissions
        if (problem := version_mismatch(submission.metadata, release_version))
    ]
    if mismatches and not allowed:
        raise CommandError(
            f"--traces: {'; '.join(mismatches)}; score against the release they ran on, or pass "
            "--allow-other-version; nothing scored"
        )
    for problem in mismatches:
        log.warning("%s; scored against it anyway (--allow-other-version)", problem)


def load_submissions(path: Path) -> list[Submission]:
    """Every submission at `path`: one file, one traces folder, or a folder of submissions (each a
    `submission.jsonl` or a traces folder with `metadata.json`, in a subfolder). Any that cannot be read,
    and two of one system, are a CommandError naming each: nothing is scored from a partial set."""
    if not path.exists():
        raise CommandError(f"--traces {path}: no such file or folder")
    own = path if path.is_file() else _submission_in(path)
    if own is not None:
        return [read_submission(own)]
    sources = sorted(source for folder in path.iterdir() if (source := _submission_in(folder)) is not None)
    if not sources:
        raise CommandError(f"--traces {path}: holds no {SUBMISSION_FILE} nor traces with {METADATA_FILE}")
    submissions, unreadable = [], []
    for source in sources:
        try:
            submissions.append(read_submission(source))
        except TraceFormatError as error:
            unreadable.append(str(error).splitlines()[0])
    if unreadable:
        raise CommandError(
            f"--traces {path}: {len(unreadable)} submission(s) unreadable: " + "; ".join(unreadable)
        )
    _refuse_repeated_systems(submissions, sources)
    return submissions


def _submission_in(folder: Path) -> Path | None:
    """What to read as the submission in `folder`: its submission.jsonl, else the folder itself when it
    holds traces with metadata.json; None when it holds neither."""
    if (folder / SUBMISSION_FILE).is_file():
        return folder / SUBMISSION_FILE
    return folder if (folder / METADATA_FILE).is_file() else None


def _refuse_repeated_systems(submissions: list[Submission], sources: list[Path]) -> None:
    seen: dict[str, Path] = {}
    for submission, source in zip(submissions, sources, strict=True):
        system_id = submission.metadata.system_id
        if system_id in seen:
            raise CommandError(
                f"--traces: {seen[system_id]} and {source} are both system {system_id!r}; score them apart"
            )
        seen[system_id] = source


COMMAND = Command(
    help="Score submitted traces against the hidden ground truth (answer units, optional LLM judge).",
    add_arguments=add_arguments,
    run=run,
)
