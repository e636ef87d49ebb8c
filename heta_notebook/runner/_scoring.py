"""Score one response with every evaluator: timeouts, retries with backoff, isolation.

An evaluator that raises or times out yields its ``EvaluationScore.error_score`` and never
takes the response or the other scores with it.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from typing import Any, TypeVar

from heta_notebook._util.loop import loop_mismatch
from heta_notebook._util.timeout import with_timeout
from heta_notebook.evaluators._protocol import settings_of
from heta_notebook.schema._records import BenchmarkCase, EvaluationScore, QueryResponse

T = TypeVar("T")

# Evaluators from these modules are quick, CPU-only and never block: awaiting them in line
# costs far less than one task each.
_INLINE_MODULES = ("heta_notebook.evaluators._retrieval", "heta_notebook.evaluators._answer")


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
            if (mismatch := loop_mismatch(exc)) is not None:
                raise mismatch from exc
            error = exc
    assert error is not None
    extra = {"attempts": retries + 1} if retries else {}
    return EvaluationScore.error_score(name, error, **extra)


class CaseScorer:
    """Scores the cases of one run with a fixed list of evaluators.

    ``score_per_case`` runs what needs a coroutine per case (custom evaluators, judges:
    concurrently, with timeout and retries) and leaves ``None`` where a built-in
    batch-capable metric goes; ``score_batch`` fills those for many cases in one numpy pass
    (e.g. the 25 BEIR metrics of 256 cases at once instead of 6,400 calls).
    """

    def __init__(self, evaluators: Sequence[Any], default_timeout: float | None = None):
        from heta_notebook.evaluators._retrieval import supports_batch

        self.evaluators = tuple(_bounded(ev, default_timeout) for ev in evaluators)
        self.default_timeout = default_timeout
        inline = [
            i for i, ev in enumerate(self.evaluators) if default_timeout is None and is_inline(ev)
        ]
        self.batch_indices = [i for i in inline if supports_batch(self.evaluators[i])]
        self._inline = [i for i in inline if i not in self.batch_indices]
        self._slow = [i for i in range(len(self.evaluators)) if i not in inline]
        # no evaluator needs a coroutine per case: every slot is filled by ``score_batch``
        self.batch_only = not self._inline and not self._slow

    async def score_per_case(self, case: BenchmarkCase, response: QueryResponse) -> list[Any]:
        """Scores of the per-case evaluators, in evaluator order; batch slots left ``None``."""
        scores: list[Any] = [None] * len(self.evaluators)
        for index in self._inline:
            scores[index] = await score_one(self.evaluators[index], case, response)
        slow, timeout = self._slow, self.default_timeout
        if len(slow) == 1:
            scores[slow[0]] = await score_one(self.evaluators[slow[0]], case, response, timeout)
        elif slow:
            done = await asyncio.gather(
                *(score_one(self.evaluators[i], case, response, timeout) for i in slow)
            )
            for index, score in zip(slow, done, strict=True):
                scores[index] = score
        return scores

    def score_batch(
        self,
        cases: Sequence[BenchmarkCase],
        responses: Sequence[QueryResponse],
        slots: Sequence[list[Any]],
    ) -> list[Sequence[Any]] | None:
        """Score the batch slots of ``slots`` (one list per case). Returns every slot by
        evaluator (one list per evaluator, in case order; the batch ones as the batch scorer
        built them, for ``reports._tables.score_table``): a case's scores are its row of these
        (``schema._construct.LazyScores``). A failing batch is redone per case, filling the
        slots, and gives None."""
        from heta_notebook.evaluators._retrieval import evaluate_batch_columns

        if not self.batch_indices or not cases:
            return None
        evaluators = [self.evaluators[i] for i in self.batch_indices]
        try:
            built = evaluate_batch_columns(evaluators, cases, responses)
        except Exception:  # noqa: BLE001 - isolate the failing case(s)
            rows = [_row_alone(evaluators, c, r) for c, r in zip(cases, responses, strict=True)]
            for scores, row in zip(slots, rows, strict=True):
                for index, score in zip(self.batch_indices, row, strict=True):
                    scores[index] = score
            return None
        by_evaluator: list[Sequence[Any]] = [[] for _ in self.evaluators]
        for index, column in zip(self.batch_indices, built, strict=True):
            by_evaluator[index] = column  # its records are built when read (LazyScores)
        for index in range(len(self.evaluators)):
            if index not in self.batch_indices:
                by_evaluator[index] = [scores[index] for scores in slots]
        return by_evaluator


def _bounded(evaluator: Any, timeout: float | None) -> Any:
    """A sync decorated evaluator given the run's ``evaluator_timeout`` as its own.

    Such an evaluator otherwise runs in line on the loop, where no timeout can interrupt it;
    with its own timeout it runs in a daemon thread and becomes an error score on time.
    """
    if timeout is None or not handles_own_settings(evaluator):
        return evaluator
    if getattr(evaluator, "is_async", True) or settings_of(evaluator).timeout is not None:
        return evaluator
    bounded = copy.copy(evaluator)
    bounded.settings = settings_of(evaluator).model_copy(update={"timeout": timeout})
    return bounded


def _row_alone(
    evaluators: Sequence[Any], case: BenchmarkCase, response: QueryResponse
) -> list[EvaluationScore]:
    """One case scored evaluator by evaluator, each failure becoming that evaluator's error."""
    row = []
    for evaluator in evaluators:
        try:
            (score,) = evaluator.evaluate_batch([case], [response])
            row.append(as_score(score, _name_of(evaluator)))
        except Exception as exc:  # noqa: BLE001 - isolation
            row.append(EvaluationScore.error_score(_name_of(evaluator), exc))
    return row


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
