"""What a CLI command is."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


class CommandError(Exception):
    """A command cannot do what was asked; the message is shown to the user as it is."""


@dataclass(frozen=True)
class Command:
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def add_trajectories_argument(parser: argparse.ArgumentParser) -> None:
    """`--trajectories`: the paper's recorded runs, as `dataset.source.recorded_runs_dir` finds them."""
    parser.add_argument(
        "--trajectories",
        type=Path,
        required=True,
        help="recorded runs: a trajectories folder (<system>/<task_id>.json), or the source release "
        "(archive or folder) that holds one",
    )
