"""Reading a key or token from the environment variable the user named, never from a file or argument."""

from __future__ import annotations

import os


def secret_from_env(variable: str | None, what: str) -> str | None:
    """The value of `variable` (None when no variable is named); ValueError naming `what` and the
    variable when it is unset or empty."""
    if variable is None:
        return None
    value = os.environ.get(variable)
    if not value:
        raise ValueError(f"the {what} variable {variable} is not set")
    return value
