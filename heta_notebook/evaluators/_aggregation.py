"""The one aggregation engine: the scored/skipped/error rule, means, t CIs and the bootstrap.

Skipped and failed scores are excluded and counted, never averaged in. Everything
that aggregates scores calls this module: the runner's statistics, the frames' summary and
slices, the card, the comparison's summary and paired bootstrap, and the regression gates.

- :func:`status_code` is the rule (``metadata.error`` → error, ``metadata.skipped`` → skipped);
- :func:`grouped_stats` (long arrays + group codes) and :func:`matrix_stats` (a NaN-masked
  matrix) compute n, mean, std and a t-based CI clipped to the observed range, vectorised;
- :func:`bootstrap_means` is the one resampling kernel (count matrix @ values), behind
  :func:`bootstrap_ci`, :func:`bootstrap_intervals` and the comparison's paired CI.

Booleans count as 1/0; text values are counted, not averaged. ``mean``/``median``/``mode``
follow HoneyHive's functions of the same names (``mode`` returns the first of equally common
values).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any, Literal

import numpy as np

from heta_notebook._util.gc import paused_gc
from heta_notebook.schema._records import EvaluationCaseResult, EvaluationScore
from heta_notebook.schema._status import ERROR, SCORED, SKIPPED, status_codes, status_name

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
        counts=dict(Counter(str(_plain(s)) for s in scored if isinstance(_plain(s), str))),
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
    return status_name(score.metadata) if isinstance(score, EvaluationScore) else "scored"


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


# --------------------------------------------------------------------------- vectorised statistics


def grouped_stats(
    groups: np.ndarray,
    n_groups: int,
    values: np.ndarray,
    *,
    status: np.ndarray | None = None,
    passed: np.ndarray | None = None,
    confidence: float = 0.95,
) -> dict[str, np.ndarray]:
    """Per group (codes ``0..n_groups-1``): counts, mean, std and clipped t CI, all at once.

    ``values`` is NaN where a score is not numeric (text) ; ``status`` holds :func:`status_code`
    codes (all scored when omitted); ``passed`` is 1/0/NaN. Only scored numeric values enter
    means; skipped and failed ones are counted; verdicts count for scored values only. Each
    group's values are summed in input order, so the same values give the same bits whatever
    the caller (runner, frames, slices).
    """
    groups = np.asarray(groups, dtype=np.int64)
    values = np.asarray(values, dtype=float)
    status = np.zeros(len(groups), dtype=np.int8) if status is None else np.asarray(status)
    scored = status == SCORED

    def count(mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(groups[mask], weights, minlength=n_groups)[:n_groups]

    out = {
        "n_scored": count(scored),
        "n_skipped": count(status == SKIPPED),
        "n_error": count(status == ERROR),
    }
    if passed is None:
        out["n_judged"] = out["n_passed"] = np.zeros(n_groups, dtype=np.int64)
    else:
        verdict = np.asarray(passed, dtype=float)
        judged = scored & ~np.isnan(verdict)
        out["n_judged"] = count(judged)
        out["n_passed"] = count(judged, verdict[judged]).astype(np.int64)
    numeric = scored & ~np.isnan(values)
    g, v = groups[numeric], values[numeric]
    order = np.argsort(g, kind="stable")
    out.update(_moments(g[order], v[order], n_groups, confidence))
    return out


def matrix_stats(
    values: np.ndarray, passed: np.ndarray | None = None, *, axis: int = 0, confidence: float = 0.95
) -> dict[str, np.ndarray]:
    """:func:`grouped_stats` along ``axis`` of a matrix whose NaN cells are unscored (no pair,
    skipped, failed): n, mean, std, clipped t CI, n_passed and n_judged (``passed`` 1/0/NaN)."""
    values = np.asarray(values, dtype=float)
    ok = ~np.isnan(values)
    n = ok.sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, np.where(ok, values, 0.0).sum(axis=axis) / np.maximum(n, 1), np.nan)
        dev = np.where(ok, values - np.expand_dims(mean, axis), 0.0)
        out = {"n": n, "mean": mean}
        out.update(
            _spread(
                n,
                mean,
                (dev * dev).sum(axis=axis),
                np.where(ok, values, np.inf).min(axis=axis),
                np.where(ok, values, -np.inf).max(axis=axis),
                confidence,
            )
        )
    if passed is not None:
        verdict = np.asarray(passed, dtype=float)
        out["n_judged"] = (~np.isnan(verdict)).sum(axis=axis)
        out["n_passed"] = np.nansum(verdict, axis=axis).astype(np.int64)
    return out


def pass_rate(n_passed: np.ndarray, n_judged: np.ndarray) -> np.ndarray:
    """Share passed among scores with a verdict (NaN where none has one)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_judged > 0, n_passed / np.maximum(n_judged, 1), np.nan)


def _moments(g: np.ndarray, v: np.ndarray, n_groups: int, confidence: float) -> dict:
    """n, mean, std, CI of values ``v`` sorted by group code ``g`` (reduceat per run)."""
    n, mean = np.zeros(n_groups, dtype=np.int64), np.full(n_groups, np.nan)
    sq, low, high = np.zeros(n_groups), np.full(n_groups, np.nan), np.full(n_groups, np.nan)
    if len(g):
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        present = g[starts]
        n[present] = np.diff(np.r_[starts, len(g)])
        mean[present] = np.add.reduceat(v, starts) / n[present]
        dev = v - mean[g]
        sq[present] = np.add.reduceat(dev * dev, starts)
        low[present] = np.minimum.reduceat(v, starts)
        high[present] = np.maximum.reduceat(v, starts)
    return {"n": n, "mean": mean, **_spread(n, mean, sq, low, high, confidence)}


def _spread(n, mean, sq, lowest, highest, confidence: float) -> dict[str, np.ndarray]:
    """Sample std and the t interval of the mean, clipped to the observed range (n > 1)."""
    from scipy.special import stdtrit  # Student's t quantile; lighter to import than scipy.stats

    with np.errstate(invalid="ignore", divide="ignore"):
        many = n > 1
        std = np.where(many, np.sqrt(sq / np.maximum(n - 1, 1)), np.nan)
        half = stdtrit(np.maximum(n - 1, 1), 0.5 + confidence / 2) * std / np.sqrt(n)
        low = np.where(many, np.maximum(mean - half, lowest), np.nan)
        high = np.where(many, np.minimum(mean + half, highest), np.nan)
    return {"std": std, "ci_low": low, "ci_high": high}


# --------------------------------------------------------------------------- bootstrap

_CHUNK_ELEMENTS = 10_000_000  # resamples × cases per block: ~40 MB of float32
_STEP_ELEMENTS = 500_000  # resamples × cases per draw: the bincount stays in cache
_ROW_BINCOUNT = 10_000  # cases from which counting each resample apart beats one offset bincount
_CACHED_COUNTS = 1_000_000  # count matrices up to this size (8 MB) are kept across calls


def bootstrap_means(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Means of ``n_resamples`` resamples of the rows of ``x`` (cases × columns), per column.

    The one bootstrap kernel: resample counts (multinomial, drawn from ``seed``) @ x, in
    blocks. The draws depend only on (seed, n_resamples, n), so every column of one length
    (and every caller) sees the same resamples; small count matrices are cached.
    """
    x = np.asarray(x, dtype=float)
    x = x[:, None] if x.ndim == 1 else x
    n = x.shape[0]
    dtype = np.float64 if n * x.shape[1] <= 200_000 else np.float32
    xs = x.astype(dtype, copy=False)
    if n_resamples * n <= _CACHED_COUNTS:
        means = _cached_counts(seed, n_resamples, n).astype(dtype, copy=False) @ xs
    else:
        rng, means = np.random.default_rng(seed), np.empty((n_resamples, x.shape[1]))
        for start, stop in _blocks(n_resamples, n):
            means[start:stop] = _resample_counts(rng, stop - start, n, dtype) @ xs
    means /= n  # in place: the same quotients, no second array of resamples × columns
    return means


def bootstrap_interval(
    x: np.ndarray, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap CI of the mean of every column of ``x`` (no NaN; n ≥ 1 rows)."""
    alpha = (1 - confidence) / 2
    means = bootstrap_means(x, n_resamples, seed)  # ours alone: partitioned where it lies
    low, high = np.quantile(means, [alpha, 1 - alpha], axis=0, overwrite_input=True)
    return low, high


def bootstrap_intervals(
    columns: Mapping[str, Sequence[float] | np.ndarray],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    budget: int | None = None,
) -> dict[str, list[float] | None]:
    """:func:`bootstrap_ci` of many named columns: every column of one length in one product.

    None for columns of fewer than 2 values, or costing more than ``budget`` draws.
    """
    out: dict[str, list[float] | None] = {}
    by_length: dict[int, list[str]] = {}
    for key, values in columns.items():
        n = len(values)
        if not n_resamples or n < 2 or (budget is not None and n * n_resamples > budget):
            out[key] = None
        else:
            by_length.setdefault(n, []).append(key)
    for keys in by_length.values():
        matrix = np.asarray([np.asarray(columns[key], dtype=float) for key in keys]).T
        low, high = bootstrap_interval(
            matrix, n_resamples=n_resamples, confidence=confidence, seed=seed
        )
        out.update({k: [float(lo), float(hi)] for k, lo, hi in zip(keys, low, high, strict=True)})
    return out


@lru_cache(maxsize=4)
def _cached_counts(seed: int, n_resamples: int, n: int) -> np.ndarray:
    counts = _resample_counts(np.random.default_rng(seed), n_resamples, n, np.float64)
    counts.flags.writeable = False  # shared between calls
    return counts


def _resample_counts(rng: np.random.Generator, rows: int, n: int, dtype: type) -> np.ndarray:
    """How often each case is drawn in ``rows`` bootstrap resamples (multinomial counts)."""
    counts: np.ndarray = np.empty((rows, n), dtype=dtype)
    step = _step(n)
    offsets = np.arange(step, dtype=np.int64)[:, None] * n
    for r in range(0, rows, step):
        k = min(step, rows - r)
        index = rng.integers(0, n, size=(k, n), dtype=np.int64)
        if n >= _ROW_BINCOUNT:  # one bincount per resample: ~2x faster, the same counts
            for i in range(k):
                counts[r + i] = np.bincount(index[i], minlength=n)
        else:
            index += offsets[:k]
            counts[r : r + k] = np.bincount(index.ravel(), minlength=k * n).reshape(k, n)
    return counts


def _step(n: int) -> int:
    return max(1, _STEP_ELEMENTS // max(n, 1))


def _blocks(n_resamples: int, n: int):
    """Row blocks of whole draw steps, so blocked and cached draws are the same numbers."""
    step = _step(n)
    size = step * max(1, _CHUNK_ELEMENTS // max(n, 1) // step)
    for start in range(0, n_resamples, size):
        yield start, min(start + size, n_resamples)


# --------------------------------------------------------------------------- report summaries


def summarize(
    case_results: Iterable[EvaluationCaseResult], confidence: float = 0.95
) -> dict[str, ScoreAggregate]:
    """Per ``"{query_mode}.{score_name}"``: mean, n, std, t-based CI, pass rate, skipped, errors.

    The t interval is clipped to the observed values' range, so a recall whose mean is near 1
    never shows a CI above 1.

    A case whose query failed counts as an error for every score its mode reports.
    """
    results = case_results if isinstance(case_results, Sequence) else list(case_results)
    per_case = list(map(_SCORES, results))
    counts = np.fromiter(map(len, per_case), dtype=np.int64, count=len(per_case))
    mode_codes: dict[str, int] = {}
    case_modes = np.fromiter(
        (mode_codes.setdefault(r.query_mode, len(mode_codes)) for r in results),
        dtype=np.int64,
        count=len(results),
    )
    failed = Counter(
        r.query_mode for r, n in zip(results, counts, strict=True) if not n and r.error is not None
    )
    n = int(counts.sum())
    # one pass over the scores: pydantic keeps fields in __dict__, where itemgetter is fastest
    with paused_gc():  # many short-lived tuples: skip the collector's rescans
        fields = map(_FIELDS, map(_DICT, chain.from_iterable(per_case)))
        raw_names, raw, verdicts, mds = zip(*fields, strict=True) if n else ((), (), (), ())
    name_codes = _FirstSeen()
    names = np.fromiter(map(name_codes.__getitem__, raw_names), np.int64, n)
    width = max(len(name_codes), 1)
    keys = np.repeat(case_modes, counts) * width + names
    present, first, codes = np.unique(keys, return_index=True, return_inverse=True)
    codes = codes.reshape(-1)
    try:
        values, texts = np.fromiter(raw, dtype=float, count=len(raw)), None
    except (TypeError, ValueError):  # text scores are counted, not averaged
        texts = [v if v.__class__ is str else None for v in raw]
        values = np.array(
            [np.nan if t is not None else v for v, t in zip(raw, texts, strict=True)], dtype=float
        )
    status = status_codes(mds)
    passed = np.fromiter(map(_VERDICT.__getitem__, verdicts), float, n)
    stats = grouped_stats(
        codes, len(present), values, status=status, passed=passed, confidence=confidence
    )
    modes, labels = list(mode_codes), list(name_codes)
    tallies = text_counts(codes, status, texts) if texts is not None else {}
    out = {}
    for i in np.argsort(first, kind="stable").tolist():  # first-seen order of mode.score
        mode_, name = modes[present[i] // width], labels[present[i] % width]
        stats["n_error"][i] += failed[mode_]  # a failed query: an error for each score of its mode
        out[f"{mode_}.{name}"] = aggregate_of(
            stats, i, name=name, mode=mode_, counts=tallies.get(i)
        )
    return out


class _FirstSeen(dict):
    """name → code in first-seen order; ``__getitem__`` stays in C for names already seen."""

    def __missing__(self, key: str) -> int:
        self[key] = code = len(self)
        return code


_VERDICT = {True: 1.0, False: 0.0, None: np.nan}
_SCORES, _DICT = attrgetter("scores"), attrgetter("__dict__")
_FIELDS = itemgetter("name", "value", "passed", "metadata")


def text_counts(codes: Any, status: Any, texts: Sequence[Any]) -> dict:
    """Per group code: how often each scored text value occurs (text scores are counted)."""
    out: dict[int, Counter] = {}
    for code, st, text in zip(codes, status, texts, strict=True):
        if text is not None and st == SCORED:
            out.setdefault(int(code), Counter())[text] += 1
    return out


def aggregate_of(
    stats: Mapping[str, np.ndarray],
    i: int,
    *,
    name: str,
    mode: str | None = None,
    counts: Mapping[str, int] | None = None,
) -> ScoreAggregate:
    """Row ``i`` of :func:`grouped_stats` output as a ScoreAggregate (None for NaN)."""

    def num(key: str) -> float | None:
        value = float(stats[key][i])
        return None if math.isnan(value) else value

    return ScoreAggregate(
        name=name,
        method="mean",
        value=num("mean"),
        n_scored=int(stats["n_scored"][i]),
        n_skipped=int(stats["n_skipped"][i]),
        n_error=int(stats["n_error"][i]),
        n_passed=int(stats["n_passed"][i]),
        n_judged=int(stats["n_judged"][i]),
        std=num("std"),
        ci_low=num("ci_low"),
        ci_high=num("ci_high"),
        counts=dict(counts or {}),
        query_mode=mode,
    )


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


def summarize_column(
    mode_: str, name: str, column: ScoreColumn, confidence: float
) -> ScoreAggregate:
    """The aggregate of one collected column: mean, std, clipped t CI, counts, pass rate."""
    return summarize_columns([(mode_, name, column)], confidence)[0]


def summarize_columns(
    columns: Sequence[tuple[str, str, ScoreColumn]], confidence: float
) -> list[ScoreAggregate]:
    """:func:`summarize_column` of each ``(mode, name, column)``, in one pass of the kernels
    over all their values (a column per group: the same numbers; a run's hundreds of columns
    cost one call, not hundreds)."""
    lengths = [len(column.values) for _, _, column in columns]
    parts = [np.asarray(column.values, dtype=float) for _, _, column in columns]
    values = np.concatenate(parts) if parts else np.empty(0)
    groups = np.repeat(np.arange(len(columns), dtype=np.int64), lengths)
    stats = _moments(groups, values, len(columns), confidence)
    stats.update(
        {
            "n_scored": [
                n + sum(c.texts.values()) for n, (_, _, c) in zip(lengths, columns, strict=True)
            ],
            "n_skipped": [c.skipped for _, _, c in columns],
            "n_error": [c.errors for _, _, c in columns],
            "n_passed": [c.passed for _, _, c in columns],
            "n_judged": [c.judged for _, _, c in columns],
        }
    )
    return [
        aggregate_of(stats, i, name=name, mode=mode_, counts=column.texts)
        for i, (mode_, name, column) in enumerate(columns)
    ]


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
    low, high = bootstrap_interval(data, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return float(low[0]), float(high[0])


def summary_table(summary: Mapping[str, ScoreAggregate]) -> list[dict[str, Any]]:
    """``summarize`` output as rows (query_mode, score, mean, n, ...) ready for a DataFrame."""
    return [{**agg.to_dict(), "score": agg.name} for agg in summary.values()]


__all__ = [
    "ScoreAggregate",
    "ScoreColumn",
    "aggregate",
    "aggregate_of",
    "bootstrap_ci",
    "bootstrap_interval",
    "bootstrap_intervals",
    "bootstrap_means",
    "grouped_stats",
    "matrix_stats",
    "mean",
    "median",
    "mode",
    "pass_rate",
    "summarize",
    "summarize_column",
    "summarize_columns",
    "summary_table",
    "text_counts",
    "weighted_mean",
]
