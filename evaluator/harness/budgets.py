"""The paper's run budgets, and a clock that tells which phase a run is in and how much time is left."""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evaluator.tools.base import OBSERVATION_CAP


class Budgets(BaseModel):
    """Limits of one task run (defaults: the paper's protocol)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_turns: int = Field(default=48, ge=1, description="Tool calls allowed before finalization.")
    research_s: float = Field(default=1680.0, gt=0, description="Seconds of research before finalization.")
    overall_s: float = Field(default=1800.0, gt=0, description="Seconds for the whole run.")
    finalization_s: float = Field(default=120.0, ge=0, description="Seconds reserved for the final answer.")
    max_repairs: int = Field(default=2, ge=0, description="Schema repairs of a final answer allowed.")
    observation_chars: int = Field(default=OBSERVATION_CAP, ge=1, description="Characters of an observation.")
    recent_messages: int = Field(default=16, ge=2, description="Messages kept verbatim in the context.")
    research_state_chars: int = Field(default=24_000, ge=0, description="Size of the research-state summary.")
    finalization_turns: int = Field(default=2, ge=1, description="Model turns allowed to finalize.")
    review_turns: int = Field(default=6, ge=1, description="Turns of the optional final review.")

    @model_validator(mode="after")
    def _consistent(self) -> Budgets:
        if self.research_s + self.finalization_s > self.overall_s + 1e-9:
            raise ValueError(
                f"research_s ({self.research_s:g}) + finalization_s ({self.finalization_s:g}) exceed "
                f"overall_s ({self.overall_s:g})"
            )
        return self


class RunClock:
    """Seconds since the run started, against the research and overall limits."""

    def __init__(self, budgets: Budgets, now: Callable[[], float] = time.monotonic) -> None:
        self.budgets = budgets
        self._now = now
        self.started = now()

    def elapsed(self) -> float:
        return self._now() - self.started

    def research_left(self) -> float:
        return self.budgets.research_s - self.elapsed()

    def overall_left(self) -> float:
        return self.budgets.overall_s - self.elapsed()
