"""The typed tool definition every package tool follows, and the result it returns.

A tool has a name, a description and a pydantic arguments model (its JSON schema is what an agent is
shown). `Tool.run(package, arguments)` never raises for bad input: a bad path, a missing file or a
binary file read as text comes back as a `ToolResult` with ok false and an actionable message.
"""

from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loaders.models import REPOSITORY_PACKAGE_PREFIX
from loaders.package import EventPackage, PackagePathError

OBSERVATION_CAP = 12_000
"""Most characters of an observation an agent is shown."""

TRUNCATION_MARKER = "\n...[TRUNCATED]..."
"""What the recorded harness appended where it cut a text (file reads, snippets, previews)."""


@functools.cache
def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of an arguments model, built once per model: pydantic takes milliseconds to build
    one, and every model request carries them all. Shared: treat it as read-only."""
    return model.model_json_schema()


class ToolResult(BaseModel):
    """What a tool returned: ok, the observation text (capped) and, when not ok, the error message."""

    model_config = ConfigDict(extra="forbid")

    ok: bool
    text: str = Field(description="The observation shown to the agent, at most OBSERVATION_CAP characters.")
    error: str | None = Field(default=None, description="Why the call failed, with what to do instead.")
    truncated: bool = Field(default=False, description="True when the observation was cut to the cap.")
    original_chars: int = Field(default=0, ge=0, description="Length of the observation before the cap.")


class ToolError(Exception):
    """A call that cannot be served; `text` is the observation, `hint` says what to do instead."""

    def __init__(self, text: str, hint: str = "") -> None:
        super().__init__(text)
        self.text = text
        self.hint = hint


class ToolArguments(BaseModel):
    """Base of every tool's arguments; unknown arguments are ignored as the recorded harness did."""

    model_config = ConfigDict(extra="ignore")


class Tool(ABC):
    """A package-scoped tool. Subclasses set `name`, `description`, `Arguments` and implement `execute`."""

    name: ClassVar[str]
    description: ClassVar[str]
    Arguments: ClassVar[type[ToolArguments]]

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as given to a model in a function-calling request."""
        return json_schema(self.Arguments)

    def spec(self) -> dict[str, Any]:
        """The OpenAI-style function definition of this tool."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters()},
        }

    def run(self, package: EventPackage, arguments: dict[str, Any] | ToolArguments) -> ToolResult:
        """Execute on `package`; every failure (bad arguments, unsafe path, missing file) is an ok=false
        result, never an exception. The text is capped at OBSERVATION_CAP with the cut stated."""
        try:
            parsed = self._parse(arguments)
            return success(self.execute(package, parsed))
        except ToolError as error:
            return failure(error.text, error.hint)
        except PackagePathError as error:
            return failure(self._exception_text("PermissionError", error), f"{error.reason}; {_PATH_HINT}")
        except (OSError, ValueError) as error:
            return failure(self._exception_text(type(error).__name__, error))

    @abstractmethod
    def execute(self, package: EventPackage, arguments: Any) -> str:
        """The observation text of a successful call; raise ToolError for a failure the agent can fix."""

    def _parse(self, arguments: dict[str, Any] | ToolArguments) -> ToolArguments:
        if isinstance(arguments, self.Arguments):
            return arguments
        raw = arguments.model_dump() if isinstance(arguments, BaseModel) else arguments
        try:
            return self.Arguments.model_validate(raw)
        except ValidationError as error:
            missing = [str(e["loc"][0]) for e in error.errors() if e["type"] == "missing" and e["loc"]]
            if missing:
                raise ToolError(
                    self._exception_text("ValueError", ValueError(f"{missing[0]} is required")),
                    f"pass {missing[0]}",
                ) from error
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in error.errors()
            )
            raise ToolError(
                f"invalid arguments for {self.name}: {problems}", "see the tool's schema"
            ) from error

    def _exception_text(self, error_type: str, error: Exception) -> str:
        # The recorded harness's wording, kept so that recorded runs replay exactly.
        message = (
            f"path outside allowed task/package roots: {error.path}"
            if isinstance(error, PackagePathError)
            else str(error)
        )
        return dump_json({"tool": self.name, "error_type": error_type, "error": message})


_PATH_HINT = (
    "paths must be package-relative (data/... or metadata/...) or the repository form "
    f"{REPOSITORY_PACKAGE_PREFIX}<event id>/data/...; use list_package_files to see them"
)


def success(text: str) -> ToolResult:
    """An ok result with `text` capped at OBSERVATION_CAP."""
    capped, truncated = cap_observation(text)
    return ToolResult(ok=True, text=capped, truncated=truncated, original_chars=len(text))


def failure(text: str, hint: str = "") -> ToolResult:
    """A failed result: the observation is `text`; the error adds the hint when there is one."""
    capped, truncated = cap_observation(text)
    error = f"{text}; {hint}" if hint else text
    return ToolResult(ok=False, text=capped, error=error, truncated=truncated, original_chars=len(text))


def cap_observation(text: str, cap: int = OBSERVATION_CAP) -> tuple[str, bool]:
    """`text` cut to at most `cap` characters, the cut stated at the end; and whether it was cut."""
    if len(text) <= cap:
        return text, False
    note = f"\n...[TRUNCATED: observation cut to {cap} of {len(text)} characters]..."
    return text[: cap - len(note)] + note, True


def cut(text: str, max_chars: int) -> str:
    """`text` limited to `max_chars`, with the recorded harness's marker where it was cut."""
    return text if len(text) <= max_chars else text[:max_chars] + TRUNCATION_MARKER


def decode_text(content: bytes) -> str:
    """File bytes as text: UTF-8 without a leading byte-order mark, undecodable bytes replaced."""
    return content.decode("utf-8-sig", errors="replace")


def dump_json(value: Any) -> str:
    """The recorded harness's JSON layout: two-space indent, non-ASCII kept as it is."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def repository_path(package: EventPackage, relative: str) -> str:
    """The repository form of a package-relative path, as the tools report paths."""
    return f"{REPOSITORY_PACKAGE_PREFIX}{package.event_id}/{relative}"


def names_package_place(package: EventPackage, path: str, error: PackagePathError) -> bool:
    """Whether a rejected path still names a place inside the package folder (e.g. `README.md` or the
    package root itself): such a file is simply not there, as the recorded harness answered."""
    if error.reason == "repository path names no file inside the package":
        return True
    if not error.reason.startswith("paths must lie under"):
        return False
    text = path.strip().lstrip("./")
    return text.startswith(repository_path(package, "")) or text.split("/")[0] not in _REPOSITORY_ROOTS


_REPOSITORY_ROOTS = frozenset({REPOSITORY_PACKAGE_PREFIX.split("/")[0], "EarthVerse"})
"""First segments the recorded harness read as repository-root (not package) paths."""


def resolve_file(package: EventPackage, path: str) -> tuple[str, bytes]:
    """(package-relative path, content) of an existing package file; ToolError `file not found` else."""
    try:
        real = package.resolve(path)
    except PackagePathError as error:
        if not names_package_place(package, path, error):
            raise
        raise ToolError(
            f"file not found: {path}", "use list_package_files to see the package's files"
        ) from error
    if not real.is_file():
        raise ToolError(f"file not found: {path}", "use list_package_files to see the package's files")
    return package.lexical(path), real.read_bytes()
