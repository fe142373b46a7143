"""The harness's prompts, in our own words, carrying the paper's rules of engagement."""

from __future__ import annotations

import json
from typing import Any

from evaluator.harness.budgets import Budgets

SYSTEM_PROMPT = """\
You are a research agent investigating one natural-hazard event from its evidence package.

Rules:
1. Evidence comes only from the event package, through the tools you are given. Do not use the web, \
your memory of the event, other tasks, or any file outside the package; there are no hidden answer \
files for you to find, and looking for them is not allowed.
2. Make real tool calls before you answer: list the package, open the files that matter, and check \
the values you report against them. An answer without tool calls is not accepted as research.
3. Compute every metric (sums, means, differences, rankings, rounding) with deterministic Python via \
python_exec, not by mental arithmetic, and report the numbers the code printed.
4. Cite the package-relative path (data/...) of every file a claim rests on.
5. Finish with the final_answer action: the answer object in exactly the format the question asks \
for, your confidence in [0, 1], evidence items (claim, source_file, support_type), a short research \
summary, and the limitations you could not resolve.
"""

JSON_CONTRACT = """\
You have no native tool calling. Answer every turn with exactly one JSON object and nothing else:
  {"action": "tool_call", "tool": "<tool name>", "arguments": {...}, "reason": "<why>"}
or, to finish:
  {"action": "final_answer", "answer": {...}, "confidence": <0..1>, "evidence": [{"claim": "...", \
"source_file": "data/...", "support_type": "..."}], "research_summary": ["..."], "limitations": ["..."]}
The tools and their arguments:
"""


def system_prompt(tools: list[dict[str, Any]], native: bool) -> str:
    """The system message: the rules, plus the JSON action contract and tool list without native tools."""
    if native:
        return SYSTEM_PROMPT
    listing = "\n".join(_tool_line(spec["function"]) for spec in tools)
    return f"{SYSTEM_PROMPT}\n{JSON_CONTRACT}{listing}\n"


def _tool_line(function: dict[str, Any]) -> str:
    properties = function.get("parameters", {}).get("properties", {})
    return f"- {function['name']}({', '.join(properties)}): {function.get('description', '')}"


def task_prompt(task_id: str, event_id: str, question: str, budgets: Budgets) -> str:
    """The first user message: the question, the package it is about, and the budgets."""
    return (
        f"Task {task_id} on event package {event_id}.\n\n{question.strip()}\n\n"
        f"Budget: at most {budgets.max_turns} tool calls and {budgets.research_s:.0f} s of research; "
        "then you must submit the final answer."
    )


def finalize_notice(why: str) -> str:
    """Told to the agent when research is over: tools are closed, only final_answer is accepted."""
    return (
        f"Research is over ({why}). Do not call any more tools. Submit your final answer now with the "
        "final_answer action, from the evidence you have gathered."
    )


def repair_notice(problem: str, repairs_left: int) -> str:
    """Told to the agent when its final answer does not fit the schema."""
    return (
        f"Your final answer does not fit the final_answer schema: {problem}. Send the final_answer again, "
        f"corrected ({repairs_left} correction(s) left)."
    )


def review_notice(draft: dict[str, Any], turns: int) -> str:
    """The optional final review: re-check the draft against the package, then answer again."""
    return (
        "Before your answer is recorded, review it. Check each value against the package files it "
        f"rests on (you have {turns} more tool calls), fix what is wrong, and submit the final_answer "
        f"again, changed or not.\nYour draft answer:\n{json.dumps(draft, ensure_ascii=False)}"
    )


def unknown_tool_text(tool: str, names: list[str]) -> str:
    """The observation for a call of a tool that does not exist."""
    return f"unknown tool {tool!r}; the tools are: {', '.join(names)}"


def closed_tools_text() -> str:
    """The observation for a tool call made after research is over."""
    return "not run: research is over; only final_answer is accepted now"


def observation_message(tool: str, ok: bool, text: str) -> str:
    """A tool result as a user message (JSON action contract)."""
    return f"Observation from {tool} ({'ok' if ok else 'error'}):\n{text}"


def contract_error_text(problem: str) -> str:
    """The observation for a message that held no valid JSON action."""
    return f"Your message is not a valid action: {problem}. Reply with one JSON action object."
