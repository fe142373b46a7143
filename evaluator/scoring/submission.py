"""What a trace submitted, for scoring. Strings are read by `evaluator.traces.answer_text.parse_answer`,
the same parser that fills a trace's `parsed`."""

from __future__ import annotations

from typing import Any

from evaluator.traces.schema import FinalAnswer


def submitted_answer(final: FinalAnswer) -> Any:
    """What a trace submitted, for scoring: the object when the answer was one, else the model's own
    text, which `parse_answer` reads (one parser for every string answer, recorded or live)."""
    if final.parsed is not None and final.raw_text_origin == "canonical_json":
        return final.parsed
    return final.raw_text if final.raw_text else final.parsed
