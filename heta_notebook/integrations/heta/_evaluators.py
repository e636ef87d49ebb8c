"""Evaluators both ways: heta-framework's in our runner, ours in heta-framework's runner."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from heta_notebook.evaluators._protocol import settings_of
from heta_notebook.integrations.heta._common import is_heta_object, require_heta
from heta_notebook.integrations.heta._records import (
    case_from_heta,
    case_to_heta,
    response_from_heta,
    response_to_heta,
    score_from_heta,
    score_to_heta,
)
from heta_notebook.schema._records import BenchmarkCase, EvaluationScore, QueryResponse


@dataclass(frozen=True)
class HetaEvaluatorAdapter:
    """A heta-framework evaluator (``EvidenceRecallAtK``, ``BeirRetrievalMetric``, ...) as ours.

    Our case and response are converted to heta-framework's types before the call and its
    score back to ours (a heta ``metadata.skipped`` score stays skipped).
    """

    heta_evaluator: Any

    @property
    def name(self) -> str:
        """The wrapped evaluator's score name."""
        return self.heta_evaluator.name

    @property
    def settings(self) -> Any:
        """Settings of the wrapped evaluator, if it has ours (else the runner's defaults)."""
        return getattr(self.heta_evaluator, "settings", None)

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Score ``response`` for ``case`` with the heta-framework evaluator."""
        heta_case, heta_response = _converted(case, response)
        score = await self.heta_evaluator.evaluate(case=heta_case, response=heta_response)
        return score_from_heta(score)

    def __repr__(self) -> str:
        return f"HetaEvaluatorAdapter({self.heta_evaluator!r})"


@dataclass(frozen=True)
class OurEvaluatorForHeta:
    """One of our evaluators (built-in or ``@evaluator``-made) usable in heta-framework's runner.

    heta-framework turns an evaluator exception into an error for the whole case (the
    response and the other scores are lost); this wrapper records it as an error score
    instead, as our runner does, and applies the evaluator's ``EvaluatorSettings`` timeout
    and retries.
    """

    evaluator: Any

    @property
    def name(self) -> str:
        """The wrapped evaluator's score name."""
        return self.evaluator.name

    async def evaluate(self, *, case: Any, response: Any) -> Any:
        """Score heta-framework's ``response`` for its ``case`` with our evaluator."""
        ours_case, ours_response = case_from_heta(case), response_from_heta(response)
        try:
            score = await self._call(ours_case, ours_response)
        except Exception as exc:  # noqa: BLE001 - isolate evaluator failures per score
            score = EvaluationScore.error_score(self.name, exc)
        return score_to_heta(score)

    async def _call(self, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Honour ``EvaluatorSettings`` timeout/retries (heta's runner knows none of them)."""
        settings = settings_of(self.evaluator)
        if getattr(self.evaluator, "_handles_settings", False):  # @evaluator functions do
            return await self.evaluator.evaluate(case=case, response=response)
        for attempt in range(settings.retry_count + 1):
            try:
                call = self.evaluator.evaluate(case=case, response=response)
                return await asyncio.wait_for(call, settings.timeout)
            except Exception:
                if attempt == settings.retry_count:
                    raise
                await asyncio.sleep(settings.retry_backoff * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def __repr__(self) -> str:
        return f"OurEvaluatorForHeta({self.evaluator!r})"


# The runner scores one case with many evaluators (25 BEIR metrics by default): convert each
# (case, response) pair to heta's records once. Keyed by identity; entries keep the originals
# alive so an id is never reused while cached.
_RECENT: OrderedDict[tuple[int, int], tuple[Any, Any, Any, Any]] = OrderedDict()
_RECENT_SIZE = 256


def _converted(case: BenchmarkCase, response: QueryResponse) -> tuple[Any, Any]:
    key = (id(case), id(response))
    hit = _RECENT.get(key)
    if hit is not None and hit[0] is case and hit[1] is response:
        return hit[2], hit[3]
    heta_case, heta_response = case_to_heta(case), response_to_heta(response)
    _RECENT[key] = (case, response, heta_case, heta_response)
    if len(_RECENT) > _RECENT_SIZE:
        _RECENT.popitem(last=False)
    return heta_case, heta_response


def adapt_evaluator(obj: Any) -> HetaEvaluatorAdapter:
    """Wrap a heta-framework evaluator so our runner can call it with our records."""
    if not is_heta_object(obj) and not _looks_like_evaluator(obj):
        raise TypeError(f"not an evaluator: {obj!r} (needs .name and async .evaluate)")
    return HetaEvaluatorAdapter(obj)


def as_heta_evaluator(evaluator: Any) -> OurEvaluatorForHeta:
    """Wrap one of our evaluators for heta-framework's ``BenchmarkRunner(evaluators=...)``."""
    require_heta("as_heta_evaluator")
    if not _looks_like_evaluator(evaluator):
        raise TypeError(f"not an evaluator: {evaluator!r} (needs .name and async .evaluate)")
    return OurEvaluatorForHeta(evaluator)


def _looks_like_evaluator(obj: Any) -> bool:
    return hasattr(obj, "name") and callable(getattr(obj, "evaluate", None))


__all__ = ["HetaEvaluatorAdapter", "OurEvaluatorForHeta", "adapt_evaluator", "as_heta_evaluator"]
