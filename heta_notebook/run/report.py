"""Turn finished case results into an EvaluationReport: summary, statistics, environment.

Means come from ``evaluators.aggregation.summarize`` (scored cases only; skipped and failed
scores are counted, never averaged in). Nothing here formats for display.
"""

from __future__ import annotations

import copy
import functools
import platform
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib import metadata as importlib_metadata
from typing import Any

import numpy as np

from heta_notebook.evaluators.aggregation import summarize
from heta_notebook.run.config import BenchmarkRunConfig
from heta_notebook.schema import EvaluationCaseResult

# Libraries whose versions can change a number in a report.
_VERSIONED = (
    "heta-notebook", "numpy", "pandas", "pydantic", "scipy", "bm25s", "heta-framework",
)  # fmt: skip
# A bootstrap costs n_resamples × n draws per score column; beyond this, keep the t interval.
_BOOTSTRAP_BUDGET = 20_000_000


def utc_now() -> str:
    """ISO-8601 UTC timestamp, like heta-framework's reports."""
    return datetime.now(timezone.utc).isoformat()


def score_statistics(
    results: Sequence[EvaluationCaseResult], config: BenchmarkRunConfig
) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    """``score_summary`` (means over scored cases) and per-key stats (n, std, CIs, counts)."""
    aggregates = summarize(results)
    values = _numeric_columns(results)
    intervals = bootstrap_intervals(values, config)
    summary: dict[str, float] = {}
    stats: dict[str, dict[str, Any]] = {}
    for key in sorted(aggregates):
        agg = aggregates[key]
        if agg.value is not None:
            summary[key] = agg.value
        stats[key] = {
            "mean": agg.value,
            "n": agg.n_scored,
            "std": agg.std,
            "ci95": [agg.ci_low, agg.ci_high] if agg.ci_low is not None else None,
            "bootstrap_ci95": intervals.get(key),
            "n_error": agg.n_error,
            "n_skipped": agg.n_skipped,
            "pass_rate": agg.pass_rate,
            **({"counts": agg.counts} if agg.counts else {}),
        }
    return summary, stats


def latency_statistics(results: Sequence[EvaluationCaseResult]) -> dict[str, dict[str, Any]]:
    """Per query mode: query latency p50/p95/mean (ms) and the number of failed queries."""
    by_mode: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    for result in results:
        by_mode.setdefault(result.query_mode, [])
        if result.latency_ms is not None and result.error is None:
            by_mode[result.query_mode].append(result.latency_ms)
        if result.error is not None:
            errors[result.query_mode] = errors.get(result.query_mode, 0) + 1
    stats = {}
    for mode, latencies in by_mode.items():
        data = np.asarray(latencies, dtype=float)
        p50, p95 = np.percentile(data, [50, 95]) if data.size else (None, None)
        stats[mode] = {
            "p50_ms": None if p50 is None else float(p50),
            "p95_ms": None if p95 is None else float(p95),
            "mean_ms": float(data.mean()) if data.size else None,
            "n": int(data.size),
            "n_error": errors.get(mode, 0),
        }
    return stats


def environment() -> dict[str, Any]:
    """Library and Python versions, OS family and machine type (no host names, no env vars)."""
    return copy.deepcopy(_environment())


@functools.lru_cache(maxsize=1)
def _environment() -> dict[str, Any]:
    versions = {}
    for name in _VERSIONED:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            continue
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": f"{sys.platform}-{platform.machine()}",
        "libraries": versions,
    }


def _numeric_columns(results: Sequence[EvaluationCaseResult]) -> dict[str, list[float]]:
    """Scored numeric values per ``mode.score`` (``EvaluationScore.numeric``, unrolled: hot loop)."""
    columns: dict[tuple[str, str], list[float]] = {}
    for result in results:
        mode = result.query_mode
        for score in result.scores:
            value, metadata = score.value, score.metadata
            if isinstance(value, str) or metadata.get("error") or metadata.get("skipped"):
                continue
            column = columns.get((mode, score.name))
            if column is None:
                column = columns[(mode, score.name)] = []
            column.append(float(value))
    return {f"{mode}.{name}": values for (mode, name), values in columns.items()}


def bootstrap_intervals(
    columns: dict[str, list[float]], config: BenchmarkRunConfig
) -> dict[str, list[float] | None]:
    """95% percentile-bootstrap CI of the mean per column (as ``aggregation.bootstrap_ci``).

    Same draws as ``bootstrap_ci`` (same seed, same length), computed for every column of one
    length at once: resample counts × values is one matrix product, so a report with 400
    score columns costs about what one column costs.
    """
    resamples, out = config.bootstrap_resamples, {}
    by_length: dict[int, list[str]] = {}
    for key, values in columns.items():
        n = len(values)
        if not resamples or n < 2 or n * resamples > _BOOTSTRAP_BUDGET:
            out[key] = None  # too small, or too large for the budget: ``ci95`` (t) stands
        else:
            by_length.setdefault(n, []).append(key)
    alpha = (1 - 0.95) / 2
    for n, keys in by_length.items():
        draws = np.random.default_rng(config.seed).integers(0, n, size=(resamples, n))
        offsets = (np.arange(resamples)[:, None] * n + draws).ravel()
        counts = np.bincount(offsets, minlength=resamples * n).reshape(resamples, n)
        values = np.asarray([columns[key] for key in keys], dtype=float).T  # n × columns
        means = counts @ values / n
        low, high = np.quantile(means, [alpha, 1 - alpha], axis=0)
        out.update(
            {key: [float(lo), float(hi)] for key, lo, hi in zip(keys, low, high, strict=True)}
        )
    return out
