"""The chat answerer: an OpenAI-compatible model answers from numbered contexts, with citations.

It shares the judge's HTTP client (:mod:`heta_notebook._util.chat`: retries, ``Retry-After``) and
on-disk reply cache (:class:`~heta_notebook._util.chat_cache.ChatCache`, keyed by
model + prompt version + rendered messages). The reply is parsed into ``answer`` and
``citations``: a JSON object ``{"answer", "citations"}`` (also fenced or amid prose), else the
text itself with ``[n]`` markers as citations. ``null``/empty answers are abstentions. A failed
request never raises: the response keeps its results and ``metadata.answer.error`` says why.
The API key is read from the environment at call time and scrubbed from everything kept.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from heta_notebook._util.chat import (
    ChatReply,
    RetryPolicy,
    chat_body,
    chat_endpoint,
    env_value,
    post_chat,
)
from heta_notebook._util.redaction import redact_text, strip_url, url_secrets
from heta_notebook.kb._answer import Answer, ChatAnswer, citation_for
from heta_notebook.schema._records import QueryResult

ENV_BASE_URL = ("HETA_ANSWER_BASE_URL", "OPENAI_BASE_URL")
ENV_API_KEY = ("HETA_ANSWER_API_KEY", "OPENAI_API_KEY")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_MARKER = re.compile(r"\[(\d{1,3})\]")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_ABSTAIN = frozenset({"", "null", "none", "unanswerable", "no answer", "n/a"})


class ChatAnswerNotConfiguredError(RuntimeError):
    """The chat answerer's API key variable is not set (and the endpoint needs one)."""


def base_url_of(step: ChatAnswer) -> str:
    """The endpoint base URL: the step's, else the environment's, else OpenAI's."""
    return (step.base_url or env_value(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")


def render_messages(
    step: ChatAnswer, question: str, results: Sequence[QueryResult]
) -> list[dict[str, str]]:
    """The chat messages for ``question`` over the top ``max_contexts`` results (numbered from 1)."""
    contexts = "\n\n".join(
        f"[{n}] {_clip(result.text, step.max_context_chars)}"
        for n, result in enumerate(_contexts(step, results), start=1)
    )
    values = {"question": question, "contexts": contexts}
    return [
        {"role": "system", "content": _render(step.prompt.system, values)},
        {"role": "user", "content": _render(step.prompt.user, values)},
    ]


async def chat_answer(step: ChatAnswer, question: str, results: Sequence[QueryResult]) -> Answer:
    """Ask the endpoint (or its cached reply) and parse the answer and citations."""
    from heta_notebook._util.chat_cache import cache_key

    started = time.perf_counter()
    contexts = _contexts(step, results)
    meta: dict[str, Any] = {
        "answerer": "chat",
        "model": step.model,
        "base_url": strip_url(base_url_of(step)),
        "prompt_version": step.prompt.version,
        "contexts": len(contexts),
    }
    if not contexts:
        meta.update(abstained=True, reason="no retrieved result has text", latency_ms=0.0)
        return Answer(None, (), meta)
    messages = render_messages(step, question, results)
    key = cache_key(
        model=step.model,
        prompt_version=step.prompt.version,
        messages=messages,
        temperature=step.temperature,
        max_tokens=step.max_tokens,
    )
    cache = _cache(step)
    entry = cache.get(key) if cache is not None else None
    api_key = _api_key(step)
    if entry is not None:
        reply = ChatReply(entry["reply"], dict(entry.get("usage") or {}), None, 0, 0.0)
        meta.update(cache_hit=True)
    else:
        try:
            _check_key(step, api_key)
            reply = await post_chat(
                chat_endpoint(base_url_of(step)), _body(step, messages), api_key, _policy(step)
            )
        except Exception as exc:  # a dead endpoint costs this answer, not the run (nor the results)
            message = redact_text(f"{exc}", _secrets(step, api_key))
            error = {"message": message, "error_type": type(exc).__name__}
            meta.update(abstained=False, error=error, attempts=getattr(exc, "attempts", 0))
            meta["latency_ms"] = _elapsed(started)
            return Answer(None, (), meta)
        meta.update(cache_hit=False)
        if cache is not None:
            _store(cache, key, step, messages, reply, api_key, meta)
    text, numbers = parse_answer(reply.content)
    cited = [n for n in numbers if 1 <= n <= len(contexts)]
    citations = tuple(citation_for(n, contexts[n - 1]) for n in dict.fromkeys(cited))
    meta.update(
        abstained=text is None,
        raw_reply=redact_text(reply.content, _secrets(step, api_key)),
        usage=dict(reply.usage),
        attempts=reply.attempts,
        latency_ms=_elapsed(started),
    )
    if len(cited) != len(numbers):
        meta["invalid_citations"] = [n for n in numbers if n not in cited]
    return Answer(redact_text(text, _secrets(step, api_key)) if text else None, citations, meta)


def parse_answer(reply: str) -> tuple[str | None, list[int]]:
    """``(answer or None, cited context numbers)`` from a reply: JSON first, else marked-up text."""
    for obj in _json_objects(reply):
        if "answer" in obj:
            answer = obj.get("answer")
            text = str(answer).strip() if answer is not None else ""
            numbers = _numbers(obj.get("citations", obj.get("contexts", [])))
            if not numbers:
                numbers = [int(n) for n in _MARKER.findall(text)]
            text = _MARKER.sub("", text).strip()
            return (None if text.lower() in _ABSTAIN else text), numbers
    numbers = [int(n) for n in _MARKER.findall(reply)]
    text = " ".join(_MARKER.sub("", reply).split())
    return (None if text.lower().strip(".") in _ABSTAIN else text), numbers


def _json_objects(text: str) -> list[dict[str, Any]]:
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    decoder = json.JSONDecoder()
    candidates += [text[i:] for i, ch in enumerate(text) if ch == "{"]
    found = []
    for candidate in candidates:
        try:
            value, _ = decoder.raw_decode(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _numbers(value: Any) -> list[int]:
    items = value if isinstance(value, list) else [value]
    numbers = []
    for item in items:
        if isinstance(item, bool):
            continue
        if isinstance(item, (int, float)) and float(item).is_integer():
            numbers.append(int(item))
        elif isinstance(item, str):
            numbers += [int(n) for n in re.findall(r"\d+", item)]
    return numbers


def _contexts(step: ChatAnswer, results: Sequence[QueryResult]) -> list[QueryResult]:
    return [r for r in results if r.text and r.text.strip()][: step.max_contexts]


def _render(template: str, values: dict[str, str]) -> str:
    return re.sub(r"\{(question|contexts)\}", lambda m: values[m.group(1)], template)


def _body(step: ChatAnswer, messages: list[dict[str, str]]) -> dict[str, Any]:
    return chat_body(
        step.model,
        messages,
        temperature=step.temperature,
        max_tokens=step.max_tokens,
        json_mode=step.json_mode,
    )


def _policy(step: ChatAnswer) -> RetryPolicy:
    return RetryPolicy(step.timeout, step.max_retries, step.backoff, step.max_retry_after)


def _api_key(step: ChatAnswer) -> str | None:
    return env_value((step.api_key_env,) if step.api_key_env else ENV_API_KEY, secret=True)


def _secrets(step: ChatAnswer, api_key: str | None) -> tuple[str, ...]:
    """Everything never stored: the key, and the base URL's credentials (user info, secret
    query values, the Basic credential an HTTP client builds from them), however echoed."""
    return tuple(filter(None, (api_key, *url_secrets(base_url_of(step)))))


def _check_key(step: ChatAnswer, api_key: str | None) -> None:
    if api_key is not None:
        return
    if step.api_key_env:
        raise ChatAnswerNotConfiguredError(
            f"environment variable {step.api_key_env} (the answerer's API key) is not set"
        )
    if base_url_of(step) == DEFAULT_BASE_URL:
        raise ChatAnswerNotConfiguredError(
            "no API key for the chat answerer: set HETA_ANSWER_API_KEY or OPENAI_API_KEY "
            "(or base_url= for a local server without a key)"
        )


def _cache(step: ChatAnswer) -> Any:
    from heta_notebook._util.chat_cache import ChatCache, default_cache_dir

    if not step.use_cache:
        return None
    return ChatCache(step.cache_dir if step.cache_dir is not None else default_cache_dir())


def _store(
    cache: Any,
    key: str,
    step: ChatAnswer,
    messages: list[dict[str, str]],
    reply: ChatReply,
    api_key: str | None,
    meta: dict[str, Any],
) -> None:
    entry = {
        "kind": "answer",
        "model": step.model,
        "prompt_version": step.prompt.version,
        "temperature": step.temperature,
        "max_tokens": step.max_tokens,
        "messages": messages,
        "reply": reply.content,
        "response_model": reply.response_model,
        "usage": reply.usage,
        "latency_ms": reply.latency_ms,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    try:
        cache.put(key, json.loads(redact_text(json.dumps(entry), _secrets(step, api_key))))
    except OSError as exc:  # a read-only or full disk costs the cache, not the answer
        meta["cache_error"] = f"{type(exc).__name__}: {exc}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " [...]"


def _elapsed(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


__all__ = [
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ChatAnswerNotConfiguredError",
    "base_url_of",
    "chat_answer",
    "parse_answer",
    "render_messages",
]
