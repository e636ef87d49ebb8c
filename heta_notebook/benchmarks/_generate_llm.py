"""LLM-generated questions (and answers) from one chunk, or two related chunks (multi-hop).

It uses the one OpenAI-compatible client the judge and the chat answerer use
(``_util/chat.py``; ``HETA_JUDGE_BASE_URL``/``OPENAI_BASE_URL``, ``HETA_JUDGE_API_KEY``/
``OPENAI_API_KEY``, ``HETA_JUDGE_MODEL``, read at call time; the key is never stored).
Every candidate ends kept or dropped with a recorded reason, so nothing generated is lost:

- ``request_failed``: the endpoint erred or timed out (after retries);
- ``unparseable``: the reply is not ``{"question": ..., "answer": ...}``;
- ``unsupported_answer``: under ``support`` of the answer's words are in the evidence;
- ``not_self_contained``: the question points at its context ("the passage", "this text");
- ``answer_in_question``: the question already holds the answer;
- ``near_duplicate``: word Jaccard ≥ ``duplicate`` with a question kept before it;
- ``answerable_without_evidence``: asked without the evidence (``closed_book_check``), the
  model still gives the answer (word F1 ≥ 0.8).

A kept case carries a difficulty estimate (the share of its question's words not in the
evidence). Token usage, requests and (with ``prices``, per 1k tokens) cost are recorded.
With ``cache_dir``, every reply is kept as it arrives (the judge's ``ChatCache`` format): a
run stopped half-way, or one with timeouts, asks again only what it does not have yet.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from heta_notebook._util.chat import (
    ChatRequestError,
    RetryPolicy,
    chat_body,
    chat_endpoint,
    env_value,
    post_chat,
    snippet,
)
from heta_notebook._util.chat_cache import ChatCache, cache_key
from heta_notebook._util.loop import run_sync
from heta_notebook.benchmarks._generate_offline import CorpusDoc, Generated, stopwords, tokens
from heta_notebook.benchmarks._generation_manifest import text_hash

SYSTEM = (
    "You write evaluation questions for a search system. Reply with one JSON object only: "
    '{"question": "...", "answer": "..."}.'
)
SINGLE = (
    "Write one question that this passage answers. The question must make sense on its own "
    "(never say 'the passage' or 'the text') and must not contain its answer. The answer is a "
    "short phrase copied from the passage.\n\nPassage:\n{first}"
)
MULTIHOP = (
    "Write one question that needs BOTH passages to answer. The question must make sense on "
    "its own (never say 'the passage' or 'the text') and must not contain its answer. The "
    "answer is a short phrase using words from the passages.\n\nPassage 1:\n{first}\n\n"
    "Passage 2:\n{second}"
)
CLOSED_BOOK_SYSTEM = "Answer the question in a few words. Reply with the answer only."
CLOSED_BOOK = "Answer in a few words, from what you know (no context is given): {question}"
CONTEXT_WORDS = re.compile(
    r"\b(the|this|that|above|given|following) (passage|text|document|excerpt|paragraph|article)s?\b"
    r"|\baccording to the\b|\bthe author\b",
    re.IGNORECASE,
)


@dataclass
class LlmOutcome:
    """What the LLM generator made: kept cases, every drop with its reason, and the facts."""

    kept: list[Generated]
    drops: list[dict[str, Any]]
    produced: int
    parameters: dict[str, Any]
    manifest_fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Chunk:
    document_id: str
    start: int
    end: int
    text: str


def generate_llm_cases(
    docs: Sequence[CorpusDoc],
    n: int,
    rng: np.random.Generator,
    *,
    multihop: bool = False,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    chunk_words: int = 120,
    limit: int | None = None,
    sample: int | None = None,
    closed_book_check: bool = True,
    support: float = 0.6,
    duplicate: float = 0.8,
    max_concurrency: int = 4,
    timeout: float = 60.0,
    max_retries: int = 2,
    prices: Mapping[str, float] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> LlmOutcome:
    """Ask the model for ``n`` candidates (``sample``: a seeded draw of that many chunks;
    ``limit``: the first chunks), filter them, and say why each dropped one was dropped."""
    from heta_notebook.evaluators._judge import (
        DEFAULT_BASE_URL,
        DEFAULT_MODEL,
        ENV_API_KEY,
        ENV_BASE_URL,
        ENV_MODEL,
    )

    model = model or env_value(ENV_MODEL) or DEFAULT_MODEL
    url = (base_url or env_value(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")
    api_key = env_value((api_key_env,) if api_key_env else ENV_API_KEY)
    chunks = _chunks(docs, chunk_words)
    picked = _pick(len(chunks), n, rng, limit=limit, sample=sample)
    stop = stopwords()
    words = [set(tokens(c.text, stop)) for c in chunks] if multihop else []
    pairs = [(chunks[i], _related(chunks, words, i) if multihop else None) for i in picked]
    policy = RetryPolicy(timeout=timeout, max_retries=max_retries, backoff=0.1)
    template = MULTIHOP if multihop else SINGLE
    prompt_hash = text_hash("\n\x1e".join((SYSTEM, template, CLOSED_BOOK_SYSTEM, CLOSED_BOOK)))
    client = _Client(chat_endpoint(url), model, api_key, policy, max_concurrency)
    if cache_dir is not None:
        client.cache, client.prompt_hash = ChatCache(cache_dir), prompt_hash
    replies = run_sync(lambda: client.many([_prompt(template, a, b) for a, b in pairs]))
    kept, drops = _first_filters(pairs, replies, stop, support, duplicate)
    if closed_book_check and kept:
        questions = [case.query for case, _ in kept]
        asks = [CLOSED_BOOK.format(question=q) for q in questions]
        answers = run_sync(lambda: client.many(asks, system=CLOSED_BOOK_SYSTEM, json_mode=False))
        kept, drops = _closed_book(kept, answers, drops, stop)
    settings = {
        "multihop": multihop, "chunk_words": chunk_words, "limit": limit, "sample": sample,
        "closed_book_check": closed_book_check, "support": support, "duplicate": duplicate,
        "base_url": _host(url),
    }  # fmt: skip
    fields = {"model": model, "prompt_hash": prompt_hash, "usage": client.usage(prices)}
    drops.sort(key=lambda d: d["candidate"])
    return LlmOutcome([case for case, _ in kept], drops, len(pairs), settings, fields)


# --------------------------------------------------------------------------- the endpoint


class _Client:
    """Bounded concurrent requests; a failure is returned as the exception, never raised."""

    def __init__(self, endpoint: str, model: str, key: str | None, policy: RetryPolicy, width: int):
        self.endpoint, self.model, self.key, self.policy = endpoint, model, key, policy
        self.width = max(1, width)
        self.tokens: Counter[str] = Counter()
        self.requests = self.cached = 0
        self.cache: ChatCache | None = None
        self.prompt_hash = ""

    async def many(
        self, prompts: Sequence[str], *, system: str = SYSTEM, json_mode: bool = True
    ) -> list[Any]:
        gate = asyncio.Semaphore(self.width)

        async def one(prompt: str) -> Any:
            async with gate:
                return await self.ask(prompt, system, json_mode)

        return list(await asyncio.gather(*(one(p) for p in prompts)))

    async def ask(self, prompt: str, system: str, json_mode: bool) -> Any:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        body = chat_body(self.model, messages, temperature=0.0, max_tokens=256, json_mode=json_mode)
        key = cache_key(
            model=self.model, prompt_version=self.prompt_hash, messages=messages,
            temperature=0.0, max_tokens=256,
        )  # fmt: skip
        entry = self.cache.get(key) if self.cache is not None else None
        if entry is not None:
            self.cached += 1
            return entry["reply"]
        self.requests += 1
        try:
            reply = await post_chat(self.endpoint, body, self.key, self.policy)
        except ChatRequestError as exc:
            return exc  # not cached: a later run asks again
        self.tokens.update(reply.usage)
        if self.cache is not None:
            self.cache.put(key, {"reply": reply.content, "usage": dict(reply.usage)})
        return reply.content

    def usage(self, prices: Mapping[str, float] | None) -> dict[str, Any]:
        out: dict[str, Any] = {"requests": self.requests, **dict(sorted(self.tokens.items()))}
        if self.cache is not None:
            out["cached"] = self.cached
        if prices:
            cost = sum(
                self.tokens.get(f"{kind}_tokens", 0) / 1000 * float(prices.get(kind, 0.0))
                for kind in ("prompt", "completion")
            )
            out["cost"] = round(cost, 6)
        return out


def _host(url: str) -> str:
    from heta_notebook._util.redaction import strip_url

    return strip_url(url)


# --------------------------------------------------------------------------- the filters


def _first_filters(pairs, replies, stop, support, duplicate):
    kept: list[tuple[Generated, set[str]]] = []
    drops: list[dict[str, Any]] = []
    for index, ((first, second), reply) in enumerate(zip(pairs, replies, strict=True)):
        where = {"candidate": index, "document_id": first.document_id}
        if isinstance(reply, Exception):
            drops.append({**where, "reason": "request_failed", "detail": snippet(str(reply))})
            continue
        parsed = _parse(reply)
        if parsed is None:
            drops.append({**where, "reason": "unparseable", "detail": snippet(reply, 200)})
            continue
        question, answer = parsed
        evidence = first.text + ("\n" + second.text if second else "")
        reason = _problem(question, answer, evidence, stop, support)
        q_words = set(tokens(question, stop))
        if reason is None:
            twin = next(
                (k for k, (_, w) in enumerate(kept) if _jaccard(q_words, w) >= duplicate), None
            )
            if twin is not None:
                reason = "near_duplicate"
                where["duplicate_of"] = kept[twin][0].metadata["candidate"]
        if reason is not None:
            drops.append({**where, "reason": reason, "question": question, "answer": answer})
            continue
        kept.append((_case(index, first, second, question, answer, evidence, stop), q_words))
    return kept, drops


def _problem(question: str, answer: str, evidence: str, stop, support: float) -> str | None:
    a_words, e_words = tokens(answer, stop), set(tokens(evidence, stop))
    if a_words and sum(w in e_words for w in a_words) / len(a_words) < support:
        return "unsupported_answer"
    if CONTEXT_WORDS.search(question):
        return "not_self_contained"
    if a_words and set(a_words) <= set(tokens(question, stop)):
        return "answer_in_question"
    return None


def _closed_book(kept, answers, drops, stop):
    still = []
    for (case, words), reply in zip(kept, answers, strict=True):
        where = {"candidate": case.metadata["candidate"], "document_id": case.document_id}
        if isinstance(reply, Exception):
            detail = "closed-book check: " + snippet(str(reply))
            drops.append(
                {**where, "reason": "request_failed", "detail": detail, "question": case.query}
            )
        elif _f1(tokens(reply, stop), tokens(case.metadata["answer"], stop)) >= 0.8:
            drops.append(
                {**where, "reason": "answerable_without_evidence", "question": case.query,
                 "answer": case.metadata["answer"], "detail": snippet(reply, 200)}
            )  # fmt: skip
        else:
            still.append((case, words))
    return still, drops


def _case(index, first, second, question, answer, evidence, stop) -> Generated:
    q_words = tokens(question, stop)
    e_words = set(tokens(evidence, stop))
    difficulty = 1 - sum(w in e_words for w in q_words) / len(q_words) if q_words else 0.0
    metadata: dict[str, Any] = {
        "candidate": index,
        "answer": answer,
        "difficulty": round(difficulty, 4),
        "difficulty_label": "easy"
        if difficulty < 0.2
        else "medium"
        if difficulty < 0.5
        else "hard",
    }
    others: tuple[str, ...] = ()
    if second is not None:
        metadata["second_evidence"] = {
            "document_id": second.document_id,
            "start": second.start,
            "end": second.end,
        }
        others = (second.document_id,) if second.document_id != first.document_id else ()
    return Generated(question, first.document_id, (first.start, first.end), metadata, others)


def _parse(reply: str) -> tuple[str, str] | None:
    text = reply.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    question, answer = value.get("question"), value.get("answer", "")
    if not isinstance(question, str) or len(question.split()) < 3 or not isinstance(answer, str):
        return None
    return question.strip(), answer.strip()


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def _f1(predicted: list[str], gold: list[str]) -> float:
    common = sum((Counter(predicted) & Counter(gold)).values())
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall)


# --------------------------------------------------------------------------- chunks


def _chunks(docs: Sequence[CorpusDoc], words: int) -> list[_Chunk]:
    out = []
    for doc in docs:
        text = doc.text
        spans = [m.span() for m in re.finditer(r"\S+", text)]
        for i in range(0, len(spans), words):
            start, end = spans[i][0], spans[min(i + words, len(spans)) - 1][1]
            out.append(_Chunk(doc.document_id, start, end, text[start:end]))
    if not out:
        raise ValueError("the corpus has no text to chunk")
    return out


def _pick(total: int, n: int, rng, *, limit: int | None, sample: int | None) -> list[int]:
    for name, value in (("limit", limit), ("sample", sample)):
        if value is not None and (not isinstance(value, int) or value <= 0):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if limit is not None:
        return list(range(min(limit, total)))
    size = min(sample or n, total)
    return sorted(int(i) for i in rng.choice(total, size=size, replace=False))


def _related(chunks: Sequence[_Chunk], words: Sequence[set[str]], index: int) -> _Chunk:
    """The chunk of another document sharing the most words with chunk ``index`` (ties: first)."""
    best, best_score = None, 0
    for j, chunk in enumerate(chunks):
        if chunk.document_id == chunks[index].document_id:
            continue
        shared = len(words[index] & words[j])
        if shared > best_score:
            best, best_score = chunk, shared
    return best if best is not None else chunks[(index + 1) % len(chunks)]


def _prompt(template: str, first: _Chunk, second: _Chunk | None) -> str:
    return template.format(first=first.text, second=second.text if second else "")


__all__ = ["LlmOutcome", "generate_llm_cases"]
