"""What a CLI command is."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass


class CommandError(Exception):
    """A command cannot do what was asked; the message is shown to the user as it is."""


@dataclass(frozen=True)
class Command:
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
