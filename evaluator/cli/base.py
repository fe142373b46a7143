"""What a CLI command is."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INCOMPLETE = 3
"""Exit status of a command that finished with work left to redo: tasks for `run --resume`, verdicts
for a rescore."""


class CommandError(Exception):
    """A command cannot do what was asked; the message is shown to the user as it is."""


@dataclass(frozen=True)
class Command:
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    on_interrupt: str = ""
    """What to tell a user who stopped the command with Ctrl-C (how to carry on)."""


def add_trajectories_argument(parser: argparse.ArgumentParser) -> None:
    """`--trajectories`: the paper's recorded runs, as `dataset.source.recorded_runs_dir` finds them."""
    parser.add_argument(
        "--trajectories",
        type=Path,
        required=True,
        help="recorded runs: a trajectories folder (<system>/<task_id>.json), or the source release "
        "(archive or folder) that holds one",
    )


def number_above(kind: Callable[[str], float], floor: float, or_equal: bool = False) -> Callable[[str], Any]:
    """An argparse type: a `kind` number above `floor` (or equal to it); argparse names the option when
    a value is refused."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value < floor or (value == floor and not or_equal):
            bound = "at least" if or_equal else "above"
            raise argparse.ArgumentTypeError(f"must be {bound} {floor:g}, got {text}")
        return value

    return parse


positive_float = number_above(float, 0)
positive_int = number_above(int, 0)
non_negative_float = number_above(float, 0, or_equal=True)
