"""The one HTTP client for OpenAI-compatible Chat Completions endpoints (judges and answerers).

``post_chat`` sends one request with retries on 408/409/425/429, 5xx and transport errors,
honouring ``Retry-After`` (seconds or an HTTP date, capped) and otherwise backing off
exponentially. It returns a :class:`ChatReply` (content, token usage, latency, attempts) or
raises :class:`ChatRequestError`. API keys are passed in per call, read from the environment
by the caller at call time, and never stored; ``heta_notebook._util.redaction`` scrubs them from anything
that is kept.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import os
import ssl
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import httpx

from heta_notebook._util.redaction import declare_secrets

RETRY_STATUS = frozenset({408, 409, 425, 429})


class ChatRequestError(RuntimeError):
    """The endpoint failed: an HTTP error, a timeout after retries, or a reply without content."""

    def __init__(self, message: str, *, attempts: int, status: int | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.status = status


@dataclass(frozen=True)
class ChatReply:
    """One chat completion: the assistant's text, token usage, model, attempts and latency."""

    content: str
    usage: dict[str, int]
    response_model: str | None
    attempts: int
    latency_ms: float

    def metadata(self) -> dict[str, Any]:
        """``raw_reply``, ``usage``, ``latency_ms``, ``attempts`` (+ ``response_model``)."""
        meta: dict[str, Any] = {
            "raw_reply": self.content,
            "usage": dict(self.usage),
            "latency_ms": self.latency_ms,
            "attempts": self.attempts,
        }
        if self.response_model:
            meta["response_model"] = self.response_model
        return meta


@dataclass(frozen=True)
class RetryPolicy:
    """How long to wait for a reply and how to retry: attempts = 1 + ``max_retries``."""

    timeout: float = 60.0
    max_retries: int = 3
    backoff: float = 1.0
    max_retry_after: float = 60.0


def env_value(names: Sequence[str], *, secret: bool = False) -> str | None:
    """The first non-blank environment variable among ``names`` (stripped), else None; with
    ``secret`` (an API key) the value is declared secret for every later redaction."""
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            if secret:
                declare_secrets(value)
            return value
    return None


def chat_body(
    model: str,
    messages: list[dict[str, str]],
    *,
    temperature: float,
    max_tokens: int | None,
    json_mode: bool,
) -> dict[str, Any]:
    """The Chat Completions request body judges and answerers send (JSON mode when asked)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "temperature": temperature,
        "max_tokens": max_tokens,
    }
    if json_mode:
        body["response_format"] = {"type": "json_object"}
    return body


def chat_endpoint(base_url: str) -> str:
    """The Chat Completions URL for a base URL (``.../v1`` or the full endpoint)."""
    base_url = base_url.rstrip("/")
    return base_url if base_url.endswith("/chat/completions") else f"{base_url}/chat/completions"


async def post_chat(
    endpoint: str,
    body: Mapping[str, Any],
    api_key: str | None,
    policy: RetryPolicy,
    *,
    error: type[ChatRequestError] = ChatRequestError,
) -> ChatReply:
    """POST ``body`` to ``endpoint`` with retries on 429/5xx/transport errors (honouring Retry-After)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    started = time.perf_counter()
    attempts = 0
    client_options: dict[str, Any] = {
        "timeout": httpx.Timeout(policy.timeout),
        "verify": ssl_context(),
    }
    async with httpx.AsyncClient(**client_options) as client:
        while True:
            attempts += 1
            delay, status, problem = None, None, ""
            try:
                response = await asyncio.wait_for(
                    client.post(endpoint, json=dict(body), headers=headers), policy.timeout
                )
            except asyncio.TimeoutError:
                problem = f"no reply within {policy.timeout} s"
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc or 'transport error'}"
            else:
                status = response.status_code
                if response.is_success:
                    latency = (time.perf_counter() - started) * 1000
                    return reply_of(response, attempts, latency, error=error)
                problem = f"HTTP {status}: {snippet(response.text)}"
                if status not in RETRY_STATUS and status < 500:
                    raise error(f"{endpoint} answered {problem}", attempts=attempts, status=status)
                delay = retry_after(response, policy.max_retry_after)
            if attempts > policy.max_retries:
                raise error(
                    f"{endpoint}: gave up after {attempts} attempt(s); last: {problem}",
                    attempts=attempts,
                    status=status,
                )
            await asyncio.sleep(
                delay if delay is not None else policy.backoff * 2 ** (attempts - 1)
            )


@functools.lru_cache(maxsize=1)
def ssl_context() -> ssl.SSLContext:
    """One TLS context for every client (chat endpoints, ``HttpSystem``): building one costs
    20-50 ms (it loads the CA bundle), a client per call is cheap."""
    return httpx.create_ssl_context()


def snippet(text: str, limit: int = 300) -> str:
    """``text`` on one line, cut at ``limit`` characters (for error messages)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def retry_after(response: httpx.Response, cap: float) -> float | None:
    """Seconds from a ``Retry-After`` header (seconds or an HTTP date), capped; None if absent."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    return min(max(seconds, 0.0), cap)


def reply_of(
    response: httpx.Response,
    attempts: int,
    latency_ms: float,
    *,
    error: type[ChatRequestError] = ChatRequestError,
) -> ChatReply:
    """The :class:`ChatReply` in a successful HTTP response (content parts joined)."""
    try:
        data = response.json()
        message = data["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise error(
            f"the endpoint's reply is not a chat completion: {snippet(response.text)}",
            attempts=attempts,
            status=response.status_code,
        ) from None
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else {}
    return ChatReply(
        content=content if isinstance(content, str) else "",
        usage={
            k: int(usage[k])
            for k in ("prompt_tokens", "completion_tokens", "total_tokens")
            if isinstance(usage.get(k), (int, float))
        },
        response_model=data.get("model") if isinstance(data.get("model"), str) else None,
        attempts=attempts,
        latency_ms=round(latency_ms, 3),
    )


__all__ = [
    "RETRY_STATUS",
    "ChatReply",
    "ChatRequestError",
    "RetryPolicy",
    "chat_body",
    "chat_endpoint",
    "env_value",
    "post_chat",
    "reply_of",
    "retry_after",
    "snippet",
]
