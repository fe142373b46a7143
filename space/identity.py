"""Who is submitting: the Hub login, else the bearer token of an API call, else the development identity."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr
from huggingface_hub import whoami

BEARER = "bearer "
TOKEN_HEADERS = ("authorization", "x-hf-authorization")
Whoami = Callable[[str], dict[str, Any]]


class IdentityResolver:
    """Resolves a request to a user name, or None for an anonymous caller (whose submission is refused).

    `whoami` maps a Hub token to its account (huggingface_hub.whoami on the Hub); `local_user` is the
    configured development identity, used only when neither a login nor a token is present.
    """

    def __init__(self, local_user: str | None, whoami_fn: Whoami | None = None) -> None:
        self.local_user = local_user
        self._whoami = whoami_fn or (lambda token: whoami(token=token))

    def user(self, profile: gr.OAuthProfile | None, request: gr.Request | None) -> str | None:
        if profile is not None and profile.username:
            return profile.username
        token = bearer_token(request)
        if token:
            return self._token_user(token)
        return self.local_user

    def _token_user(self, token: str) -> str | None:
        try:
            name = self._whoami(token).get("name")
        except Exception:  # any failure to resolve a token is an unknown caller, not a crash
            return None
        return name if isinstance(name, str) and name else None


def bearer_token(request: gr.Request | None) -> str | None:
    """The token of an `Authorization: Bearer …` header; gradio_client 2.x sends `token=` as
    `X-HF-Authorization` (so that the Hub's proxy passes it on), which is read the same way."""
    if request is None:
        return None
    for name in TOKEN_HEADERS:
        header = request.headers.get(name) or ""
        if header.lower().startswith(BEARER) and header[len(BEARER) :].strip():
            return header[len(BEARER) :].strip()
    return None
