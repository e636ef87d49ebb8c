"""What an evaluator is (the seed's protocol) and how it is configured (HoneyHive's settings)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from heta_notebook.schema._records import BenchmarkCase, EvaluationScore, QueryResponse


@runtime_checkable
class BenchmarkEvaluatorProtocol(Protocol):
    """Anything with a stable ``name`` and ``async evaluate(*, case, response)``."""

    @property
    def name(self) -> str:
        """The score name used in reports."""
        ...

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Score one response for one case."""
        ...


class SyncScorer:
    """Base of evaluators that score synchronously: ``evaluate`` and ``evaluate_batch`` call ``score``.

    ``evaluate_batch`` lets the runner score many cases in one call, without a coroutine each.
    """

    # each subclass names its scores: a class constant or a property (no instance field here)

    def score(self, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Score one response (synchronous ``evaluate``)."""
        raise NotImplementedError

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Score one response."""
        return self.score(case, response)

    def evaluate_batch(
        self, cases: Sequence[BenchmarkCase], responses: Sequence[QueryResponse]
    ) -> list[EvaluationScore]:
        """Score many responses (same numbers as ``evaluate``)."""
        return [self.score(c, r) for c, r in zip(cases, responses, strict=True)]


class EvaluatorSettings(BaseModel):
    """Per-evaluator configuration (HoneyHive's ``EvaluatorSettings``).

    ``threshold`` sets ``passed`` (score >= threshold); ``weight`` is used by weighted
    aggregation; ``enabled=False`` drops the evaluator from a run; ``timeout`` (seconds)
    and ``retry_count`` bound each call, with exponential backoff between attempts.
    """

    model_config = ConfigDict(frozen=True)

    threshold: float | None = None
    weight: float = Field(default=1.0, ge=0)
    enabled: bool = True
    timeout: float | None = Field(default=None, gt=0)
    retry_count: int = Field(default=0, ge=0)
    retry_backoff: float = Field(default=0.1, ge=0)


def settings_of(evaluator: object) -> EvaluatorSettings:
    """The evaluator's settings, or the defaults when it has none."""
    settings = getattr(evaluator, "settings", None)
    return settings if isinstance(settings, EvaluatorSettings) else EvaluatorSettings()


def check_unique_names(evaluators: object) -> None:
    """Reject two evaluators with the same name: one would silently overwrite the other's score."""
    seen: dict[str, object] = {}
    for evaluator in evaluators:  # type: ignore[attr-defined]
        name = evaluator.name
        if name in seen:
            raise ValueError(
                f"two evaluators are named {name!r} ({seen[name]!r} and {evaluator!r}); "
                "give one a different name (e.g. @evaluator(name=...))"
            )
        seen[name] = evaluator
