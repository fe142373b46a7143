"""USD cost of a run, recomputed from its token counts with litellm's dated price table.

The source is always stated: `recomputed` (priced from tokens), `self-reported` (the trace's own
figure, when the model has no price), or `unpriced` (neither). An unpriced run has no cost, never $0.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from evaluator.traces.schema import CostSource

PRICE_TABLE = f"litellm {importlib.metadata.version('litellm')} bundled model cost map"
"""Which dated price table costs are recomputed with (the bundled map of this litellm release)."""


class RunCost(BaseModel):
    usd: float | None
    source: CostSource
    price_table: str = PRICE_TABLE


def price(
    models: Sequence[str | None],
    prompt_tokens: int | None,
    completion_tokens: int | None,
    self_reported_usd: float | None = None,
) -> RunCost:
    """The cost of one run: recomputed from its tokens with the rates of the first of `models` (names
    to try, e.g. the model and the system id) that the price table knows; else as self-reported."""
    rates = next((found for found in map(_rates, models) if found is not None), None)
    if rates is not None and prompt_tokens is not None and completion_tokens is not None:
        usd = prompt_tokens * rates[0] + completion_tokens * rates[1]
        return RunCost(usd=round(usd, 6), source="recomputed")
    if self_reported_usd is not None:
        return RunCost(usd=self_reported_usd, source="self-reported")
    return RunCost(usd=None, source="unpriced")


def _rates(model: str | None) -> tuple[float, float] | None:
    """(input, output) USD per token for `model` or its name without a provider prefix."""
    if not model:
        return None
    for name in (model, model.split("/", 1)[-1]):
        entry = price_table().get(name)
        if entry and "input_cost_per_token" in entry and "output_cost_per_token" in entry:
            return float(entry["input_cost_per_token"]), float(entry["output_cost_per_token"])
    return None


@functools.cache
def price_table() -> dict[str, Any]:
    """litellm's price table (PRICE_TABLE), loaded on first use: importing litellm takes seconds."""
    from evaluator.llm import litellm

    return litellm.model_cost
