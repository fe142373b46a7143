"""The `earthverse` command line. Each subcommand is a module registered in COMMANDS."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from evaluator.cli import (
    agreement,
    build,
    demo,
    import_trajectories,
    leaderboard,
    replay_tools,
    run,
    score,
    submit,
)
from evaluator.cli.base import Command, CommandError

COMMANDS: dict[str, Command] = {
    "build": build.COMMAND,
    "import-trajectories": import_trajectories.COMMAND,
    "score": score.COMMAND,
    "leaderboard": leaderboard.COMMAND,
    "agreement": agreement.COMMAND,
    "replay-tools": replay_tools.COMMAND,
    "run": run.COMMAND,
    "submit": submit.COMMAND,
    "demo": demo.COMMAND,
}


class HelpWithDefaults(argparse.HelpFormatter):
    """Help that shows each option's default where it has one worth showing."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            not action.option_strings
            or action.default in (None, False, argparse.SUPPRESS)
            or "%(default)" in text
        ):
            return text
        return f"{text} (default: %(default)s)"


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="earthverse", description="EarthVerse benchmark tools.")
    root.add_argument("-v", "--verbose", action="store_true", help="log progress in detail")
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, command in COMMANDS.items():
        command.add_arguments(
            commands.add_parser(
                name, help=command.help, description=command.help, formatter_class=HelpWithDefaults
            )
        )
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Run one `earthverse` command; bad input exits 2 with a one-line message naming what is wrong."""
    arguments = parser().parse_args(argv)
    # Our own progress at INFO; third-party libraries (pypdf, rasterio) only when they warn.
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("earthverse").setLevel(logging.DEBUG if arguments.verbose else logging.INFO)
    command = COMMANDS[arguments.command]
    try:
        return command.run(arguments)
    except KeyboardInterrupt:
        print(
            f"earthverse {arguments.command}: interrupted. {command.on_interrupt}".rstrip(), file=sys.stderr
        )
        return 130
    except (CommandError, ValueError, OSError, LookupError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error  # no repr quotes
        print(f"earthverse {arguments.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
