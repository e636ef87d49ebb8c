"""Power of a paired comparison and the smallest difference it can detect.

The power of the paired t-test at n pairs, level α and a true mean difference δ with sd σ of
the differences is ``P(reject | noncentrality δ/σ·√n)`` under the noncentral t with n − 1
degrees of freedom (equal to statsmodels' ``TTestPower``). The minimum detectable effect
(MDE) is the δ reaching the requested power; ``queries_needed`` the smallest n that does.
For the sign-flip, Wilcoxon and bootstrap tests these t-test figures are the usual
planning approximation (the tests have near-equal power on well-behaved IR scores). Where scipy's noncentral t
gives NaN for a far tail (statsmodels then returns NaN too), that tail counts 0.
"""

from __future__ import annotations

import math

from heta_notebook.analysis._options import ALTERNATIVES, check_choice


def power(
    effect: float,
    n: int,
    alpha: float = 0.05,
    sd: float | None = None,
    alternative: str = "two-sided",
) -> float:
    """The paired t-test's power to detect a mean difference ``effect`` over ``n`` pairs.

    ``effect`` is standardized (d_z) unless ``sd`` (of the differences) is given, then raw."""
    from scipy import stats as sps

    check_choice("alternative", alternative, ALTERNATIVES)
    _check(n, alpha)
    d = _standardized(effect, sd)
    if math.isinf(d):
        return 1.0
    df, nc = n - 1, d * math.sqrt(n)
    if alternative == "two-sided":
        crit = float(sps.t.isf(alpha / 2, df))
        upper, lower = _tail(sps.nct.sf(crit, df, nc)), _tail(sps.nct.cdf(-crit, df, nc))
        return min(upper + lower, 1.0)
    if alternative == "greater":
        return _tail(sps.nct.sf(sps.t.isf(alpha, df), df, nc))
    return _tail(sps.nct.cdf(sps.t.ppf(alpha, df), df, nc))


def _tail(value: float) -> float:
    """A noncentral-t tail; scipy returns NaN for a tail many sd away from the noncentrality
    (|nc| ≳ 10), where the probability is below 1e-20: count it 0."""
    value = float(value)
    return 0.0 if math.isnan(value) else value


def min_detectable_effect(
    n: int,
    alpha: float = 0.05,
    target: float = 0.8,
    sd: float | None = None,
    alternative: str = "two-sided",
) -> float:
    """The smallest mean difference the paired t-test detects with probability ``target``
    over ``n`` pairs (raw units when ``sd`` is given, else d_z); a positive number."""
    from scipy import optimize

    _check(n, alpha)
    if not 0 < target < 1:
        raise ValueError(f"power must be between 0 and 1 (got {target!r})")
    sign = -1.0 if alternative == "less" else 1.0
    f = lambda d: power(sign * d, n, alpha, None, alternative) - target  # noqa: E731
    high = 1.0
    while f(high) < 0:
        high *= 2
        if high > 1e6:
            return math.inf
    d = float(optimize.brentq(f, 0.0, high, xtol=1e-12))
    return d if sd is None else d * sd


def queries_needed(
    effect: float,
    sd: float,
    alpha: float = 0.05,
    target: float = 0.8,
    alternative: str = "two-sided",
) -> int:
    """The smallest number of paired queries with power ≥ ``target`` at difference ``effect``."""
    if not effect:
        raise ValueError("queries_needed needs a non-zero effect to detect")
    if not sd > 0:
        return 2
    n = 2
    while power(effect, n, alpha, sd, alternative) < target:
        n = n * 2 if n < 2**20 else n
        if n >= 2**20:
            return n
    low = n // 2
    while low + 1 < n:  # bisect the last doubling
        mid = (low + n) // 2
        if power(effect, mid, alpha, sd, alternative) >= target:
            n = mid
        else:
            low = mid
    return max(n, 2)


def _standardized(effect: float, sd: float | None) -> float:
    if sd is None:
        return float(effect)
    if not sd > 0:
        return math.inf if effect else 0.0
    return float(effect) / float(sd)


def _check(n: int, alpha: float) -> None:
    if not (isinstance(n, int) or hasattr(n, "__index__")) or int(n) < 2:
        raise ValueError(f"power needs n >= 2 paired queries (got {n!r})")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1 (got {alpha!r})")


__all__ = ["min_detectable_effect", "power", "queries_needed"]
