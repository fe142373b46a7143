"""`python_exec(code)`: run model-written Python against the package, inside the sandbox.

The observation is a JSON block in the recorded runs' shape (returncode, latency_s, stdout, stderr),
plus what a limit stopped, if anything. One warm sandbox per package is kept until `close()`.
"""

from __future__ import annotations

from pydantic import Field

from evaluator.sandbox import PythonSandbox, SandboxLimits
from evaluator.sandbox.python_exec import ExecResult
from evaluator.tools.base import Tool, ToolArguments, ToolError, dump_json
from loaders.package import EventPackage


class PythonExecArguments(ToolArguments):
    code: str = Field(description="Python source. The package is at /package; data/... paths also work.")


class PythonExec(Tool):
    name = "python_exec"
    description = (
        "Run Python code (numpy, pandas, xarray and the EarthVerse loaders are importable) against the "
        "package, read-only, with no network; print what you need. Returns returncode, stdout and stderr."
    )
    Arguments = PythonExecArguments

    def __init__(self, limits: SandboxLimits | None = None) -> None:
        self._limits = limits
        self._sandboxes: dict[str, PythonSandbox] = {}

    def execute(self, package: EventPackage, arguments: PythonExecArguments) -> str:
        result = self._sandbox(package).run(arguments.code)
        text = observation(result)
        if not result.ok:
            raise ToolError(text, result.killed_reason or "fix the error shown in stderr and run again")
        return text

    def close(self) -> None:
        """Stop every sandbox this tool started."""
        for sandbox in self._sandboxes.values():
            sandbox.close()
        self._sandboxes.clear()

    def _sandbox(self, package: EventPackage) -> PythonSandbox:
        key = str(package.root)
        if key not in self._sandboxes:
            sandbox = PythonSandbox(package.root, self._limits)
            sandbox.start()
            self._sandboxes[key] = sandbox
        return self._sandboxes[key]


def observation(result: ExecResult) -> str:
    """The recorded runs' python observation: returncode, latency, stdout, stderr (and any limit hit)."""
    block: dict[str, object] = {
        "returncode": result.returncode,
        "latency_s": round(result.seconds, 3),
        "stdout": result.stdout,
        "stderr": result.stderr,
    }
    if result.killed_reason:
        block["stopped"] = result.killed_reason
    return dump_json(block)
