"""The agent registry: every kind by its `--agent` option, a user's own agent class, replay sources in
each form, and clear errors for options that name nothing runnable."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from evaluator.agents.base import AgentView, FinalAnswerAction, ToolCall
from evaluator.agents.registry import AGENT_KINDS, AgentOptions, agent_from_option
from evaluator.agents.replay import ReplayAgent, load_runs
from evaluator.agents.scripted import ScriptedAgent
from evaluator.harness.controller import Controller, RunTarget
from evaluator.traces.io import write_submission, write_trace
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import Submission, SubmissionMetadata, Trace
from loaders.release import open_release

TASK_ID = "CSX-321_Q1"


class EchoAgent:
    """A user's agent as the README shows it: one async step method."""

    system_id = "echo"
    model = "none"

    async def step(self, view: AgentView) -> ToolCall | FinalAnswerAction:
        if view.last is None:
            return ToolCall(tool="search_package_files", arguments={"query": "flood"})
        return FinalAnswerAction(arguments={"answer": {"matches_seen": view.last.ok}})


class NoStep:
    """Not an agent."""


@pytest.fixture(scope="module")
def recorded(source_release: Any) -> Trace:
    return read_recorded_trace(source_release.trajectories_dir / "gpt-4o" / f"{TASK_ID}.json")


def test_the_kinds_are_registered() -> None:
    assert list(AGENT_KINDS) == ["litellm", "replay", "scripted", "python"]


def test_a_users_agent_class_plugs_in_and_runs(built_release: Path) -> None:
    spec = agent_from_option("python:tests.test_agents_registry:EchoAgent", AgentOptions(system_name="Echo"))
    release = open_release(built_release)
    task = release.task(TASK_ID)

    target = RunTarget(task, release.package(task.event_id), spec.system, release.version, "x")
    trace = asyncio.run(Controller().run(spec.factory(task), target))

    assert (spec.system.system_id, spec.system.system_name, spec.system.model) == ("echo", "Echo", "none")
    assert [step.action for step in trace.steps] == ["search_package_files"]
    assert trace.final_answer.parsed == {"matches_seen": True}


@pytest.mark.parametrize(
    ("option", "problem"),
    [
        ("python:tests.test_agents_registry:NoStep", "NoStep has no step\\(view\\) method"),
        ("python:tests.test_agents_registry:Missing", "cannot load Missing"),
        ("python:nomodule", "python:<module>:<Class>"),
        ("scripted:extra", "scripted takes no argument"),
        ("litellm:", "needs a litellm model id"),
        ("replay:", "needs a submission.jsonl or a folder"),
        ("replay:/no/such/place", "no such file or folder"),
        ("magic", "unknown kind 'magic'"),
    ],
)
def test_options_that_name_nothing_runnable_are_refused(option: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        agent_from_option(option)


def test_replay_reads_recorded_runs_trace_folders_and_submissions(
    recorded: Trace, source_release: Any, tmp_path: Path
) -> None:
    recorded_dir = source_release.trajectories_dir / "gpt-4o"
    traces = tmp_path / "traces"
    write_trace(traces / f"{TASK_ID}.json", recorded)
    metadata = SubmissionMetadata(
        system_name="GPT-4o", system_id="gpt-4o", model="gpt-4o", harness="h", organisation="o", contact="c",
        dataset_version="d",
    )  # fmt: skip
    write_submission(tmp_path / "submission.jsonl", Submission(metadata=metadata, traces=[recorded]))

    for source in (recorded_dir, traces, tmp_path / "submission.jsonl"):
        runs = load_runs(source)
        assert runs[TASK_ID].final_answer == recorded.final_answer
    spec = agent_from_option(f"replay:{traces}")
    assert spec.system.system_id == "replay-gpt-4o" and spec.system.harness == "earthverse-replay"


def test_the_scripted_agent_is_the_default_baseline() -> None:
    spec = agent_from_option("scripted")

    assert spec.system.system_id == "scripted-baseline"
    assert isinstance(spec.factory(None), ScriptedAgent)  # type: ignore[arg-type]


def test_a_replay_agent_answers_with_the_recorded_answer_once_research_closes(recorded: Trace) -> None:
    agent = ReplayAgent(recorded)
    view = AgentView(
        task_id=TASK_ID, event_id="CSX-321", question="q", tools=[], phase="finalize", turn=1, turns_left=1,
        seconds_left=10,
    )  # fmt: skip

    action = agent.step(view)

    assert isinstance(action, FinalAnswerAction)
    assert action.arguments["answer"] == recorded.final_answer.parsed


def test_a_user_agent_module_is_found_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "earthverse_user_agents.py").write_text(
        "class MyAgent:\n    system_id = 'mine'\n\n    async def step(self, view):\n        return None\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [path for path in sys.path if path not in ("", ".", str(tmp_path))])

    spec = agent_from_option("python:earthverse_user_agents:MyAgent")

    assert spec.system.system_id == "mine"
    assert type(spec.factory(None)).__module__ == "earthverse_user_agents"  # type: ignore[arg-type]
    sys.modules.pop("earthverse_user_agents")
