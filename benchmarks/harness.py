"""Harness speed, side by side with Inspect AI, and a full replayed run.

`overhead` (default): a 17-step episode (17 tool calls, then the final answer) on one real task, run by
  - ours over HTTP: LiteLLMAgent + Controller against the local OpenAI-compatible stand-in (litellm,
    the real tools in worker threads, trace building), less the model's own time: the same request
    bodies posted bare with httpx to a fresh stand-in (server work, JSON, the socket);
  - ours in process: the same Controller with an agent that emits the same actions (no model client);
  - Inspect AI: `mockllm/model` with custom_outputs giving the same 17 tool calls, equivalent @tool
    tools that call the same package tools, `use_tools` + `generate`.
  - Inspect AI over HTTP (a like-for-like peer of ours over HTTP, beyond the issue's mockllm target):
    the same Inspect episode through its `openai` provider against the same local stand-in, less the
    model's own time measured the same way (its request bodies posted bare).
  The model's own time is nil everywhere (scripted replies), so the time per step is harness overhead
  plus the tools' own work, which is the same code on both sides. Reported: median seconds per step
  over the rounds, for the whole episode and marginally ((T17 - T1) / 16, which removes the fixed
  per-episode set-up), and our/Inspect ratios (target: ours <= 0.5x Inspect's mockllm episode): of the
  medians, and paired (the median over rounds of the ratio of two episodes run back to back; every round
  runs each runner once, starting with the next one each time, as the machine's speed drifts).

`replay405`: every task of the release run with concurrency 8 by the replay agent over one recorded run
  per task (the first system, alphabetically, that has one; tasks without any recorded run end as solver
  failures); wall time and peak RSS (this process plus its sandbox workers, sampled every 0.2 s).

Run from the repository root:
python -m benchmarks.harness [overhead --rounds 5 | replay405 --concurrency 8 [--tasks N]]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from dataset.source import default_archive, open_source
from evaluator.agents.base import AgentView, FinalAnswerAction, ToolCall
from evaluator.agents.litellm_agent import LiteLLMAgent
from evaluator.agents.registry import agent_from_option
from evaluator.harness.budgets import Budgets
from evaluator.harness.controller import Controller, RunTarget
from evaluator.harness.provider import Provider, ProviderSettings
from evaluator.harness.runner import Runner, RunOptions
from evaluator.tools.registry import default_registry
from evaluator.traces.io import write_trace
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import SystemIdentity
from loaders.models import Task
from loaders.release import Release, open_release
from tests.openai_standin import OpenAIStandin, Reply, tool_call

PROJECT = Path(__file__).resolve().parents[1]

DEFAULT_RELEASE = PROJECT / ".cache" / "test-build"
TASK_ID = "CSX-001_Q1"
STEPS = 17
TARGET_RATIO = 0.5
COMPARISONS = (("ours_http", "inspect"), ("ours_in_process", "inspect"), ("ours_http", "inspect_http"))
"""Ratios reported: the issue's target is ours over HTTP against Inspect's mockllm episode."""
SYSTEM = SystemIdentity(system_id="bench", system_name="bench", model="openai/bench")
KEY_ENV = "EARTHVERSE_BENCH_KEY"


def episode_actions(release: Release, steps: int) -> list[tuple[str, dict[str, Any]]]:
    """`steps` cheap, real tool calls on the task's package: a listing, then reads of its text files."""
    files = [path for path in release.package(release.task(TASK_ID).event_id).list_files("data")
             if path.endswith((".json", ".csv", ".md"))]  # fmt: skip
    calls = [("list_package_files", {"subdir": "."})]
    calls += [
        ("read_text_file", {"path": files[n % len(files)], "max_chars": 2000}) for n in range(steps - 1)
    ]
    return calls[:steps]


FINAL = {"answer": {"done": True}, "confidence": 0.5}


class Playlist:
    """An in-process agent emitting the episode's actions, then the final answer."""

    def __init__(self, actions: list[tuple[str, dict[str, Any]]]) -> None:
        self.actions = list(actions)

    def step(self, view: AgentView) -> ToolCall | FinalAnswerAction:
        if not self.actions:
            return FinalAnswerAction(arguments=FINAL)
        name, arguments = self.actions.pop(0)
        return ToolCall(tool=name, arguments=arguments)


async def timed(controller: Controller, agent: Any, target: RunTarget) -> tuple[Any, float]:
    """The trace and the seconds of one episode, timed inside the event loop (not its start and close)."""
    started = time.perf_counter()
    trace = await controller.run(agent, target)
    return trace, time.perf_counter() - started


def ours(release: Release, actions: list[tuple[str, dict[str, Any]]], over_http: bool) -> float:
    """Seconds of our episode; over HTTP, less the model's own time (see `model_time`)."""
    task = release.task(TASK_ID)
    target = RunTarget(task, release.package(task.event_id), SYSTEM, release.version, "bench")
    controller = Controller(Budgets())
    if not over_http:
        return asyncio.run(timed(controller, Playlist(actions), target))[1]
    with OpenAIStandin(replies(actions)) as api:
        settings = ProviderSettings(model="openai/bench", api_base=api.url, api_key_env=KEY_ENV)
        agent = LiteLLMAgent(Provider(settings), Budgets(), native=True)
        trace, elapsed = asyncio.run(timed(controller, agent, target))
        bodies = [request.body for request in api.chat_requests]
    if trace.run_status != "ok" or len(trace.steps) != len(actions):
        raise RuntimeError(f"our episode did not complete: {trace.termination_reason}")
    return elapsed - model_time(replies(actions), bodies)


def replies(actions: list[tuple[str, dict[str, Any]]]) -> list[Reply]:
    scripted = [Reply(tool_calls=[tool_call(name, args, f"c{n}")]) for n, (name, args) in enumerate(actions)]
    return [*scripted, Reply(tool_calls=[tool_call("final_answer", FINAL, "final")])]


def model_time(scripted: list[Reply], bodies: list[dict[str, Any]]) -> float:
    """The model's own time as a client sees it: the same request bodies posted bare (httpx, one
    connection) to a fresh stand-in with the same replies: server work, JSON and the socket."""
    with OpenAIStandin(scripted) as api, httpx.Client(base_url=api.url) as client:
        started = time.perf_counter()
        for body in bodies:
            client.post("/chat/completions", json=body).raise_for_status()
        return time.perf_counter() - started


def inspect_episode(release: Release, actions: list[tuple[str, dict[str, Any]]], log_dir: str) -> float:
    """Seconds of Inspect's episode with `mockllm/model` playing the actions."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    outputs = [
        ModelOutput.for_tool_call("mockllm/model", name, arguments, tool_call_id=f"c{n}")
        for n, (name, arguments) in enumerate(actions)
    ]
    outputs.append(ModelOutput.from_content("mockllm/model", json.dumps(FINAL)))
    for output in outputs:  # a set usage spares mockllm its tiktoken count, which downloads an encoding
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return run_inspect(release, get_model("mockllm/model", custom_outputs=outputs), len(actions), log_dir)


def inspect_http_episode(release: Release, actions: list[tuple[str, dict[str, Any]]], log_dir: str) -> float:
    """Seconds of Inspect's episode through its `openai` provider against the local stand-in, less the
    model's own time (see `model_time`)."""
    from inspect_ai.model import get_model

    # Inspect's generate() ends on a plain answer, not on a final_answer tool call as ours does
    playlist = [*replies(actions)[:-1], Reply(content=json.dumps(FINAL))]
    with OpenAIStandin(playlist) as api:
        model = get_model("openai/bench", base_url=api.url, api_key="bench", responses_api=False)
        elapsed = run_inspect(release, model, len(actions), log_dir)
        bodies = [request.body for request in api.chat_requests]
    return elapsed - model_time(playlist, bodies)


def run_inspect(release: Release, model: Any, tool_calls: int, log_dir: str) -> float:
    """Seconds of one Inspect `eval` of the task with equivalent tools over our package tools."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    task = release.task(TASK_ID)
    package = release.package(task.event_id)
    registry = default_registry()

    @tool
    def list_package_files():
        async def execute(subdir: str = ".", max_files: int = 200) -> str:
            """List the files of the event package.

            Args:
                subdir: Folder to list.
                max_files: Most files to return.
            """
            result = registry.get("list_package_files").run(
                package, {"subdir": subdir, "max_files": max_files}
            )
            return result.text

        return execute

    @tool
    def read_text_file():
        async def execute(path: str, max_chars: int = 12000, offset_chars: int = 0) -> str:
            """Read a text file of the package.

            Args:
                path: Package-relative path.
                max_chars: Most characters to return.
                offset_chars: Offset to start at.
            """
            arguments = {"path": path, "max_chars": max_chars, "offset_chars": offset_chars}
            return registry.get("read_text_file").run(package, arguments).text

        return execute

    episode = Task(
        dataset=[Sample(input=task.question, id=TASK_ID)],
        solver=[use_tools([list_package_files(), read_text_file()]), generate()],
        message_limit=200,
    )
    started = time.perf_counter()
    [log] = eval(episode, model=model, log_dir=log_dir, display="none", log_level="error", score=False)
    elapsed = time.perf_counter() - started
    calls = sum(
        len(message.tool_calls or []) for message in log.samples[0].messages if message.role == "assistant"
    )
    if log.status != "success" or calls != tool_calls:
        raise RuntimeError(f"Inspect's episode did not complete: {log.status}, {calls} tool calls")
    return elapsed


def overhead(release: Release, rounds: int) -> dict[str, Any]:
    os.environ.setdefault(KEY_ENV, "bench")
    long, short = episode_actions(release, STEPS), episode_actions(release, 1)
    with tempfile.TemporaryDirectory() as log_dir:
        runners = {
            "ours_http": lambda steps: ours(release, steps, over_http=True),
            "ours_in_process": lambda steps: ours(release, steps, over_http=False),
            "inspect": lambda steps: inspect_episode(release, steps, log_dir),
            "inspect_http": lambda steps: inspect_http_episode(release, steps, log_dir),
        }
        for runner in runners.values():
            runner(long)  # warm-up: imports, first connections, caches
        samples = [_round(runners, long, short, number) for number in range(rounds)]
    report: dict[str, Any] = {"steps": STEPS, "rounds": rounds}
    for name in runners:
        t17 = statistics.median(sample[name][0] for sample in samples)
        t1 = statistics.median(sample[name][1] for sample in samples)
        report[name] = {
            "episode_s": round(t17, 4),
            "per_step_ms": round(1000 * t17 / STEPS, 2),
            "marginal_per_step_ms": round(1000 * (t17 - t1) / (STEPS - 1), 2),
        }
    for name, peer in COMPARISONS:
        report[f"{name}_vs_{peer}"] = {
            key: round(report[name][key] / report[peer][key], 3)
            for key in ("per_step_ms", "marginal_per_step_ms")
        }
        ratios = [sample[name][0] / sample[peer][0] for sample in samples]
        report[f"{name}_vs_{peer}"]["per_step_paired"] = _spread(ratios)
    report["target_ratio"] = TARGET_RATIO
    return report


def _round(runners: dict[str, Any], long: list, short: list, number: int) -> dict[str, tuple[float, float]]:
    """One round: every runner's long and short episode, starting each round with the next runner so that
    a slow spell of the machine falls on each of them in turn."""
    names = list(runners)
    order = names[number % len(names) :] + names[: number % len(names)]
    return {name: (runners[name](long), runners[name](short)) for name in order}


def _spread(ratios: list[float]) -> dict[str, float]:
    """The median of per-round ratios (each of two runs made back to back), with its lowest and highest."""
    return {"median": round(statistics.median(ratios), 3), "min": round(min(ratios), 3),
            "max": round(max(ratios), 3)}  # fmt: skip


def replay_source(tasks: list[Task], folder: Path) -> int:
    """One recorded run per task into `folder` (first system alphabetically); how many tasks have one."""
    trajectories = open_source(default_archive()).trajectories_dir
    systems = sorted(path for path in trajectories.iterdir() if path.is_dir())
    found = 0
    for task in tasks:
        source = next((system / f"{task.task_id}.json" for system in systems
                       if (system / f"{task.task_id}.json").is_file()), None)  # fmt: skip
        if source is not None:
            write_trace(folder / f"{task.task_id}.json", read_recorded_trace(source))
            found += 1
    return found


class RssSampler(threading.Thread):
    """Peak resident memory of this process plus its children, sampled every `interval` seconds."""

    def __init__(self, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.peak = 0
        self._halt = threading.Event()

    def run(self) -> None:
        me = psutil.Process()
        while not self._halt.is_set():
            total = me.memory_info().rss
            for child in me.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except psutil.NoSuchProcess:
                    continue
            self.peak = max(self.peak, total)
            self._halt.wait(self.interval)

    def stop(self) -> int:
        self._halt.set()
        self.join()
        return self.peak


def replay405(release: Release, concurrency: int, tasks: int | None = None) -> dict[str, Any]:
    """The replayed run of every task (or of the first `tasks`): wall time, peak memory, statuses."""
    selected = release.tasks[:tasks]
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "source"
        recorded = replay_source(selected, source)
        spec = agent_from_option(f"replay:{source}")
        options = RunOptions(out=Path(scratch) / "run", concurrency=concurrency, progress=False)
        sampler = RssSampler()
        sampler.start()
        started = time.perf_counter()
        summary = Runner(release, spec, f"replay:{source}", options).run(selected)
        wall = time.perf_counter() - started
        peak = sampler.stop()
    return {
        "tasks": len(selected),
        "tasks_with_a_recorded_run": recorded,
        "concurrency": concurrency,
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(peak / 2**20, 1),
        "statuses": summary.statuses,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", nargs="?", choices=("overhead", "replay405"), default="overhead")
    parser.add_argument("--release", type=Path, default=DEFAULT_RELEASE)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--tasks", type=int, default=None, help="replay405: only the first N tasks")
    arguments = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    release = open_release(arguments.release)
    if arguments.mode == "overhead":
        print(json.dumps(overhead(release, arguments.rounds), indent=2))
    else:
        print(json.dumps(replay405(release, arguments.concurrency, arguments.tasks), indent=2))


if __name__ == "__main__":
    main()
