"""Provider errors of every model call (the judge's and the agents'): which are worth retrying, how long to
wait, and what the server asked for (Retry-After)."""

from __future__ import annotations

import email.utils
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True)
class Backoff:
    """Waits between model calls after a provider error: exponential, or what the server asked for."""

    initial_s: float = 2.0
    factor: float = 2.0
    max_s: float = 60.0
    max_retry_after_s: float = 300.0

    def delay(self, failed_attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt `failed_attempt` (1-based): the server's Retry-After
        when it sent one (capped at max_retry_after_s), else initial × factor^(n-1), capped at max_s."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after_s)
        return min(self.initial_s * self.factor ** (failed_attempt - 1), self.max_s)


DEFAULT_BACKOFF = Backoff()


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds a server asked a client to wait: `retry-after-ms`, or `retry-after` as seconds or as an
    HTTP date; None when absent or unreadable. Header names are matched case-insensitively."""
    lowered = {name.lower(): value for name, value in headers.items()}
    milliseconds = _number(lowered.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    return seconds if seconds is not None else _seconds_until(value)


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _seconds_until(http_date: str) -> float | None:
    try:
        moment = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max((moment - datetime.now(UTC)).total_seconds(), 0.0)


class ProviderFailure(Exception):
    """A model call that failed on the provider's side. `kind` names the failure without any content."""

    def __init__(self, kind: str, retryable: bool, retry_after: float | None = None) -> None:
        super().__init__(kind)
        self.kind = kind
        self.retryable = retryable
        self.retry_after = retry_after


def provider_failure(error: Exception) -> ProviderFailure:
    """A litellm/openai exception as a ProviderFailure: retryable or not, and any Retry-After it carried."""
    import openai  # litellm's errors subclass openai's; imported late, as litellm itself is

    status = getattr(error, "status_code", None)
    name = type(error).__name__
    if _caused_by(error, openai.APITimeoutError):
        return ProviderFailure("timeout", retryable=True)
    if _caused_by(error, openai.APIConnectionError):
        return ProviderFailure("connection error", retryable=True)
    misconfigured = _client_side(error, openai.OpenAIError, openai.APIError)
    if misconfigured is not None:  # e.g. no API key: litellm reports it as a 500, but no retry can help
        return ProviderFailure(f"client not configured: {str(misconfigured)[:200]}", retryable=False)
    retryable = isinstance(status, int) and (status >= 500 or status in (408, 409, 429))
    kind = "rate limited (429)" if status == 429 else f"provider error {status} ({name})"
    retry_after = retry_after_seconds(_error_headers(error)) if retryable else None
    return ProviderFailure(kind, retryable, retry_after)


def _chain(error: BaseException) -> Iterator[BaseException]:
    """`error` and every exception it arose from, newest first (litellm wraps openai's own errors, e.g. a
    refused connection as a 500 InternalServerError raised while handling openai's APIConnectionError)."""
    current: BaseException | None = error
    while current is not None:
        yield current
        current = current.__cause__ or current.__context__


def _caused_by(error: BaseException, kind: type[BaseException]) -> bool:
    """Whether `error` or an exception it arose from is a `kind`."""
    return any(isinstance(link, kind) for link in _chain(error))


def _client_side(
    error: BaseException, base: type[BaseException], sent: type[BaseException]
) -> BaseException | None:
    """The exception `error` arose from that is a `base` but not a `sent` one: the SDK refused to send
    the request at all (litellm wraps such refusals in server-error classes)."""
    return next(
        (link for link in _chain(error) if isinstance(link, base) and not isinstance(link, sent)), None
    )


def _error_headers(error: Exception) -> Mapping[str, str]:
    response_headers = getattr(getattr(error, "response", None), "headers", None)
    headers = response_headers or getattr(error, "litellm_response_headers", None) or {}
    return dict(headers.items())
