"""The `final_answer` action: the structured answer an agent submits, with its provenance."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evaluator.tools.base import json_schema

FINAL_ANSWER = "final_answer"


class EvidenceItem(BaseModel):
    """One claim of the answer and the package file that supports it."""

    model_config = ConfigDict(extra="allow")

    claim: str = Field(description="What the evidence shows.")
    source_file: str = Field(description="Package file the claim rests on (data/... or repository form).")
    support_type: str | None = Field(
        default=None, description="How the file supports the claim, e.g. direct_value, computed, context."
    )


class FinalAnswerArguments(BaseModel):
    """The arguments of the final_answer action."""

    model_config = ConfigDict(extra="allow")

    answer: dict[str, Any] | str = Field(description="The answer object in the format the question asks.")
    confidence: float | None = Field(default=None, ge=0, le=1, description="Confidence in [0, 1].")
    evidence: list[EvidenceItem] = Field(default_factory=list, description="Claims with their source files.")
    research_summary: list[str] = Field(default_factory=list, description="The steps of the investigation.")
    limitations: list[str] = Field(
        default_factory=list, description="What remains unsupported or unresolved."
    )


def final_answer_spec() -> dict[str, Any]:
    """The OpenAI-style function definition of the final_answer action."""
    return {
        "type": "function",
        "function": {
            "name": FINAL_ANSWER,
            "description": "Submit the final structured answer with its evidence; this ends the run.",
            "parameters": json_schema(FinalAnswerArguments),
        },
    }
