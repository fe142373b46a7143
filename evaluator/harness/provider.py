"""One model call through litellm, retried on provider errors (429, 5xx, timeouts, broken bodies) with the
judge's backoff, which honours Retry-After. Every failed attempt is reported as a ProviderEvent; a
provider still failing after the last attempt is an InfrastructureFailure, never the model's fault.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evaluator.agents.base import InfrastructureFailure, ProviderEvent, RoundUsage
from evaluator.provider_errors import DEFAULT_BACKOFF, Backoff, ProviderFailure, provider_failure
from evaluator.scoring.cost import price
from evaluator.secrets import secret_from_env

log = logging.getLogger("earthverse.harness.provider")

Sleep = Callable[[float], Awaitable[None]]


class ProviderSettings(BaseModel):
    """How to reach a model: a litellm model id, optionally another API base and the key's variable."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    model: str = Field(min_length=1, description="litellm model id, e.g. `openai/gpt-4.1`.")
    api_base: str | None = None
    api_key_env: str | None = Field(default=None, description="Environment variable holding the key.")
    timeout_s: float = Field(default=120.0, gt=0, description="Seconds one call may take.")
    max_attempts: int = Field(default=6, ge=1)
    temperature: float | None = Field(default=0.0, description="None: the provider's default.")
    backoff: Backoff = DEFAULT_BACKOFF

    def api_key(self) -> str | None:
        """The key from `api_key_env`; ValueError naming the variable when it is not set."""
        return secret_from_env(self.api_key_env, "API key")


class RawToolCall(BaseModel):
    """A tool call as the model sent it: the arguments still a JSON string."""

    id: str | None
    name: str
    arguments: str | None


class Completion(BaseModel):
    """A model reply: text and/or tool calls, with the round's tokens, cost and failed attempts."""

    content: str | None
    tool_calls: list[RawToolCall]
    usage: RoundUsage
    events: list[ProviderEvent]


class Provider:
    """Calls one model; `complete` returns a Completion or raises InfrastructureFailure."""

    def __init__(self, settings: ProviderSettings, sleep: Sleep = asyncio.sleep) -> None:
        self.settings = settings
        self._key = settings.api_key()
        self._sleep = sleep

    async def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
    ) -> Completion:
        """One reply to `messages` (with `tools` for native tool calling), retrying provider errors."""
        events: list[ProviderEvent] = []
        attempts = self.settings.max_attempts
        for attempt in range(1, attempts + 1):
            try:
                response = await self._call(messages, tools)
            except ProviderFailure as failure:
                wait = (
                    self.settings.backoff.delay(attempt, failure.retry_after) if attempt < attempts else 0.0
                )
                events.append(ProviderEvent(attempt=attempt, kind=failure.kind, wait_s=wait))
                log.warning("%s: attempt %d/%d: %s", self.settings.model, attempt, attempts, failure.kind)
                if not failure.retryable or attempt == attempts:
                    raise InfrastructureFailure(f"provider unavailable: {failure.kind}", events) from None
                await self._sleep(wait)
                continue
            return _completion(response, self.settings.model, events)
        raise AssertionError("unreachable: the loop returns or raises")

    async def _call(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Any:
        import openai

        from evaluator.llm import litellm

        options: dict[str, Any] = {"tools": tools} if tools else {}
        if self.settings.temperature is not None:
            options["temperature"] = self.settings.temperature
        try:
            return await litellm.acompletion(
                model=self.settings.model,
                messages=messages,
                api_base=self.settings.api_base,
                api_key=self._key,
                timeout=self.settings.timeout_s,
                max_retries=0,  # retries are ours: counted, backed off and recorded in the trace
                num_retries=0,
                drop_params=True,
                **options,
            )
        except openai.APIError as error:
            raise provider_failure(error) from None


def _completion(response: Any, model: str, events: list[ProviderEvent]) -> Completion:
    choice = response.choices[0] if response.choices else None
    message = choice.message if choice is not None else None
    calls = [
        RawToolCall(id=call.id, name=call.function.name or "", arguments=call.function.arguments)
        for call in (getattr(message, "tool_calls", None) or [])
    ]
    usage = getattr(response, "usage", None)
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    cost = price((model,), prompt, completion)
    return Completion(
        content=getattr(message, "content", None),
        tool_calls=calls,
        usage=RoundUsage(prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost.usd),
        events=events,
    )
