"""The JSON action contract, final-answer validation, and the context window with its research state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluator.agents.base import FinalAnswerAction, ToolCall
from evaluator.harness.budgets import Budgets
from evaluator.harness.context import (
    _LABELLED_NUMBER,
    Context,
    StepNote,
    _labelled_numbers,
    key_values,
    research_state,
    step_note,
)
from evaluator.harness.protocol import ContractError, answer_problem, parse_action, parse_arguments
from evaluator.traces.recorded import read_recorded_trace
from evaluator.traces.schema import Trace


@pytest.fixture(scope="module")
def recorded(source_release: Any) -> Trace:
    return read_recorded_trace(source_release.trajectories_dir / "gpt-4o" / "CSX-321_Q1.json")


def test_a_tool_call_action_is_read_bare_fenced_or_in_prose() -> None:
    action = {
        "action": "tool_call",
        "tool": "read_text_file",
        "arguments": {"path": "data/a.md"},
        "reason": "r",
    }
    for text in (
        json.dumps(action),
        f"```json\n{json.dumps(action)}\n```",
        f"I will read it. {json.dumps(action)}",
    ):
        parsed = parse_action(text)
        assert isinstance(parsed, ToolCall)
        assert (parsed.tool, parsed.arguments, parsed.reason) == (
            "read_text_file",
            {"path": "data/a.md"},
            "r",
        )


def test_a_final_answer_action_keeps_the_answer_fields_only() -> None:
    text = json.dumps(
        {"action": "final_answer", "answer": {"x": 1}, "confidence": 0.4, "evidence": [], "extra": 1}
    )

    parsed = parse_action(text)

    assert isinstance(parsed, FinalAnswerAction)
    assert parsed.arguments == {"answer": {"x": 1}, "confidence": 0.4, "evidence": []}
    assert parsed.raw_text == text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "the message is empty"),
        ("I think the answer is 4.", "holds no JSON object"),
        ('{"action": "browse", "tool": "x"}', '"action" must be "tool_call" or "final_answer", not "browse"'),
        ('{"action": "tool_call"}', 'a tool_call needs "tool"'),
        ('{"action": "tool_call", "tool": "x", "arguments": [1]}', '"arguments" must be a JSON object'),
    ],
)
def test_a_message_that_is_no_action_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ContractError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_action(text)


def test_native_arguments_must_be_a_json_object() -> None:
    assert parse_arguments('{"path": "data/a"}') == {"path": "data/a"}
    assert parse_arguments(None) == {}
    with pytest.raises(ContractError, match="not valid JSON"):
        parse_arguments('{"path": "data/')
    with pytest.raises(ContractError, match="must be a JSON object"):
        parse_arguments("[1, 2]")


def test_the_final_answer_schema_names_every_problem() -> None:
    assert answer_problem({"answer": {"x": 1}, "confidence": 0.2}) is None
    assert answer_problem({"answer": "prose is an answer too"}) is None
    problem = answer_problem({"confidence": 2, "evidence": [{"claim": "c"}]})
    assert problem is not None
    assert (
        "answer: Field required" in problem
        and "confidence: Input should be less than or equal to 1" in problem
    )
    assert "evidence.0.source_file: Field required" in problem


def test_key_values_of_a_recorded_observation_are_labelled_numbers(recorded: Trace) -> None:
    read = next(step for step in recorded.steps if step.action == "read_text_file")

    values = key_values(read.observation.text)

    assert values and all("=" in value for value in values)
    assert len(values) <= 12


def test_key_values_are_found_where_the_pattern_alone_finds_them(recorded: Trace) -> None:
    edges = 'a  :  1, "b c": "2"; x=3e5 y:=4 ' + "z" * 50 + ': 5\tlabel\u00a0\u00a0= -6.5 "q"\n:7'
    for text in [edges, *(step.observation.text for step in recorded.steps)]:
        expected = [(match.span(), match.groups()) for match in _LABELLED_NUMBER.finditer(text)]
        assert [(match.span(), match.groups()) for match in _labelled_numbers(text)] == expected


def test_older_exchanges_become_a_research_state_with_their_provenance(recorded: Trace) -> None:
    context = Context("system", "task", Budgets(recent_messages=4))
    for index, step in enumerate(recorded.steps, 1):
        call = {"id": f"c{index}", "type": "function", "function": {"name": step.action, "arguments": "{}"}}
        context.add_assistant({"role": "assistant", "content": "", "tool_calls": [call]})
        note = step_note(index, step.action, step.arguments, step.ok, step.observation.text)
        context.add_reply(
            {"role": "tool", "tool_call_id": f"c{index}", "content": step.observation.text}, note
        )

    messages = context.messages()

    roles = [message["role"] for message in messages]
    assert roles == ["system", "user", "user", "assistant", "tool", "assistant", "tool"]
    state = messages[2]["content"]
    first = recorded.steps[0]
    assert f"step 1 {first.action} {first.arguments.get('subdir', first.arguments.get('path'))}: ok" in state
    assert f"step {len(recorded.steps) - 2} {recorded.steps[-3].action}" in state


def test_a_long_exchange_is_kept_whole_rather_than_cut() -> None:
    context = Context("system", "task", Budgets(recent_messages=2))
    calls = [
        {"id": f"c{n}", "type": "function", "function": {"name": "x", "arguments": "{}"}} for n in range(3)
    ]
    context.add_assistant({"role": "assistant", "content": "", "tool_calls": calls})
    for n in range(3):
        context.add_reply({"role": "tool", "tool_call_id": f"c{n}", "content": "ok"})

    assert [message["role"] for message in context.messages()] == [
        "system",
        "user",
        "assistant",
        *["tool"] * 3,
    ]


def test_the_research_state_fits_its_cap_and_keeps_every_step() -> None:
    notes = [
        StepNote(index=n, tool="read_text_file", target=f"data/f{n}.csv", ok=True, key_values=["v=1" * 200])
        for n in range(1, 49)
    ]

    state = research_state(notes, 4000)

    assert len(state) <= 4000
    assert all(f"step {n} read_text_file data/f{n}.csv: ok" in state for n in range(1, 49))


def test_the_demo_package_files_are_labelled_as_invented() -> None:
    root = Path(__file__).resolve().parents[1] / "evaluator" / "demo" / "package" / "data"
    for path in root.rglob("*.*"):
        assert "DEMO" in path.read_text(encoding="utf-8") or "demo" in path.name
