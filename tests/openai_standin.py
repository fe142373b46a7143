"""A local stand-in for an OpenAI-compatible chat-completions API, on 127.0.0.1, for tests.

`POST /v1/chat/completions` answers from a script: a queue of scripted responses (`Reply`,
`HttpError`, `Stall`, `MalformedBody`) or a responder callable(request_json) -> scripted response.
Replies may carry `tool_calls`, so an agent harness can be played back as well as a judge. Every
request is recorded (path, headers, JSON body) for assertions. The response body is a proper OpenAI
chat completion (id, object, created, model, choices, usage). Streaming is not supported (400).

    with OpenAIStandin([Reply('{"ok": true}'), HttpError.rate_limited(retry_after=1)]) as api:
        litellm.completion(model="openai/standin", api_base=api.url, api_key="test", ...)
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"


def tool_call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    """One OpenAI tool call of an assistant message (arguments JSON-encoded, as the API sends them)."""
    return {
        "id": call_id or f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


@dataclass(frozen=True)
class Reply:
    """A 200 chat completion whose single choice carries this assistant message."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    finish_reason: str | None = None
    model: str | None = None
    usage: dict[str, int] | None = None


@dataclass(frozen=True)
class HttpError:
    """An HTTP error status with an OpenAI-style error body and optional headers (e.g. Retry-After)."""

    status: int
    message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def rate_limited(cls, retry_after: float | None = None) -> HttpError:
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        return cls(429, "rate limit reached (scripted)", headers)

    @classmethod
    def server_error(cls, status: int = 500) -> HttpError:
        return cls(status, "internal error (scripted)")


@dataclass(frozen=True)
class Stall:
    """Sleep `seconds` before answering `then`: past a client's timeout, the answer is never read."""

    seconds: float
    then: Reply = field(default_factory=lambda: Reply("stalled"))


@dataclass(frozen=True)
class MalformedBody:
    """A 200 response whose body is not JSON at all (a broken proxy, a truncated stream)."""

    body: str = '{"id": "chatcmpl-broken", "choices": ['


Scripted = Reply | HttpError | Stall | MalformedBody
Responder = Callable[[dict[str, Any]], Scripted]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received; header names lower-cased (HTTP header names are case-insensitive)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])


class OpenAIStandin:
    """Serve scripted chat completions on 127.0.0.1 (a free port); use as a context manager.

    Responses come from the queue first (in order), then from `responder`; with neither left, the
    server answers 500 and counts the request in `unscripted`.
    """

    def __init__(self, script: Iterable[Scripted] = (), responder: Responder | None = None) -> None:
        self._queue: deque[Scripted] = deque(script)
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        self.unscripted = 0
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The API base (`http://127.0.0.1:<port>/v1`), as OpenAI clients take it."""
        assert self._server is not None, "the stand-in is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def push(self, *items: Scripted) -> None:
        """Append scripted responses to the queue."""
        with self._lock:
            self._queue.extend(items)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [request for request in self.requests if request.path == CHAT_PATH]

    def __enter__(self) -> OpenAIStandin:
        standin = self

        class Handler(_Handler):
            api = standin

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a stalled handler must not hold up the test's teardown
        # A short poll interval: shutdown waits for one poll, and tests start and stop many servers.
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
        self._server = None

    def _next(self, body: dict[str, Any]) -> Scripted | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self.responder(body) if self.responder is not None else None

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _completion(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        return {
            "id": f"chatcmpl-standin-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model", "standin"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": reply.usage or _usage(body, reply),
        }


def _headers(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {name.lower(): value for name, value in items}


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    # About four characters a token: deterministic and plausible, enough for cost arithmetic in tests.
    prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
    completion = max(1, len(reply.content or "") // 4 + len(json.dumps(reply.tool_calls or [])) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


class _Handler(BaseHTTPRequestHandler):
    api: OpenAIStandin
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes; Nagle would hold the body 40 ms

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: test output stays clean."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        self.api._record(RecordedRequest(self.path, _headers(self.headers.items()), body))
        if self.path != CHAT_PATH:
            self._send_error(HttpError(404, f"no route {self.path}"))
            return
        if body.get("stream"):
            self._send_error(HttpError(400, "openai stand-in: streaming is not supported"))
            return
        scripted = self.api._next(body)
        if scripted is None:
            with self.api._lock:
                self.api.unscripted += 1
            self._send_error(HttpError(500, "openai stand-in: no scripted response left"))
            return
        self._answer(scripted, body)

    def do_GET(self) -> None:
        self.api._record(RecordedRequest(self.path, _headers(self.headers.items()), {}))
        self._send_error(HttpError(404, f"no route {self.path}"))

    def _answer(self, scripted: Scripted, body: dict[str, Any]) -> None:
        if isinstance(scripted, HttpError):
            self._send_error(scripted)
        elif isinstance(scripted, MalformedBody):
            self._send(200, scripted.body.encode("utf-8"))
        elif isinstance(scripted, Stall):
            time.sleep(scripted.seconds)
            self._answer(scripted.then, body)
        else:
            self._send(200, json.dumps(self.api._completion(scripted, body)).encode("utf-8"))

    def _send_error(self, error: HttpError) -> None:
        kind = "rate_limit_error" if error.status == 429 else "api_error"
        detail = {"message": error.message, "type": kind, "param": None, "code": str(error.status)}
        self._send(error.status, json.dumps({"error": detail}).encode("utf-8"), error.headers)

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (a scripted stall past its timeout); nobody is left to answer.
            return
