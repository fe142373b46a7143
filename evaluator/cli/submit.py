"""`earthverse submit runs/<id> --space <url or repo id> [--token-env HF_TOKEN] [--wait]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluator.cli.base import Command, CommandError, non_negative_float, positive_float
from evaluator.harness.submit import SpaceClient, SpaceReply, SubmitError, submission_file
from evaluator.secrets import secret_from_env


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", type=Path, help="a run folder (with submission.jsonl) or a submission.jsonl")
    parser.add_argument("--space", required=True, help="the leaderboard Space: a URL or a repo id")
    parser.add_argument("--token-env", default=None, help="environment variable holding a Hub token")
    parser.add_argument(
        "--wait", action="store_true", help="poll the Space while the submission is queued (until scored)"
    )
    parser.add_argument(
        "--allow-infrastructure-failures",
        action="store_true",
        help="submit even tasks that ended in an infrastructure failure (they score zero)",
    )
    parser.add_argument("--wait-timeout", type=positive_float, default=600.0, help="seconds to wait at most")
    parser.add_argument(
        "--poll-interval", type=non_negative_float, default=5.0, help="seconds between status polls"
    )


def run(arguments: argparse.Namespace) -> int:
    """0 when the Space took the submission (queued or, with --wait, scored); 1 when it refused it or
    --wait ran out while it was still pending."""
    try:
        file = submission_file(arguments.run, arguments.allow_infrastructure_failures)
        client = SpaceClient(arguments.space, secret_from_env(arguments.token_env, "token"))
        reply = client.submit(file)
        show(reply)
        if arguments.wait and reply.pending:
            reply = client.wait(reply.receipt, arguments.wait_timeout, arguments.poll_interval)
            show(reply)
    except SubmitError as error:
        raise CommandError(str(error)) from error
    if reply.refused:
        print(f"earthverse submit: the Space refused the submission ({reply.status})", file=sys.stderr)
        return 1
    if arguments.wait and reply.pending:
        print(f"earthverse submit: still {reply.status} after {arguments.wait_timeout:g} s", file=sys.stderr)
        return 1
    return 0


def show(reply: SpaceReply) -> None:
    """Print the receipt, the status and the Space's message."""
    print(f"receipt: {reply.receipt}")
    print(f"status: {reply.status}")
    if reply.message:
        print(f"message: {reply.message}")


COMMAND = Command(
    help="Upload a run's submission.jsonl to the leaderboard Space (and optionally wait for its status).",
    add_arguments=add_arguments,
    run=run,
)
