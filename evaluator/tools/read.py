"""`read_text_file(path, max_chars, offset_chars)`: a window of a text file of the package."""

from __future__ import annotations

from pathlib import PurePosixPath

from pydantic import Field

from evaluator.tools.base import (
    Tool,
    ToolArguments,
    ToolError,
    cut,
    decode_text,
    dump_json,
    repository_path,
    resolve_file,
)
from loaders.package import EventPackage

TEXT_SUFFIXES = frozenset({".json", ".html", ".htm", ".csv", ".md", ".txt", ".xml"})
"""The suffixes read as text; everything else is binary to this tool (use summarize or python_exec)."""

DEFAULT_MAX_CHARS = 12_000


class ReadArguments(ToolArguments):
    path: str = Field(description="Package-relative (data/...) or repository-form path of the file.")
    max_chars: int = Field(default=DEFAULT_MAX_CHARS, ge=0, description="Most characters to return.")
    offset_chars: int = Field(default=0, ge=0, description="Character offset to start reading at.")


class ReadTextFile(Tool):
    name = "read_text_file"
    description = (
        "Read a text file of the package (JSON, HTML, CSV, XML, Markdown, plain text), optionally a window "
        "of it: max_chars characters starting at offset_chars. The cut is marked ...[TRUNCATED]...."
    )
    Arguments = ReadArguments

    def execute(self, package: EventPackage, arguments: ReadArguments) -> str:
        suffix = PurePosixPath(arguments.path).suffix.lower()
        relative, content = resolve_file(package, arguments.path)
        if suffix not in TEXT_SUFFIXES:
            raise ToolError(
                f"not a text-supported suffix: {suffix}",
                "inspect images with inspect_image; open archives and binary data with python_exec",
            )
        text = decode_text(content)[arguments.offset_chars :]
        return dump_json({"path": repository_path(package, relative), "text": cut(text, arguments.max_chars)})
