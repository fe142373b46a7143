"""Agents by kind: `--agent litellm:<model>`, `replay:<source>`, `scripted`, `python:<module>:<Class>`.

Each kind turns the text after its colon (and the run's options) into an `AgentSpec`: who the system
is and a factory that builds a fresh agent per task. A new kind registers in AGENT_KINDS.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evaluator.agents.base import Agent
from evaluator.agents.litellm_agent import LiteLLMAgent, ToolMode, uses_native_tools
from evaluator.agents.replay import load_runs, replay_agent
from evaluator.agents.scripted import ScriptedAgent
from evaluator.harness.budgets import Budgets
from evaluator.harness.provider import Provider, ProviderSettings
from evaluator.provider_errors import DEFAULT_BACKOFF, Backoff
from evaluator.traces.schema import SystemIdentity
from loaders.models import Task

HARNESS = "earthverse-harness"


class AgentOptions(BaseModel):
    """Run options an agent kind may use."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    budgets: Budgets = Budgets()
    api_base: str | None = None
    api_key_env: str | None = None
    tool_mode: ToolMode = "auto"
    timeout_s: float = 120.0
    max_attempts: int = 6
    backoff: Backoff = DEFAULT_BACKOFF
    system_id: str | None = None
    system_name: str | None = None


@dataclass(frozen=True)
class AgentSpec:
    """A system to run: its identity and a factory of a fresh agent per task."""

    system: SystemIdentity
    factory: Callable[[Task], Agent]


def _identity(options: AgentOptions, default_id: str, model: str, harness: str = HARNESS) -> SystemIdentity:
    system_id = options.system_id or default_id
    return SystemIdentity(
        system_id=system_id, system_name=options.system_name or system_id, model=model, harness=harness
    )


def _litellm(model: str, options: AgentOptions) -> AgentSpec:
    if not model:
        raise ValueError("--agent litellm:<model> needs a litellm model id, e.g. litellm:openai/gpt-4.1")
    settings = ProviderSettings(
        model=model,
        api_base=options.api_base,
        api_key_env=options.api_key_env,
        timeout_s=options.timeout_s,
        max_attempts=options.max_attempts,
        backoff=options.backoff,
    )
    settings.api_key()  # a missing key variable fails now, not in every task
    importlib.import_module("evaluator.llm")  # seconds to import: now, not in the first task's first step
    native = uses_native_tools(model, options.tool_mode)
    identity = _identity(options, model.replace("/", "-"), model)
    return AgentSpec(identity, lambda task: LiteLLMAgent(Provider(settings), options.budgets, native))


def _replay(source: str, options: AgentOptions) -> AgentSpec:
    if not source:
        raise ValueError("--agent replay:<source> needs a submission.jsonl or a folder of traces")
    runs = load_runs(Path(source))
    systems = sorted({trace.system.system_id for trace in runs.values()})
    models = sorted({trace.system.model for trace in runs.values()})
    default_id = f"replay-{systems[0]}" if len(systems) == 1 else "replay-mixed"
    identity = _identity(options, default_id, models[0] if len(models) == 1 else "mixed", "earthverse-replay")
    return AgentSpec(identity, lambda task: replay_agent(runs, task.task_id))


def _scripted(argument: str, options: AgentOptions) -> AgentSpec:
    if argument:
        raise ValueError(f"--agent scripted takes no argument, got {argument!r}")
    identity = _identity(options, "scripted-baseline", "none (deterministic)", "earthverse-scripted")
    return AgentSpec(identity, lambda task: ScriptedAgent())


def _python(target: str, options: AgentOptions) -> AgentSpec:
    module_name, _, class_name = target.rpartition(":")
    if not module_name or not class_name:
        raise ValueError(f"--agent python:<module>:<Class>, got python:{target}")
    try:
        agent_class = getattr(_import_user_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise ValueError(
            f"--agent python:{target}: cannot load {class_name} from {module_name}: {error}"
        ) from None
    if not callable(getattr(agent_class, "step", None)):
        raise ValueError(f"--agent python:{target}: {class_name} has no step(view) method")
    default_id = getattr(agent_class, "system_id", class_name.lower())
    model = getattr(agent_class, "model", "unknown")
    identity = _identity(options, default_id, model, getattr(agent_class, "harness", HARNESS))
    return AgentSpec(identity, lambda task: agent_class())


def _import_user_module(name: str) -> object:
    """Import a user's module as `python -m` finds it: from the working directory first."""
    here = str(Path.cwd())
    if here not in sys.path:
        sys.path.insert(0, here)
    return importlib.import_module(name)


AGENT_KINDS: dict[str, Callable[[str, AgentOptions], AgentSpec]] = {
    "litellm": _litellm,
    "replay": _replay,
    "scripted": _scripted,
    "python": _python,
}


def agent_from_option(option: str, options: AgentOptions | None = None) -> AgentSpec:
    """The agent an `--agent KIND[:ARGUMENT]` option names; ValueError naming the known kinds otherwise."""
    kind, _, argument = option.strip().partition(":")
    if kind not in AGENT_KINDS:
        raise ValueError(f"--agent {option!r}: unknown kind {kind!r}; known: {', '.join(AGENT_KINDS)}")
    return AGENT_KINDS[kind](argument, options or AgentOptions())
