"""LLM-as-judge evaluators that talk to any OpenAI-compatible Chat Completions endpoint.

Configure the endpoint with environment variables (read when a judge is created; the key
is read at call time and never stored on the judge, in a report, a manifest or the cache):

- ``HETA_JUDGE_BASE_URL`` (else ``OPENAI_BASE_URL``, else ``https://api.openai.com/v1``)
- ``HETA_JUDGE_MODEL`` (else ``gpt-4o-mini``)
- ``HETA_JUDGE_API_KEY`` (else ``OPENAI_API_KEY``); a local server without a key works too
- ``HETA_JUDGE_CACHE_DIR`` where replies are cached when no ``store=``/``cache_dir=`` is given

Every score carries ``metadata``: ``reason`` (what explorers show), ``raw_reply``, ``model``,
``prompt_version``, ``usage`` (prompt/completion/total tokens), ``latency_ms``, ``attempts``
and ``cache_hit``. A judge never raises for a bad reply or a dead endpoint: it returns an
error score (``metadata.error``) with the raw reply, so one bad case does not stop a run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from heta_notebook._util.chat import (
    ChatReply,
    ChatRequestError,
    RetryPolicy,
    chat_body,
    chat_endpoint,
    env_value,
    post_chat,
    retry_after,
)
from heta_notebook._util.chat_cache import ChatCache, cache_key, default_cache_dir
from heta_notebook._util.redaction import redact_text, strip_url, url_secrets
from heta_notebook.evaluators._judge_parse import (
    LABEL_KEYS,
    JudgeParseError,
    Verdict,
    normalise_label,
    parse_reply,
)
from heta_notebook.evaluators._judge_prompts import (
    ANSWER_CORRECTNESS,
    CONTEXT_RELEVANCE,
    FAITHFULNESS,
    LABEL_OUTPUT,
    SCORE_OUTPUT,
    SYSTEM_PREAMBLE,
    JudgePrompt,
    render,
)
from heta_notebook.evaluators._protocol import EvaluatorSettings
from heta_notebook.schema._records import BenchmarkCase, EvaluationScore, QueryResponse

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.reports._store import ReportStore

ENV_BASE_URL = ("HETA_JUDGE_BASE_URL", "OPENAI_BASE_URL")
ENV_MODEL = ("HETA_JUDGE_MODEL",)
ENV_API_KEY = ("HETA_JUDGE_API_KEY", "OPENAI_API_KEY")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"

_SKIP_REASONS = {
    "query": "the case has no query",
    "answer": "the response has no answer to judge",
    "expected_answers": "the case has no expected answer",
    "expected_answer": "the case has no expected answer",
    "contexts": "the response retrieved no results with text",
    "expected_value": "the case has no expected value",
}


class JudgeNotConfiguredError(RuntimeError):
    """No judge endpoint is configured (no API key and no base URL in the environment)."""


class JudgeRequestError(ChatRequestError):
    """The endpoint failed: an HTTP error, a timeout after retries, or a reply without content."""


_env = env_value
_retry_after = retry_after  # kept importable here (tests and older callers)
_Reply = ChatReply


def judge_configured() -> bool:
    """Whether an endpoint is configured: an API key or a base URL in the environment.

    Notebooks use it to skip judge sections honestly when nothing is configured.
    """
    return _env(ENV_API_KEY) is not None or _env(ENV_BASE_URL) is not None


# --------------------------------------------------------------------------- what a judge reads


@dataclass(frozen=True)
class JudgeInputs:
    """The texts a judge prompt can use, taken from a case and its response."""

    query: str | None
    answer: str | None
    expected_answers: tuple[str, ...]
    contexts: tuple[str, ...]
    expected_value: Any = None


def judge_inputs(case: BenchmarkCase, response: QueryResponse) -> JudgeInputs:
    """Query, answer, expected answers and retrieved texts of a case.

    Falls back to the HoneyHive dicts ``evaluate()`` keeps in metadata.
    """
    outputs = response.metadata.get("outputs")
    inputs = case.metadata.get("inputs")
    truth = case.metadata.get("ground_truth")
    answer = response.answer if _text(response.answer) else _pick(outputs, "answer", "output")
    contexts = tuple(r.text for r in response.results if _text(r.text))
    if not contexts and isinstance(outputs, Mapping):
        contexts = _texts(outputs.get("contexts") or outputs.get("results") or ())
    expected = tuple(case.expected.answers)
    if not expected:
        expected = _texts(_pick_raw(truth, "answers", "answer", "expected", "reference"))
    query = _pick(inputs, "query", "question", "input") if inputs is not None else None
    if query is None and not case.metadata.get("query_missing"):
        query = case.query
    return JudgeInputs(
        query=query if _text(query) else None,
        answer=answer if _text(answer) else None,
        expected_answers=expected,
        contexts=contexts,
        expected_value=case.expected.value,
    )


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _pick_raw(source: Any, *keys: str) -> Any:
    if isinstance(source, Mapping):
        for key in keys:
            if source.get(key) not in (None, "", [], ()):
                return source[key]
        return None
    return source


def _pick(source: Any, *keys: str) -> str | None:
    value = _pick_raw(source, *keys)
    return value if isinstance(value, str) else None


def _texts(value: Any) -> tuple[str, ...]:
    """Strings from a string, a list of strings, or a list of dicts with ``text``/``content``."""
    items = [value] if isinstance(value, (str, Mapping)) else list(value or ())
    texts: list[str] = []
    for item in items:
        text = _pick(item, "text", "content", "page_content") if isinstance(item, Mapping) else item
        if _text(text):
            texts.append(str(text))
    return tuple(texts)


# --------------------------------------------------------------------------- the judge


class LLMJudge:
    """An evaluator that asks an LLM to score a response against a rubric.

    ``prompt`` is a user-message template (or a :class:`JudgePrompt`) using placeholders
    such as ``{query}``, ``{answer}``, ``{expected_answers}`` and ``{contexts}``; a case
    lacking what the template uses is skipped without a request. ``output="score"`` expects
    a score (in ``score_range``, normalised to [0, 1]; ``passed`` = score >= threshold);
    ``output="label"`` expects one of ``labels`` (a mapping label → passed). Replies are
    cached by model + prompt + inputs; ``refresh=True`` re-asks, ``use_cache=False``
    neither reads nor writes.
    """

    def __init__(
        self,
        name: str = "llm_judge",
        *,
        prompt: str | JudgePrompt,
        system_prompt: str | None = None,
        prompt_version: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        api_key_env: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        output: Literal["score", "label"] = "score",
        labels: Mapping[str, bool] | None = None,
        score_range: tuple[float, float] = (0.0, 1.0),
        threshold: float | None = 0.5,
        settings: EvaluatorSettings | None = None,
        output_instructions: str | None = None,
        max_contexts: int = 5,
        max_context_chars: int = 2000,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_retry_after: float = 60.0,
        max_concurrency: int | None = 4,
        store: ReportStore | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        use_cache: bool = True,
        refresh: bool = False,
        json_mode: bool = False,
    ) -> None:
        self._name = name
        self.prompt = _as_prompt(prompt, system_prompt, prompt_version)
        self.model = model or _env(ENV_MODEL) or DEFAULT_MODEL
        self.base_url = (base_url or _env(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")
        self.api_key_env = api_key_env
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.output = output
        self.labels = _check_output(output, labels, score_range)
        self.score_range = (float(score_range[0]), float(score_range[1]))
        self.output_instructions = output_instructions
        self.max_contexts, self.max_context_chars = max_contexts, max_context_chars
        self.timeout, self.max_retries, self.backoff = timeout, max_retries, backoff
        self.max_retry_after, self.max_concurrency = max_retry_after, max_concurrency
        self.json_mode = json_mode
        self.refresh = refresh
        self.cache = _cache_for(store, cache_dir) if use_cache else None
        base = settings or EvaluatorSettings()
        if base.threshold is None and output == "score":
            base = base.model_copy(update={"threshold": threshold})
        self.settings = base
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._semaphores = weakref.WeakKeyDictionary()
        self._pending: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]]
        self._pending = weakref.WeakKeyDictionary()

    @classmethod
    def from_env(cls, *args: Any, **options: Any) -> LLMJudge:
        """A judge configured from the environment; raises when nothing is configured."""
        if not judge_configured():
            raise JudgeNotConfiguredError(
                "no LLM judge endpoint configured: set HETA_JUDGE_API_KEY (or OPENAI_API_KEY), "
                "and optionally HETA_JUDGE_BASE_URL and HETA_JUDGE_MODEL"
            )
        return cls(*args, **options)

    @property
    def name(self) -> str:
        """The score name used in reports."""
        return self._name

    @property
    def endpoint(self) -> str:
        """The Chat Completions URL requests go to."""
        return chat_endpoint(self.base_url)

    def manifest(self) -> dict[str, Any]:
        """A JSON description of the judge (no API key; only the variable's name)."""
        return {
            "name": self.name,
            "type": type(self).__name__,
            "model": self.model,
            "base_url": strip_url(self.base_url),
            "api_key_env": self.api_key_env or list(ENV_API_KEY),
            "prompt_version": self.prompt.version,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "output": self.output,
            "labels": dict(self.labels) if self.labels else None,
            "score_range": list(self.score_range),
            "threshold": self.settings.threshold,
        }

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, model={self.model!r}, "
            f"base_url={strip_url(self.base_url)!r}, prompt_version={self.prompt.version!r}, "
            f"output={self.output!r})"
        )

    # -- prompt ---------------------------------------------------------------------------

    def requirements(self) -> tuple[str, ...]:
        """What a case must provide (from the template's placeholders), in a stable order."""
        used = self.prompt.placeholders()
        return tuple(k for k in _SKIP_REASONS if k in used)

    def render_messages(self, case: BenchmarkCase, response: QueryResponse) -> list[dict[str, str]]:
        """The chat messages this judge would send for a case (to read or debug a prompt)."""
        return self._messages(judge_inputs(case, response))

    def _messages(self, inputs: JudgeInputs) -> list[dict[str, str]]:
        values = self._values(inputs)
        instructions = self.output_instructions
        if instructions is None:
            instructions = LABEL_OUTPUT if self.output == "label" else SCORE_OUTPUT
        system = render(self.prompt.system, values)
        if instructions:
            system = f"{system}\n\n{render(instructions, values)}"
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": render(self.prompt.user, values)},
        ]

    def _values(self, inputs: JudgeInputs) -> dict[str, str]:
        contexts = inputs.contexts[: self.max_contexts]
        return {
            "query": inputs.query or "",
            "answer": inputs.answer or "",
            "expected_answers": "\n".join(f"- {a}" for a in inputs.expected_answers),
            "expected_answer": inputs.expected_answers[0] if inputs.expected_answers else "",
            "contexts": "\n".join(
                f'<context id="{i}">\n{_clip(text, self.max_context_chars)}\n</context>'
                for i, text in enumerate(contexts, start=1)
            ),
            "expected_value": json.dumps(inputs.expected_value, ensure_ascii=False, default=str),
            "labels": ", ".join(self.labels or ()),
        }

    def _missing(self, inputs: JudgeInputs) -> str | None:
        present = {
            "query": inputs.query is not None,
            "answer": inputs.answer is not None,
            "expected_answers": bool(inputs.expected_answers),
            "expected_answer": bool(inputs.expected_answers),
            "contexts": bool(inputs.contexts),
            "expected_value": inputs.expected_value is not None,
        }
        for need in self.requirements():
            if not present[need]:
                return _SKIP_REASONS[need]
        return None

    # -- evaluation -----------------------------------------------------------------------

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Judge one response; skipped when inputs are missing, an error score on failure."""
        api_key = self._api_key()
        inputs = judge_inputs(case, response)
        missing = self._missing(inputs)
        if missing is not None:
            return EvaluationScore.skipped_score(self.name, missing, **self._identity())
        messages = self._messages(inputs)
        key = cache_key(
            model=self.model,
            prompt_version=self.prompt.version,
            messages=messages,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        score = self._from_cache(key) or await self._ask_once(messages, key, api_key)
        return _redact_score(score, self._secrets(api_key))

    def _secrets(self, api_key: str | None) -> tuple[str, ...]:
        """Everything that must never be stored: the key and the base URL's credentials."""
        return tuple(filter(None, (api_key, *url_secrets(self.base_url))))

    async def _ask_once(
        self, messages: list[dict[str, str]], key: str, api_key: str | None
    ) -> EvaluationScore:
        """Ask, unless the same request is already in flight: then share its reply (one bill)."""
        loop = asyncio.get_running_loop()
        pending = self._pending.setdefault(loop, {})
        task = pending.get(key)
        if task is None:
            task = pending[key] = loop.create_task(self._ask(messages, key, api_key))
            task.add_done_callback(lambda _: pending.pop(key, None))
            return await asyncio.shield(task)
        score = await asyncio.shield(task)
        if score.status != "scored":
            return score
        shared = {**score.metadata, "cache_hit": True, "attempts": 0, "shared_request": True}
        return score.model_copy(update={"metadata": shared})

    def _from_cache(self, key: str) -> EvaluationScore | None:
        if self.cache is None or self.refresh:
            return None
        entry = self.cache.get(key)
        if entry is None:
            return None
        reply = _Reply(
            content=entry["reply"],
            usage=dict(entry.get("usage") or {}),
            response_model=entry.get("response_model"),
            attempts=0,
            latency_ms=float(entry.get("latency_ms") or 0.0),
        )
        try:
            return self._score(parse_reply(reply.content), reply, key, cache_hit=True)
        except JudgeParseError:  # e.g. the output spec changed since: ask again
            return None

    async def _ask(
        self, messages: list[dict[str, str]], key: str, api_key: str | None
    ) -> EvaluationScore:
        meta = {**self._identity(), "cache_hit": False, "cache_key": key}
        started = time.perf_counter()
        try:
            self._check_key(api_key)
            async with self._semaphore():
                reply = await self._post(messages, api_key)
        except Exception as exc:  # a dead endpoint must not stop the run (cancellation still does)
            latency = round((time.perf_counter() - started) * 1000, 3)
            attempts = getattr(exc, "attempts", 0)
            return EvaluationScore.error_score(
                self.name, exc, **meta, attempts=attempts, latency_ms=latency
            )
        try:
            score = self._score(parse_reply(reply.content), reply, key, cache_hit=False)
        except JudgeParseError as exc:
            return EvaluationScore.error_score(self.name, exc, **meta, **reply.metadata())
        if self.cache is not None:
            try:
                self.cache.put(key, self._cache_entry(messages, reply, api_key))
            except OSError as exc:  # a read-only or full disk costs the cache, not the judgment
                metadata = {**score.metadata, "cache_error": f"{type(exc).__name__}: {exc}"}
                score = score.model_copy(update={"metadata": metadata})
        return score

    def _score(
        self, verdict: Verdict, reply: _Reply, key: str, *, cache_hit: bool
    ) -> EvaluationScore:
        value, passed, extra = self._value_of(verdict)
        metadata: dict[str, Any] = {
            **self._identity(),
            **({"reason": verdict.reason} if verdict.reason else {}),
            **extra,
            **reply.metadata(),
            "cache_hit": cache_hit,
            "cache_key": key,
        }
        return EvaluationScore(name=self.name, value=value, passed=passed, metadata=metadata)

    def _value_of(self, verdict: Verdict) -> tuple[float | str, bool | None, dict[str, Any]]:
        """The score value, passed and extra metadata; JudgeParseError if the reply does not fit."""
        extra: dict[str, Any] = {}
        if verdict.passed is not None:
            extra["judge_passed"] = verdict.passed
        if self.output == "label":
            label = self._canonical_label(verdict)
            assert self.labels is not None  # label output requires labels (checked at init)
            return label, bool(self.labels[label]), {**extra, "label": label}
        raw = verdict.score
        if raw is None and verdict.passed is not None:
            raw = self.score_range[1] if verdict.passed else self.score_range[0]
            extra["score_from_verdict"] = True
        if raw is None:
            raise JudgeParseError("the judge reply has no score")
        low, high = self.score_range
        if not low - 1e-9 <= raw <= high + 1e-9:
            raise JudgeParseError(f"the judge's score {raw} is outside {low}..{high}")
        value = min(1.0, max(0.0, (raw - low) / (high - low)))
        if (low, high) != (0.0, 1.0):
            extra["raw_score"] = raw
        threshold = self.settings.threshold
        passed = value >= threshold if threshold is not None else verdict.passed
        return value, passed, extra

    def _canonical_label(self, verdict: Verdict) -> str:
        assert self.labels is not None
        wanted = {normalise_label(label): label for label in self.labels}
        fields = {str(k).lower(): v for k, v in verdict.fields.items()}
        for candidate in (verdict.label, *(fields.get(k) for k in LABEL_KEYS)):
            if isinstance(candidate, str) and normalise_label(candidate) in wanted:
                return wanted[normalise_label(candidate)]
        raise JudgeParseError(
            f"the judge's label {verdict.label!r} is not one of {', '.join(self.labels)}"
        )

    def _identity(self) -> dict[str, Any]:
        return {"model": self.model, "prompt_version": self.prompt.version}

    def _cache_entry(
        self, messages: list[dict[str, str]], reply: _Reply, api_key: str | None
    ) -> dict[str, Any]:
        entry = {
            "model": self.model,
            "prompt_version": self.prompt.version,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "messages": messages,
            "reply": reply.content,
            "response_model": reply.response_model,
            "usage": reply.usage,
            "latency_ms": reply.latency_ms,
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        return json.loads(redact_text(json.dumps(entry), self._secrets(api_key)))

    # -- HTTP -----------------------------------------------------------------------------

    def _api_key(self) -> str | None:
        """The API key from the environment, read now (never kept on the judge)."""
        names = (self.api_key_env,) if self.api_key_env else ENV_API_KEY
        return _env(names, secret=True)

    def _check_key(self, api_key: str | None) -> None:
        if api_key is not None:
            return
        if self.api_key_env:
            raise JudgeNotConfiguredError(
                f"environment variable {self.api_key_env} (the judge's API key) is not set"
            )
        if self.base_url == DEFAULT_BASE_URL:
            raise JudgeNotConfiguredError(
                "no API key for the judge: set HETA_JUDGE_API_KEY or OPENAI_API_KEY "
                "(or HETA_JUDGE_BASE_URL for a local server without a key)"
            )

    def _semaphore(self) -> asyncio.Semaphore:
        """One semaphore per event loop (notebooks run several loops over a judge's life)."""
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            limit = self.max_concurrency or 1_000_000
            semaphore = self._semaphores[loop] = asyncio.Semaphore(limit)
        return semaphore

    async def _post(self, messages: list[dict[str, str]], api_key: str | None) -> _Reply:
        """POST with retries on 429/5xx/transport errors (honouring Retry-After)."""
        body = chat_body(
            self.model,
            messages,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            json_mode=self.json_mode,
        )
        policy = RetryPolicy(self.timeout, self.max_retries, self.backoff, self.max_retry_after)
        return await post_chat(self.endpoint, body, api_key, policy, error=JudgeRequestError)

    # -- HoneyHive-style call -------------------------------------------------------------

    async def acall(
        self, outputs: Any, inputs: Any = None, ground_truth: Any = None
    ) -> dict[str, Any]:
        """Judge HoneyHive-style ``(outputs, inputs, ground_truth)``; returns a result dict."""
        case, response = _honeyhive_case(outputs, inputs, ground_truth)
        score = await self.evaluate(case=case, response=response)
        return {"score": score.value, "passed": score.passed, **score.metadata}

    def __call__(
        self, outputs: Any, inputs: Any = None, ground_truth: Any = None
    ) -> dict[str, Any]:
        """Synchronous :meth:`acall`, usable like a function decorated with ``@evaluator``.

        Inside a running event loop (Jupyter) it runs on a helper thread with its own loop.
        In ``evaluate(..., evaluators=[judge])`` the judge is used through ``evaluate()``.
        """
        from heta_notebook._util.loop import run_sync

        return run_sync(lambda: self.acall(outputs, inputs, ground_truth))


# --------------------------------------------------------------------------- built-in judges


class AnswerCorrectnessJudge(LLMJudge):
    """Is the answer correct against the expected answers? (skipped without either)."""

    def __init__(self, name: str = "answer_correctness", **options: Any) -> None:
        options.setdefault("prompt", ANSWER_CORRECTNESS)
        super().__init__(name, **options)


class FaithfulnessJudge(LLMJudge):
    """Is every claim of the answer supported by the retrieved results? (skipped without either)."""

    def __init__(self, name: str = "faithfulness", **options: Any) -> None:
        options.setdefault("prompt", FAITHFULNESS)
        super().__init__(name, **options)


class ContextRelevanceJudge(LLMJudge):
    """Do the retrieved results hold what the query needs? (skipped without results)."""

    def __init__(self, name: str = "context_relevance", **options: Any) -> None:
        options.setdefault("prompt", CONTEXT_RELEVANCE)
        super().__init__(name, **options)


# --------------------------------------------------------------------------- helpers


def _as_prompt(prompt: str | JudgePrompt, system: str | None, version: str | None) -> JudgePrompt:
    if isinstance(prompt, JudgePrompt):
        if system is None and version is None:
            return prompt
        return JudgePrompt(
            version=version or prompt.version, system=system or prompt.system, user=prompt.user
        )
    system = system or SYSTEM_PREAMBLE
    if version is None:
        digest = hashlib.sha256(f"{system}\n\x00\n{prompt}".encode()).hexdigest()[:12]
        version = f"custom/{digest}"
    return JudgePrompt(version=version, system=system, user=prompt)


def _check_output(
    output: str, labels: Mapping[str, bool] | None, score_range: tuple[float, float]
) -> dict[str, bool] | None:
    if output not in ("score", "label"):
        raise ValueError(f"output must be 'score' or 'label', got {output!r}")
    if output == "label" and not labels:
        raise ValueError("output='label' needs labels={label: passed, ...}")
    if not score_range[0] < score_range[1]:
        raise ValueError(f"score_range must be (low, high) with low < high, got {score_range}")
    return {str(k): bool(v) for k, v in labels.items()} if labels else None


def _cache_for(store: ReportStore | None, cache_dir: str | os.PathLike[str] | None) -> ChatCache:
    if store is not None:
        return ChatCache.in_store(store)
    return ChatCache(cache_dir if cache_dir is not None else default_cache_dir())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " [...]"


def _honeyhive_case(
    outputs: Any, inputs: Any, ground_truth: Any
) -> tuple[BenchmarkCase, QueryResponse]:
    query = _pick(inputs, "query", "question", "input") if inputs is not None else None
    case = BenchmarkCase(
        case_id="call",
        query=query or "(no query)",
        metadata={
            "inputs": inputs if inputs is not None else {},
            "ground_truth": ground_truth,
            "query_missing": query is None,
        },
    )
    return case, QueryResponse(mode="call", metadata={"outputs": outputs})


def _redact_score(score: EvaluationScore, secrets: Sequence[str]) -> EvaluationScore:
    """The score with any credential (the key, URL user info or query tokens, in any
    encoding, e.g. echoed in an error body) replaced."""
    text = score.model_dump_json()
    clean = redact_text(text, secrets)
    return score if clean == text else EvaluationScore.model_validate_json(clean)


__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_MODEL",
    "AnswerCorrectnessJudge",
    "ContextRelevanceJudge",
    "FaithfulnessJudge",
    "JudgeInputs",
    "JudgeNotConfiguredError",
    "JudgeRequestError",
    "LLMJudge",
    "judge_configured",
    "judge_inputs",
]
