"""`earthverse run --agent KIND[:ARG] --release R|--hub REPO --tasks all|IDS|FILTERS --out runs/<id>`.

Runs an agent over tasks under the paper's protocol, writes one trace per task as it ends and the
run's submission.jsonl, then scores the run locally when the hidden ground truth is at hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluator.agents.registry import AgentOptions, agent_from_option
from evaluator.cli.base import INCOMPLETE, Command, CommandError, positive_float, positive_int
from evaluator.cli.tables import print_leaderboard
from evaluator.harness.budgets import Budgets
from evaluator.harness.local_score import hidden_truth, score_run
from evaluator.harness.runner import Runner, RunOptions, RunSummary, select_tasks
from evaluator.traces.io import read_submission
from loaders.models import Task
from loaders.release import Release, open_release


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent",
        required=True,
        help="litellm:<model> | replay:<submission.jsonl or traces folder> | scripted | "
        "python:<module>:<Class>",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--release", help="a built release folder or a public Hub folder")
    where.add_argument("--hub", help="a Hub dataset repo id, e.g. earthverse/core")
    parser.add_argument("--revision", default=None, help="Hub revision to pin (with --hub)")
    parser.add_argument(
        "--tasks", default="all", help="all | CSX-001_Q1,CSX-002_Q1 | hazard_family=flood,difficulty=L3"
    )
    parser.add_argument("--concurrency", type=positive_int, default=4, help="tasks run at once")
    parser.add_argument("--out", type=Path, required=True, help="run folder, e.g. runs/<id>")
    parser.add_argument("--resume", action="store_true", help="finish an interrupted run in --out")
    parser.add_argument("--review", action="store_true", help="add the bounded final-review phase")
    parser.add_argument("--api-base", default=None, help="model API base URL (e.g. a local server)")
    parser.add_argument("--api-key-env", default=None, help="environment variable holding the API key")
    parser.add_argument(
        "--tool-mode",
        choices=("auto", "native", "json"),
        default="auto",
        help="native tool calling, the paper's JSON action contract, or whichever litellm says the model has",
    )
    parser.add_argument(
        "--timeout", type=positive_float, default=120.0, help="seconds one model call may take"
    )
    parser.add_argument("--system-id", default=None, help="system id of the submission")
    parser.add_argument("--system-name", default=None, help="display name of the system")
    parser.add_argument("--organisation", default="unknown", help="organisation named in the submission")
    parser.add_argument("--contact", default="unknown", help="contact named in the submission")
    parser.add_argument("--ground-truth", default=None, help="hidden ground truth to score with locally")
    parser.add_argument("--no-score", action="store_true", help="do not score the run locally")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(arguments: argparse.Namespace) -> int:
    """0 when every task finished on the agent's account; INCOMPLETE when some hit an infrastructure
    failure and need --resume."""
    release = _release(arguments)
    tasks = select_tasks(release, arguments.tasks)
    budgets = Budgets()
    spec = agent_from_option(
        arguments.agent,
        AgentOptions(
            budgets=budgets,
            api_base=arguments.api_base,
            api_key_env=arguments.api_key_env,
            tool_mode=arguments.tool_mode,
            timeout_s=arguments.timeout,
            system_id=arguments.system_id,
            system_name=arguments.system_name,
        ),
    )
    options = RunOptions(
        out=arguments.out,
        concurrency=arguments.concurrency,
        resume=arguments.resume,
        review=arguments.review,
        budgets=budgets,
        progress=not arguments.no_progress,
        organisation=arguments.organisation,
        contact=arguments.contact,
    )
    summary = Runner(release, spec, arguments.agent, options).run(tasks)
    report(summary)
    if not arguments.no_score:
        score_locally(release, tasks, summary, arguments.ground_truth)
    return INCOMPLETE if summary.statuses.get("infrastructure_failure") else 0


def _release(arguments: argparse.Namespace) -> Release:
    if arguments.hub:
        return open_release(arguments.hub, arguments.revision)
    if arguments.revision:
        raise CommandError("--revision applies to --hub only")
    return open_release(arguments.release)


def report(summary: RunSummary) -> None:
    """Print what the run did and where its files are."""
    statuses = ", ".join(f"{count} {status}" for status, count in sorted(summary.statuses.items()))
    cost = "unpriced" if summary.cost_usd is None else f"${summary.cost_usd:.4f}"
    print(f"ran {summary.ran} task(s), kept {summary.kept} finished earlier: {statuses}")
    print(f"tokens {summary.total_tokens:,}, cost {cost}")
    print(f"traces: {summary.out / 'traces'}")
    print(f"submission: {summary.submission}")
    failed = summary.statuses.get("infrastructure_failure", 0)
    if failed:
        print(
            f"{failed} task(s) hit an infrastructure failure: rerun with --resume before submitting",
            file=sys.stderr,
        )


def score_locally(release: Release, tasks: list[Task], summary: RunSummary, ground_truth: str | None) -> None:
    """Score the run when the hidden ground truth is available (deterministic, no judge)."""
    hidden = hidden_truth(release, ground_truth)
    if hidden is None:
        print("no hidden ground truth at hand: not scored locally (submit to the Space to be scored)")
        return
    path, system = score_run(release, hidden, read_submission(summary.submission), tasks, summary.out)
    print_leaderboard([system])
    print(f"scores: {path} (deterministic figures only, no judge, over the {len(tasks)} task(s) run)")


COMMAND = Command(
    help="Run an agent over tasks under the paper's protocol; write traces, a submission and local scores.",
    add_arguments=add_arguments,
    run=run,
    on_interrupt="Finished tasks are kept: the same command with --resume runs the rest.",
)
