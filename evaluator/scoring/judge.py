"""The LLM judge: a holistic answer score H (0-100) and the task's process rubric P (0-100) for one trace.

`Judge` asks a model through litellm (temperature 0, JSON mode) for a verdict, validates it against
the task's rubric (`JudgeVerdict`), and retries invalid verdicts with a corrective message and
provider errors (429, 5xx, timeouts, refused connections) with exponential backoff that honours
Retry-After. A judge that cannot deliver is never a zero: the result is "unavailable", H and P None.
Valid verdicts are cached, one JSON file per (task, answer, trace, reference, judge model, prompt
version), so a rescore makes no call. `NoJudge` (`--judge none`) scores nothing, deliberately.

Hidden material (the prompt, the reply, the verdict's rationales, criterion names) never reaches a
log line: this module logs task ids, attempts, statuses and failure kinds only, and silences the
provider libraries' own loggers while a judge call runs (litellm logs whole requests at DEBUG).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError

from evaluator.provider_errors import DEFAULT_BACKOFF, Backoff, ProviderFailure, provider_failure
from evaluator.scoring.judge_prompt import PROMPT_VERSION, build_messages, correction_message
from evaluator.secrets import secret_from_env
from evaluator.traces.schema import Trace
from loaders.atomic import write_text_atomic
from loaders.models import HiddenTask, Rubric, Task

logger = logging.getLogger(__name__)

JudgeStatus = Literal["scored", "unavailable", "not_requested"]
NO_JUDGE = "none"
DEFAULT_MAX_ATTEMPTS = 6
DEFAULT_TIMEOUT_S = 120.0
PROVIDER_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "openai._base_client", "httpx")
"""Loggers of the libraries under the judge call; litellm's logs the whole request and reply at DEBUG."""

RUBRIC_PROBLEMS = ("duplicate_criterion", "unknown_criterion", "missing_criterion", "points_out_of_range")
_FENCED = re.compile(r"```(?:json)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


# --- the verdict --------------------------------------------------------------------------------


class CriterionVerdict(BaseModel):
    """The points the judge gives one rubric criterion, and why."""

    model_config = ConfigDict(extra="ignore")

    name: str
    points: float = Field(allow_inf_nan=False)
    rationale: str = ""


class JudgeVerdict(BaseModel):
    """A judge's reply. Validated with context `{"rubric": Rubric}` (as `parse_verdict` does), every
    criterion of the rubric must appear exactly once by name, with points within 0..its maximum, and
    no other criterion may appear. PRIVATE: the rationales discuss the hidden reference."""

    model_config = ConfigDict(extra="ignore")

    answer_score: float = Field(ge=0, le=100, allow_inf_nan=False)
    answer_rationale: str = ""
    criteria: list[CriterionVerdict]
    critical_errors: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _fits_rubric(self, info: ValidationInfo) -> JudgeVerdict:
        rubric = (info.context or {}).get("rubric")
        if rubric is not None:
            _check_criteria(self.criteria, rubric)
        return self

    def criterion_points(self) -> dict[str, float]:
        return {criterion.name: criterion.points for criterion in self.criteria}


def _check_criteria(criteria: list[CriterionVerdict], rubric: Rubric) -> None:
    maxima = {criterion.name: criterion.points for criterion in rubric.criteria}
    names = [criterion.name for criterion in criteria]
    problems = {
        "duplicate_criterion": sorted({name for name in names if names.count(name) > 1}),
        "unknown_criterion": [name for name in names if name not in maxima],
        "missing_criterion": [name for name in maxima if name not in names],
        "points_out_of_range": [
            f"{c.name} = {c.points:g} (allowed 0..{maxima[c.name]:g})"
            for c in criteria
            if c.name in maxima and not 0 <= c.points <= maxima[c.name]
        ],
    }
    found = {kind: items for kind, items in problems.items() if items}
    if found:
        detail = "; ".join(f"{kind.replace('_', ' ')}: {json.dumps(items)}" for kind, items in found.items())
        raise PydanticCustomError(next(iter(found)), "{detail}", {"detail": detail})


class VerdictError(ValueError):
    """A reply that is not a valid verdict. `kind` is a category safe to log and store; `detail`
    quotes the rubric and the reply and goes back to the judge only."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(kind)
        self.kind = kind
        self.detail = detail


def parse_verdict(text: str | None, rubric: Rubric) -> JudgeVerdict:
    """The verdict in a judge's reply (a JSON object, bare or in one ```json fence), checked against
    `rubric`; VerdictError otherwise."""
    data = _reply_object(text)
    try:
        return JudgeVerdict.model_validate(data, context={"rubric": rubric})
    except ValidationError as error:
        raise VerdictError(_problem_kind(error), _problem_detail(error)) from None


def _reply_object(text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        raise VerdictError("empty", "the reply was empty")
    try:
        data = json.loads(text.strip())
    except json.JSONDecodeError as error:
        data = _fenced_json(text)
        if data is None:
            raise VerdictError("not_json", f"it is not JSON ({error.msg}, line {error.lineno})") from None
    if not isinstance(data, dict):
        raise VerdictError("wrong_shape", "the top level must be a JSON object")
    return data


def _fenced_json(text: str) -> Any | None:
    for block in _FENCED.findall(text):
        try:
            return json.loads(block)
        except json.JSONDecodeError:
            continue
    return None


def _problem_kind(error: ValidationError) -> str:
    for item in error.errors():
        if item["type"] in RUBRIC_PROBLEMS:
            return item["type"]
        if item["loc"] == ("answer_score",) and item["type"] in ("less_than_equal", "greater_than_equal"):
            return "answer_score_out_of_range"
    return "wrong_shape"


def _problem_detail(error: ValidationError) -> str:
    items = error.errors(include_url=False, include_input=False)
    return "; ".join(f"{'.'.join(map(str, item['loc'])) or 'verdict'}: {item['msg']}" for item in items)


def process_score(points: Mapping[str, float], rubric: Rubric) -> float:
    """P: 100 × the points awarded / the rubric's total points (e.g. 17 of 20 -> 85.0)."""
    total = sum(criterion.points for criterion in rubric.criteria)
    if total <= 0:
        raise ValueError("the rubric has no points to award")
    return 100 * sum(points.values()) / total


# --- the result ---------------------------------------------------------------------------------


class JudgeResult(BaseModel):
    """The judge's outcome for one trace. PRIVATE as a whole (criterion names come from the hidden
    rubric, the verdict discusses the reference): publish only status, H and P.

    `scored`: H and P are set. `unavailable`: the judge could not deliver (error says why) and H and P
    are None, never zero. `not_requested`: no judge was asked (`--judge none`)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    judge_model: str
    prompt_version: str | None = None
    status: JudgeStatus
    H: float | None = Field(default=None, ge=0, le=100, description="Holistic answer score, 0-100.")
    P: float | None = Field(default=None, ge=0, le=100, description="Process rubric, 100 × points / total.")
    criterion_points: dict[str, float] = Field(default_factory=dict)
    attempts: int = Field(default=0, ge=0, description="Judge calls made (0 for a cached or no judge).")
    cache_key: str | None = None
    error: str | None = Field(default=None, description="Why the judge is unavailable; no hidden text.")
    verdict: JudgeVerdict | None = None
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    from_cache: bool = Field(default=False, exclude=True, description="Read from the verdict cache.")

    @model_validator(mode="after")
    def _consistent(self) -> JudgeResult:
        scored = self.status == "scored"
        if scored != (self.H is not None and self.P is not None and self.verdict is not None):
            raise ValueError(f"{self.task_id}: H, P and verdict are set exactly when the status is scored")
        if self.status == "unavailable" and not self.error:
            raise ValueError(f"{self.task_id}: an unavailable judge result must say why")
        return self


# --- the cache ----------------------------------------------------------------------------------


class CacheKey(BaseModel):
    """What a verdict depends on; equal keys mean the judge would be asked the same question."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    judge_model: str
    prompt_version: str
    answer_sha256: str
    trace_sha256: str
    reference_sha256: str = Field(description="Question and hidden ground truth: a fixed GT is a new key.")

    @classmethod
    def of(cls, task: Task, hidden: HiddenTask, trace: Trace, judge_model: str) -> CacheKey:
        run = {
            "steps": [step.model_dump(mode="json") for step in trace.steps],
            "run_status": trace.run_status,
            "termination_reason": trace.termination_reason,
        }
        reference = {"question": task.question, "ground_truth": hidden.ground_truth.model_dump(mode="json")}
        return cls(
            task_id=trace.task_id,
            judge_model=judge_model,
            prompt_version=PROMPT_VERSION,
            answer_sha256=_sha256(trace.final_answer.model_dump(mode="json")),
            trace_sha256=_sha256(run),
            reference_sha256=_sha256(reference),
        )

    @property
    def digest(self) -> str:
        return _sha256(self.model_dump(mode="json"))


class _CacheEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: CacheKey
    result: JudgeResult


class VerdictCache:
    """Scored judge results on disk: `<folder>/<task_id>/<key digest>.json`, each written atomically."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def path(self, key: CacheKey) -> Path:
        return self.folder / key.task_id / f"{key.digest}.json"

    def get(self, key: CacheKey) -> JudgeResult | None:
        """The cached result for `key`, or None (missing, unreadable or not this key: treated as a miss)."""
        path = self.path(key)
        try:
            entry = _CacheEntry.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValidationError) as error:
            logger.warning("judge cache: ignoring unreadable entry %s (%s)", path, type(error).__name__)
            return None
        if entry.key != key:
            return None
        return entry.result.model_copy(update={"from_cache": True})

    def put(self, key: CacheKey, result: JudgeResult) -> None:
        entry = _CacheEntry(key=key, result=result)
        write_text_atomic(self.path(key), [entry.model_dump_json(indent=1)])


def _sha256(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- provider access ----------------------------------------------------------------------------

_JUDGING: ContextVar[bool] = ContextVar("earthverse_judging", default=False)


class _SilentWhileJudging(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _JUDGING.get()


_SILENCER = _SilentWhileJudging()


@contextmanager
def _provider_logs_silenced() -> Iterator[None]:
    token = _JUDGING.set(True)
    try:
        yield
    finally:
        _JUDGING.reset(token)


@cache
def _providers() -> tuple[ModuleType, ModuleType]:
    """litellm (through `evaluator.llm`, which loads it offline-safe) and openai, whose error classes
    litellm's errors subclass. Imported on first use: litellm takes about 5 s to import, which
    `--judge none` need not pay."""
    import openai

    from evaluator.llm import litellm

    for name in PROVIDER_LOGGERS:
        logging.getLogger(name).addFilter(_SILENCER)
    return litellm, openai


@dataclass(frozen=True)
class Usage:
    """Tokens the judge spent on one task, over all its attempts."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens
        )


@dataclass(frozen=True)
class _Reply:
    text: str | None
    cut_off: bool
    usage: Usage


def _json_mode(model: str) -> dict[str, Any]:
    """The JSON-mode parameter when the model's provider takes it; ValueError for a model id that
    litellm cannot route."""
    litellm, openai = _providers()
    try:
        _, provider, _, _ = litellm.get_llm_provider(model)
    except openai.APIError as error:
        raise ValueError(f"litellm cannot route the judge model {model!r}: {error.message}") from None
    supported = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider) or []
    return {"response_format": {"type": "json_object"}} if "response_format" in supported else {}


# --- the judges ---------------------------------------------------------------------------------


class AnswerJudge(Protocol):
    """What scoring needs from a judge: one result per (task, hidden task, trace)."""

    model: str

    def judge(self, task: Task, hidden: HiddenTask, trace: Trace) -> JudgeResult: ...

    async def ajudge(self, task: Task, hidden: HiddenTask, trace: Trace) -> JudgeResult: ...


class Judge:
    """An LLM judge behind litellm. `model` is a litellm model id (e.g. `openai/gpt-4.1`); `api_base`
    points at another endpoint; `api_key_env` names the environment variable holding the key (None:
    the provider's usual variable). Verdicts are cached under `cache_dir`. Construction fails
    (ValueError) for a model id litellm cannot route or a key variable that is not set."""

    def __init__(
        self,
        model: str,
        *,
        cache_dir: Path,
        api_base: str | None = None,
        api_key_env: str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        backoff: Backoff = DEFAULT_BACKOFF,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, not {max_attempts}")
        self.model = model
        self.api_base = api_base
        self.max_attempts = max_attempts
        self.timeout_s = timeout_s
        self.backoff = backoff
        self.cache = VerdictCache(cache_dir)
        self._sleep = sleep
        self._api_key = secret_from_env(api_key_env, "judge's API key")
        self._json_mode = _json_mode(model)

    def judge(self, task: Task, hidden: HiddenTask, trace: Trace) -> JudgeResult:
        """The judge's H and P for `trace`: from the cache when this exact question was answered before,
        else from the model (retrying as the module says). Never raises for a judge failure: returns
        status "unavailable" with the reason instead."""
        _require_same_task(task, hidden, trace)
        key = CacheKey.of(task, hidden, trace, self.model)
        cached = self.cache.get(key)
        if cached is not None:
            logger.info("judge %s: cached verdict reused", trace.task_id)
            return cached
        result = self._ask(key, build_messages(task, hidden, trace), hidden.ground_truth.rubric)
        if result.status == "scored":
            self.cache.put(key, result)
        logger.info("judge %s: %s after %d attempt(s)", trace.task_id, result.status, result.attempts)
        return result

    async def ajudge(self, task: Task, hidden: HiddenTask, trace: Trace) -> JudgeResult:
        """`judge` in a worker thread, so that many runs can be judged concurrently."""
        return await asyncio.to_thread(self.judge, task, hidden, trace)

    def _ask(self, key: CacheKey, question: list[dict[str, str]], rubric: Rubric) -> JudgeResult:
        messages = question
        usage = Usage()
        problem = "no attempt made"
        for attempt in range(1, self.max_attempts + 1):
            try:
                reply = self._complete(messages)
            except ProviderFailure as failure:
                problem = failure.kind
                if not failure.retryable:
                    return self._unavailable(key, attempt, problem, usage)
                self._pause(key.task_id, attempt, problem, self.backoff.delay(attempt, failure.retry_after))
                continue
            usage += reply.usage
            try:
                verdict = parse_verdict(reply.text, rubric)
            except VerdictError as error:
                problem = f"invalid verdict ({error.kind})"
                logger.warning(
                    "judge %s: attempt %d/%d: %s", key.task_id, attempt, self.max_attempts, problem
                )
                # Only the latest rejected reply is kept, so that the conversation does not grow per retry.
                rejected = {"role": "assistant", "content": reply.text or ""}
                messages = [*question, rejected, correction_message(error.detail, reply.cut_off)]
                continue
            return self._scored(key, attempt, verdict, rubric, usage)
        return self._unavailable(key, self.max_attempts, problem, usage)

    def _complete(self, messages: list[dict[str, str]]) -> _Reply:
        litellm, openai = _providers()
        try:
            with _provider_logs_silenced():
                response = litellm.completion(
                    model=self.model,
                    messages=messages,
                    api_base=self.api_base,
                    api_key=self._api_key,
                    temperature=0,
                    timeout=self.timeout_s,
                    max_retries=0,  # retries are ours: counted, logged and backed off here
                    num_retries=0,
                    drop_params=True,  # e.g. a model that only accepts the default temperature
                    **self._json_mode,
                )
        except openai.APIError as error:
            raise provider_failure(error) from None
        return _reply(response)

    def _pause(self, task_id: str, attempt: int, problem: str, seconds: float) -> None:
        if attempt >= self.max_attempts:
            return
        logger.warning(
            "judge %s: attempt %d/%d: %s; retrying in %.2f s",
            task_id,
            attempt,
            self.max_attempts,
            problem,
            seconds,
        )
        self._sleep(seconds)

    def _scored(
        self, key: CacheKey, attempts: int, verdict: JudgeVerdict, rubric: Rubric, usage: Usage
    ) -> JudgeResult:
        points = verdict.criterion_points()
        return JudgeResult(
            task_id=key.task_id,
            judge_model=self.model,
            prompt_version=PROMPT_VERSION,
            status="scored",
            H=verdict.answer_score,
            P=process_score(points, rubric),
            criterion_points=points,
            attempts=attempts,
            cache_key=key.digest,
            verdict=verdict,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
        )

    def _unavailable(self, key: CacheKey, attempts: int, problem: str, usage: Usage) -> JudgeResult:
        logger.warning("judge %s: unavailable after %d attempt(s): %s", key.task_id, attempts, problem)
        return JudgeResult(
            task_id=key.task_id,
            judge_model=self.model,
            prompt_version=PROMPT_VERSION,
            status="unavailable",
            attempts=attempts,
            cache_key=key.digest,
            error=f"no valid verdict after {attempts} attempt(s); last failure: {problem}",
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
        )


class NoJudge:
    """`--judge none`: asks nobody; every result is "not_requested", so reports show the deterministic
    figures only and say that no judge was used."""

    model = NO_JUDGE

    def judge(self, task: Task, hidden: HiddenTask, trace: Trace) -> JudgeResult:
        """A "not_requested" result for `trace`, with H and P None."""
        _require_same_task(task, hidden, trace)
        return JudgeResult(task_id=trace.task_id, judge_model=NO_JUDGE, status="not_requested")

    async def ajudge(self, task: Task, hidden: HiddenTask, trace: Trace) -> JudgeResult:
        return self.judge(task, hidden, trace)


def judge_from_option(
    option: str,
    *,
    cache_dir: Path,
    api_base: str | None = None,
    api_key_env: str | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> AnswerJudge:
    """The judge a `--judge` option names: "none" for `NoJudge`, anything else a litellm model id."""
    name = option.strip()
    if not name:
        raise ValueError('--judge needs a litellm model id, or "none"')
    if name.lower() == NO_JUDGE:
        return NoJudge()
    return Judge(
        name,
        cache_dir=cache_dir,
        api_base=api_base,
        api_key_env=api_key_env,
        max_attempts=max_attempts,
        timeout_s=timeout_s,
    )


def _require_same_task(task: Task, hidden: HiddenTask, trace: Trace) -> None:
    if not task.task_id == hidden.task_id == trace.task_id:
        raise ValueError(
            f"judge inputs disagree: task {task.task_id}, hidden {hidden.task_id}, trace {trace.task_id}"
        )


def _reply(response: Any) -> _Reply:
    choice = response.choices[0] if response.choices else None
    usage = getattr(response, "usage", None)
    return _Reply(
        text=choice.message.content if choice is not None else None,
        cut_off=choice is not None and choice.finish_reason == "length",
        usage=Usage(getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0),
    )
