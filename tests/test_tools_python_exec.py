"""The python_exec tool on a real package, through the sandbox."""

from __future__ import annotations

import json

import pytest

from evaluator.sandbox import SandboxLimits, sandbox_available
from evaluator.tools.python_exec import PythonExec
from loaders.release import open_release

pytestmark = pytest.mark.skipif(not sandbox_available(), reason="the sandbox needs root and unshare")


@pytest.fixture(scope="module")
def tool_and_package(built_release):
    tool = PythonExec(SandboxLimits(wall_seconds=5))
    yield tool, open_release(built_release).package("CSX-001")
    tool.close()


def test_code_reads_the_package_and_prints(tool_and_package):
    tool, package = tool_and_package
    code = "import json\nprint(len(json.load(open('/package/metadata/event.json'))['package_id']))\n"
    result = tool.run(package, {"code": code})
    assert result.ok, result.error
    block = json.loads(result.text)
    assert block["returncode"] == 0 and block["stdout"].strip() == "7"


def test_an_error_is_a_result_with_the_traceback(tool_and_package):
    tool, package = tool_and_package
    result = tool.run(package, {"code": "raise ValueError('bad column')"})
    assert not result.ok and "ValueError: bad column" in json.loads(result.text)["stderr"]


def test_a_hanging_snippet_is_stopped_and_the_tool_keeps_working(tool_and_package):
    tool, package = tool_and_package
    stopped = tool.run(package, {"code": "while True: pass"})
    assert not stopped.ok and "stopped" in json.loads(stopped.text)
    assert tool.run(package, {"code": "print(1 + 1)"}).ok


def test_missing_code_is_an_argument_error(tool_and_package):
    tool, package = tool_and_package
    assert not tool.run(package, {}).ok
