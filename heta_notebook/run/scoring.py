"""Score one response with every evaluator: timeouts, retries with backoff, isolation.

An evaluator that raises or times out yields its ``EvaluationScore.error_score`` and never
takes the response or the other scores with it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from heta_notebook.evaluators.protocol import settings_of
from heta_notebook.schema import BenchmarkCase, EvaluationScore, QueryResponse

T = TypeVar("T")

# Evaluators from these modules are quick, CPU-only and never block: awaiting them in line
# costs far less than one task each.
_INLINE_MODULES = ("heta_notebook.evaluators.retrieval", "heta_notebook.evaluators.answer")


async def with_timeout(awaitable: Awaitable[T], seconds: float | None, what: str) -> T:
    """Await ``awaitable`` for at most ``seconds`` (None: no bound); raise a named TimeoutError."""
    if seconds is None:
        return await awaitable
    try:
        if sys.version_info >= (3, 11):
            async with asyncio.timeout(seconds):
                return await awaitable
        return await asyncio.wait_for(awaitable, seconds)  # pragma: no cover - Python 3.10
    except TimeoutError:
        raise TimeoutError(f"{what} timed out after {seconds:g} s") from None


def handles_own_settings(evaluator: object) -> bool:
    """True for decorator-made evaluators that apply their own timeout and retries."""
    return bool(getattr(evaluator, "_handles_settings", False))


def is_inline(evaluator: object) -> bool:
    """Whether the evaluator is a built-in quick one (awaited in line, no timeout/retry)."""
    module = type(evaluator).__module__
    settings = settings_of(evaluator)
    return module.startswith(_INLINE_MODULES) and settings.timeout is None


async def score_one(
    evaluator: Any,
    case: BenchmarkCase,
    response: QueryResponse,
    default_timeout: float | None = None,
) -> EvaluationScore:
    """Run one evaluator with its settings' timeout and retries; failures become error scores."""
    name = _name_of(evaluator)
    settings = settings_of(evaluator)
    own = handles_own_settings(evaluator)
    timeout = None if (own and settings.timeout) else (settings.timeout or default_timeout)
    retries = 0 if own else settings.retry_count
    error: Exception | None = None
    for attempt in range(retries + 1):
        if attempt:
            await asyncio.sleep(settings.retry_backoff * 2 ** (attempt - 1))
        try:
            call = evaluator.evaluate(case=case, response=response)
            score = await with_timeout(call, timeout, f"evaluator {name!r}")
            return as_score(score, name)
        except Exception as exc:  # noqa: BLE001 - isolation: any failure becomes an error score
            error = exc
    assert error is not None
    extra = {"attempts": retries + 1} if retries else {}
    return EvaluationScore.error_score(name, error, **extra)


async def score_case(
    evaluators: Sequence[Any],
    case: BenchmarkCase,
    response: QueryResponse,
    default_timeout: float | None = None,
) -> tuple[EvaluationScore, ...]:
    """All evaluators' scores in evaluator order; slow (non built-in) ones run concurrently.

    Built-in metrics are scored in line, several at once through their batch kernel
    (one numpy pass for e.g. the 25 BEIR metrics instead of 25).
    """
    scores: list[EvaluationScore | None] = [None] * len(evaluators)
    inline = [i for i, ev in enumerate(evaluators) if default_timeout is None and is_inline(ev)]
    _score_inline(evaluators, inline, case, response, scores)
    for index in inline:
        if scores[index] is None:
            scores[index] = await score_one(evaluators[index], case, response)
    slow = [i for i in range(len(evaluators)) if scores[i] is None]
    if len(slow) == 1:
        scores[slow[0]] = await score_one(evaluators[slow[0]], case, response, default_timeout)
    elif slow:
        done = await asyncio.gather(
            *(score_one(evaluators[i], case, response, default_timeout) for i in slow)
        )
        for index, score in zip(slow, done, strict=True):
            scores[index] = score
    return tuple(s for s in scores if s is not None)


def _score_inline(
    evaluators: Sequence[Any],
    inline: list[int],
    case: BenchmarkCase,
    response: QueryResponse,
    scores: list[EvaluationScore | None],
) -> None:
    """Fill ``scores`` for the batch-capable built-ins in one call; on failure leave them unset."""
    from heta_notebook.evaluators.retrieval import evaluate_batch, supports_batch

    batch = [i for i in inline if supports_batch(evaluators[i])]
    if len(batch) < 2:
        return
    try:
        (row,) = evaluate_batch([evaluators[i] for i in batch], [case], [response])
    except Exception:  # noqa: BLE001 - scored one by one instead, each failure isolated
        return
    for index, score in zip(batch, row, strict=True):
        scores[index] = score


def as_score(value: Any, name: str) -> EvaluationScore:
    """Accept our EvaluationScore, or anything with ``to_dict()`` / a dict in its layout."""
    if isinstance(value, EvaluationScore):
        return value
    if hasattr(value, "to_dict"):
        return EvaluationScore.from_dict(value.to_dict())
    if isinstance(value, dict):
        return EvaluationScore.from_dict(value)
    raise TypeError(
        f"evaluator {name!r} returned {type(value).__name__}, expected an EvaluationScore"
    )


def _name_of(evaluator: Any) -> str:
    try:
        return str(evaluator.name)
    except Exception:  # noqa: BLE001
        return type(evaluator).__name__
