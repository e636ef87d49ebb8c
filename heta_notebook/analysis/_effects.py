"""Standardized effect sizes of paired differences: d_z with a confidence interval.

``d_z = mean(d) / sd(d)`` (sd with divisor n − 1), the paired ("within-subject") Cohen's d
that Sakai's *Statistical Reform in Information Retrieval* asks to report beside the raw
difference. Its interval inverts the noncentral t distribution of ``t = d_z·√n`` (df = n − 1):
the lower bound is the λ/√n with ``P(T ≤ t | λ) = 1 − α/2``, the upper the one with
``P(T ≤ t | λ) = α/2`` (Cumming & Finch 2001). Exact under normal differences; where scipy's
noncentral t cannot be inverted (|t| beyond ~37), the normal approximation
``se = √(1/n + d_z²/(2n))`` is used instead and said so (``method``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class EffectSizes:
    """Per column of a difference matrix: d_z, its interval and how it was obtained."""

    d_z: np.ndarray
    low: np.ndarray
    high: np.ndarray
    method: np.ndarray  # "noncentral-t", "normal-approx" or "" (no d_z: n < 2 or sd 0)


def effect_sizes(d: np.ndarray, confidence: float = 0.95) -> EffectSizes:
    """d_z and its ``confidence`` interval for every column of ``d`` (cases × comparisons,
    NaN where a case has no pair)."""
    d = np.asarray(d, dtype=float)
    d = d[:, None] if d.ndim == 1 else d
    m = d.shape[1]
    dz, low, high = np.full(m, np.nan), np.full(m, np.nan), np.full(m, np.nan)
    method = np.full(m, "", dtype=object)
    for j in range(m):
        x = d[:, j]
        x = x[~np.isnan(x)]
        if len(x) < 2:
            continue
        sd = float(np.std(x, ddof=1))
        if not sd > 0:
            continue
        dz[j] = float(np.mean(x)) / sd
        low[j], high[j], method[j] = d_z_interval(dz[j], len(x), confidence)
    return EffectSizes(dz, low, high, method)


def d_z_interval(d_z: float, n: int, confidence: float = 0.95) -> tuple[float, float, str]:
    """The ``confidence`` interval of a paired d_z over n pairs (module docstring)."""
    from scipy import optimize
    from scipy import stats as sps

    alpha = 1 - confidence
    t, df, root = d_z * np.sqrt(n), n - 1, np.sqrt(n)

    def cdf(lam: float) -> float:  # decreasing in λ; scipy gives NaN in a far tail
        value = float(sps.nct.cdf(t, df, lam))
        return value if not np.isnan(value) else (0.0 if lam > t else 1.0)

    def solve(target: float) -> float:
        f = lambda lam: cdf(lam) - target  # noqa: E731
        width = 10.0 + abs(t)
        return float(optimize.brentq(f, t - width, t + width, xtol=1e-12)) / root

    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            low, high = solve(1 - alpha / 2), solve(alpha / 2)
        if np.isfinite(low) and np.isfinite(high) and low <= d_z <= high:
            return low, high, "noncentral-t"
    except (ValueError, RuntimeError):
        pass
    z = float(sps.norm.isf(alpha / 2))
    se = float(np.sqrt(1 / n + d_z**2 / (2 * n)))
    return d_z - z * se, d_z + z * se, "normal-approx"


def with_statistics(frame, d: np.ndarray, correction: str, alternative: str, confidence: float):
    """A significance frame (one row per column of ``d``, in order) with the chosen
    correction's ``p_adjusted`` (``significant`` from it), ``correction``, ``alternative``
    and d_z with its interval (``d_z``, ``d_z_low``, ``d_z_high``) beside the raw delta."""
    from heta_notebook.analysis._options import adjust

    frame = frame.copy()
    if frame.empty:
        for column in ("p_adjusted", "correction", "alternative", "d_z", "d_z_low", "d_z_high"):
            frame[column] = []
        return frame
    p_adjusted = adjust(frame["p_value"].to_numpy(float), frame["family"].to_numpy(), correction)
    frame.insert(frame.columns.get_loc("p_holm") + 1, "p_adjusted", p_adjusted)
    frame["significant"] = frame["p_adjusted"] < 0.05
    effects = effect_sizes(d, confidence)
    at = frame.columns.get_loc("ci_high") + 1
    for offset, (name, values) in enumerate(
        (("d_z", effects.d_z), ("d_z_low", effects.low), ("d_z_high", effects.high))
    ):
        frame.insert(at + offset, name, values)
    frame["correction"] = correction
    frame["alternative"] = alternative
    return frame


__all__ = ["EffectSizes", "d_z_interval", "effect_sizes", "with_statistics"]
