"""The tool registry: which tools exist, by name. A custom tool registers here, no controller changes."""

from __future__ import annotations

from collections.abc import Iterator

from evaluator.tools.base import Tool


class ToolRegistry:
    """Tools by name, in registration order."""

    def __init__(self, tools: list[Tool] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool, replace: bool = False) -> Tool:
        """Add `tool`; a second tool of the same name is a ValueError unless `replace`."""
        if tool.name in self._tools and not replace:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def get(self, name: str) -> Tool | None:
        """The tool called `name`, or None when there is none (a model may name any tool)."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[dict[str, object]]:
        """The function definitions of every registered tool, for a function-calling request."""
        return [tool.spec() for tool in self._tools.values()]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())


def default_registry() -> ToolRegistry:
    """A fresh registry with the six package tools; python_exec starts its sandbox on first use (call its
    `close()` when done)."""
    from evaluator.tools.inspect_image import InspectImage
    from evaluator.tools.list_files import ListPackageFiles
    from evaluator.tools.python_exec import PythonExec
    from evaluator.tools.read import ReadTextFile
    from evaluator.tools.search import SearchPackageFiles
    from evaluator.tools.summarize import SummarizeTableOrJson

    return ToolRegistry(
        [
            ListPackageFiles(),
            ReadTextFile(),
            SearchPackageFiles(),
            SummarizeTableOrJson(),
            InspectImage(),
            PythonExec(),
        ]
    )
