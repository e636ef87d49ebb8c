"""Honest aggregation of scores: skipped and failed scores are excluded and counted, never averaged in.

The one place where means over scores are computed (contract 5). Booleans count as 1/0;
text values are counted, not averaged. ``mean``/``median``/``mode`` follow HoneyHive's
functions of the same names (``mode`` returns the first of equally common values).
``summarize`` reports a t-based 95% confidence interval for each mean (Student's t with
n−1 degrees of freedom, from the sample standard deviation); ``bootstrap_ci`` offers a
percentile bootstrap when a distribution-free interval is wanted.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from heta_notebook.schema import EvaluationCaseResult, EvaluationScore

Method = Literal["mean", "median", "mode", "weighted_mean"]
ScoreLike = EvaluationScore | bool | float | int | str


@dataclass(frozen=True)
class ScoreAggregate:
    """One aggregate over many scores, with the counts that make it honest.

    ``value`` is None when nothing numeric was scored. ``counts`` tallies text values.
    ``std``, ``ci_low`` and ``ci_high`` are filled by :func:`summarize` (None for n < 2).
    """

    name: str
    method: str
    value: float | None
    n_scored: int
    n_skipped: int = 0
    n_error: int = 0
    n_passed: int = 0
    n_judged: int = 0
    std: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    counts: dict[str, int] = field(default_factory=dict)
    query_mode: str | None = None

    @property
    def n(self) -> int:
        """Number of scored (not skipped, not failed) values."""
        return self.n_scored

    @property
    def pass_rate(self) -> float | None:
        """Share of scores with ``passed=True`` among those with a verdict, or None."""
        return self.n_passed / self.n_judged if self.n_judged else None

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (with ``n`` and ``pass_rate``) for DataFrames and JSON."""
        return {**asdict(self), "n": self.n, "pass_rate": self.pass_rate}


# --------------------------------------------------------------------------- plain statistics


def mean(scores: Iterable[ScoreLike]) -> float | None:
    """Arithmetic mean of the scored numeric values (None when there are none)."""
    values = _numeric(scores)
    return float(np.mean(values)) if len(values) else None


def median(scores: Iterable[ScoreLike]) -> float | None:
    """Median of the scored numeric values (None when there are none)."""
    values = _numeric(scores)
    return float(np.median(values)) if len(values) else None


def mode(scores: Iterable[ScoreLike]) -> float | str | None:
    """Most common scored value (numbers and text alike); ties go to the first seen."""
    values = [_plain(s) for s in scores if _status(s) == "scored"]
    if not values:
        return None
    counts = Counter(values)
    best = max(counts.values())
    return next(value for value in values if counts[value] == best)


def weighted_mean(scores: Iterable[ScoreLike], weights: Iterable[float]) -> float | None:
    """Mean weighted by ``weights`` (e.g. ``EvaluatorSettings.weight``), skipping unscored values."""
    pairs = [
        (value, float(weight))
        for score, weight in zip(scores, weights, strict=True)
        if (value := _as_number(score)) is not None
    ]
    total = sum(weight for _, weight in pairs)
    if not pairs or total == 0:
        return None
    return sum(value * weight for value, weight in pairs) / total


def aggregate(
    scores: Iterable[ScoreLike],
    method: Method = "mean",
    weights: Sequence[float] | None = None,
    *,
    name: str = "",
) -> ScoreAggregate:
    """Aggregate ``scores`` with ``method``, counting scored, skipped, failed and passed values."""
    items = list(scores)
    statuses = Counter(_status(s) for s in items)
    scored = [s for s in items if _status(s) == "scored"]
    passed = [s.passed for s in scored if isinstance(s, EvaluationScore) and s.passed is not None]
    return ScoreAggregate(
        name=name or _common_name(items),
        method=method,
        value=_apply(method, items, weights),
        n_scored=statuses["scored"],
        n_skipped=statuses["skipped"],
        n_error=statuses["error"],
        n_passed=sum(passed),
        n_judged=len(passed),
        counts=dict(Counter(_plain(s) for s in scored if isinstance(_plain(s), str))),
    )


def _apply(method: Method, items: list[ScoreLike], weights: Sequence[float] | None) -> Any:
    if method == "mean":
        return mean(items)
    if method == "median":
        return median(items)
    if method == "mode":
        return mode(items)
    if method == "weighted_mean":
        return weighted_mean(items, weights if weights is not None else [1.0] * len(items))
    raise ValueError(
        f"unknown aggregation method {method!r}; use mean, median, mode or weighted_mean"
    )


def _status(score: ScoreLike) -> str:
    return score.status if isinstance(score, EvaluationScore) else "scored"


def _plain(score: ScoreLike) -> bool | float | int | str:
    return score.value if isinstance(score, EvaluationScore) else score


def _as_number(score: ScoreLike) -> float | None:
    if _status(score) != "scored":
        return None
    value = _plain(score)
    return None if isinstance(value, str) else float(value)


def _numeric(scores: Iterable[ScoreLike]) -> np.ndarray:
    return np.array([v for s in scores if (v := _as_number(s)) is not None], dtype=float)


def _common_name(items: list[ScoreLike]) -> str:
    names = {s.name for s in items if isinstance(s, EvaluationScore)}
    return names.pop() if len(names) == 1 else ""


# --------------------------------------------------------------------------- report summaries


def summarize(
    case_results: Iterable[EvaluationCaseResult], confidence: float = 0.95
) -> dict[str, ScoreAggregate]:
    """Per ``"{query_mode}.{score_name}"``: mean, n, std, t-based CI, pass rate, skipped, errors.

    The t interval is clipped to the observed values' range, so a recall whose mean is near 1
    never shows a CI above 1.

    A case whose query failed counts as an error for every score its mode reports.
    """
    columns = _collect_columns(case_results)
    return {
        f"{mode_}.{name}": summarize_column(mode_, name, column, confidence)
        for (mode_, name), column in columns.items()
    }


@dataclass
class ScoreColumn:
    """One (query mode, score) column being aggregated: values, texts and skip/error/pass counts.

    Public so the runner and the frames, which collect columns their own fast way, feed the
    same rules (:func:`summarize_column`) as :func:`summarize`.
    """

    values: list[float] = field(default_factory=list)
    skipped: int = 0
    errors: int = 0
    passed: int = 0
    judged: int = 0
    texts: Counter = field(default_factory=Counter)


def _collect_columns(
    case_results: Iterable[EvaluationCaseResult],
) -> dict[tuple[str, str], ScoreColumn]:
    by_mode: dict[str, dict[str, ScoreColumn]] = {}
    failed_queries: Counter[str] = Counter()
    for result in case_results:
        columns = by_mode.setdefault(result.query_mode, {})
        if result.error is not None and not result.scores:
            failed_queries[result.query_mode] += 1
            continue
        for score in result.scores:
            column = columns.get(score.name)
            if column is None:
                column = columns[score.name] = ScoreColumn()
            _add(column, score)
    for mode_, columns in by_mode.items():
        for column in columns.values():
            column.errors += failed_queries[mode_]
    return {(m, name): col for m, columns in by_mode.items() for name, col in columns.items()}


def _add(column: ScoreColumn, score: EvaluationScore) -> None:
    metadata = score.metadata
    if metadata:
        if metadata.get("error"):
            column.errors += 1
            return
        if metadata.get("skipped"):
            column.skipped += 1
            return
    value = score.value
    if value.__class__ is str:
        column.texts[value] += 1
    else:
        column.values.append(value)
    if score.passed is not None:
        column.judged += 1
        column.passed += score.passed


def summarize_column(
    mode_: str, name: str, column: ScoreColumn, confidence: float
) -> ScoreAggregate:
    """The aggregate of one collected column: mean, std, clipped t CI, counts, pass rate."""
    values = np.asarray(column.values, dtype=float)
    n = len(values)
    value = float(values.mean()) if n else None
    std = float(values.std(ddof=1)) if n > 1 else None
    low, high = _t_interval(value, std, n, confidence)
    if low is not None and high is not None:  # a mean never leaves the observed range
        low, high = max(low, float(values.min())), min(high, float(values.max()))
    return ScoreAggregate(
        name=name,
        method="mean",
        value=value,
        n_scored=n + sum(column.texts.values()),
        n_skipped=column.skipped,
        n_error=column.errors,
        n_passed=column.passed,
        n_judged=column.judged,
        std=std,
        ci_low=low,
        ci_high=high,
        counts=dict(column.texts),
        query_mode=mode_,
    )


def _t_interval(
    value: float | None, std: float | None, n: int, confidence: float
) -> tuple[float | None, float | None]:
    if value is None or std is None:
        return None, None
    half = _t_critical(n - 1, confidence) * std / math.sqrt(n)
    return value - half, value + half


@lru_cache(maxsize=1024)
def _t_critical(dof: int, confidence: float) -> float:
    from scipy.special import stdtrit  # Student's t quantile; lighter to import than scipy.stats

    return float(stdtrit(dof, 0.5 + confidence / 2))


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval for the mean of ``values`` (None for fewer than 2 values)."""
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(n_resamples, data.size))].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return float(low), float(high)


def summary_table(summary: Mapping[str, ScoreAggregate]) -> list[dict[str, Any]]:
    """``summarize`` output as rows (query_mode, score, mean, n, ...) ready for a DataFrame."""
    return [{**agg.to_dict(), "score": agg.name} for agg in summary.values()]


__all__ = [
    "ScoreAggregate",
    "aggregate",
    "bootstrap_ci",
    "mean",
    "median",
    "mode",
    "ScoreColumn",
    "summarize",
    "summarize_column",
    "summary_table",
    "weighted_mean",
]
