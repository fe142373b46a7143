"""A responder for the OpenAI stand-in that plays recorded runs back as a model would send them.

Each request is matched to its task by the task id in the harness's task message; the task's next
recorded step goes back as a tool call (native tool calling when the request offers tools, else the
JSON action contract), and after the last step the recorded final answer. Faults can be queued for a
task's n-th round (0-based): they are served in its place without consuming the step, so the harness
must retry (or repair) and then get the real reply.

    playback = Playback({trace.task_id: trace})
    playback.inject("CSX-001_Q1", 2, HttpError.rate_limited(1))
    with OpenAIStandin(responder=playback) as api: ...
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict, deque
from typing import Any

from evaluator.agents.replay import replayed_answer, replayed_arguments
from evaluator.traces.schema import Trace
from tests.openai_standin import Reply, Scripted, tool_call

_TASK = re.compile(r"Task (CSX-\d{3}_Q\d+) on event package")
FINAL_ANSWER = "final_answer"


def broken_tool_call(name: str = "read_text_file") -> Reply:
    """A tool call whose arguments are not JSON (a model cut off mid-call)."""
    call = {
        "id": "call_broken",
        "type": "function",
        "function": {"name": name, "arguments": '{"path": "data/'},
    }
    return Reply(tool_calls=[call])


def schema_failing_answer(native: bool = True) -> Reply:
    """A final answer that does not fit the final_answer schema (no answer, confidence out of range)."""
    arguments = {"confidence": 7, "evidence": "none"}
    if native:
        return Reply(tool_calls=[tool_call(FINAL_ANSWER, arguments, call_id="call_bad_final")])
    return Reply(json.dumps({"action": FINAL_ANSWER, **arguments}))


class Playback:
    """Plays `runs` ({task id: recorded trace}) back, round by round, with optional injected faults."""

    def __init__(self, runs: dict[str, Trace]) -> None:
        self.runs = runs
        self.rounds: dict[str, int] = defaultdict(int)
        self._faults: dict[tuple[str, int], deque[Scripted]] = defaultdict(deque)
        self._lock = threading.Lock()

    def inject(self, task_id: str, round_index: int, *faults: Scripted) -> None:
        """Serve `faults` (in order) before the real reply of the task's round `round_index`."""
        with self._lock:
            self._faults[(task_id, round_index)].extend(faults)

    def __call__(self, body: dict[str, Any]) -> Scripted:
        task_id = _task_of(body)
        with self._lock:
            index = self.rounds[task_id]
            pending = self._faults.get((task_id, index))
            if pending:
                return pending.popleft()
            self.rounds[task_id] = index + 1
        return self.reply(self.runs[task_id], index, bool(body.get("tools")), _finalizing(body))

    def reply(self, trace: Trace, index: int, native: bool, finalizing: bool = False) -> Reply:
        """The recorded round `index` of `trace`: a step's tool call, or the final answer after the last
        step (or as soon as the harness closes research, as a compliant model would)."""
        steps = [step for step in trace.steps if step.action != FINAL_ANSWER]
        if index < len(steps) and not finalizing:
            step = steps[index]
            name, arguments, reason = step.action, replayed_arguments(step), step.reason
        else:
            name, arguments, reason = FINAL_ANSWER, replayed_answer(trace.final_answer), ""
        if native:
            return Reply(tool_calls=[tool_call(name, arguments, call_id=f"call_{index}")])
        if name == FINAL_ANSWER:
            return Reply(json.dumps({"action": FINAL_ANSWER, **arguments}))
        action = {"action": "tool_call", "tool": name, "arguments": arguments, "reason": reason}
        return Reply(json.dumps(action))


def _finalizing(body: dict[str, Any]) -> bool:
    """Whether the harness has closed research: only final_answer is offered, or it says so."""
    offered = [tool["function"]["name"] for tool in body.get("tools") or []]
    messages = body.get("messages") or [{}]
    return offered == [FINAL_ANSWER] or str(messages[-1].get("content") or "").startswith("Research is over")


def _task_of(body: dict[str, Any]) -> str:
    for message in body.get("messages", []):
        found = _TASK.search(str(message.get("content") or ""))
        if found:
            return found.group(1)
    raise ValueError("playback: no task id in the request's messages")
