"""Paired significance tests for comparing per-case scores, vectorised over many comparisons.

Every function takes a matrix of paired differences ``d`` (cases × comparisons; NaN where a
case has no pair) and tests all columns at once: one random sign / resample-count matrix is
multiplied with the whole difference matrix, so 300 comparisons cost one matrix product.

- :func:`paired_permutation_test`: the sign-flip randomization test of the mean difference
  (Fisher's randomization test for paired data). Exact, by enumerating every sign pattern,
  when a column has at most ``exact_max_n`` pairs; else Monte Carlo. When no resample is as
  extreme as the observed mean (p below the Monte-Carlo resolution 2/(B+1)), the p-value
  comes from the normal approximation of the *same* sign-flip distribution (mean 0,
  variance Σd²/n², both exact): without it, Holm over m comparisons could never go below
  m·2/(B+1) (0.06 for 300 comparisons at 10,000 resamples) and nothing would be significant.
- :func:`paired_bootstrap_ci`: percentile bootstrap CI of the mean difference (cases resampled
  with replacement, pairs kept together).
- :func:`paired_t_test`: the paired (Student's) t-test, ``scipy.stats.ttest_rel`` on every
  column at once (ranx's default test; Smucker et al., CIKM 2007, find it agrees with the
  randomization test on IR scores).
- :func:`paired_wilcoxon_test`: the Wilcoxon signed-rank test, ``scipy.stats.wilcoxon`` with
  its defaults (what ``wilcoxon(b, a)`` returns for each column alone). **Zero differences**
  (both variants score the same on a case, frequent in IR) are dropped before ranking
  (``zero_method="wilcox"``, Wilcoxon's own rule and the default of scipy, R's ``wilcox.test``
  and ranx); the n shown still counts them as pairs. **Ties** among the non-zero |d| get their
  average rank. Null distribution per column, as scipy's ``method="auto"`` would pick for that
  column alone: exact when it has at most 50 pairs and no ties or zeros; the exact sign-flip
  distribution of the rank sum (all 2^n patterns) for at most 13 pairs with ties or zeros; else
  the normal approximation with the tie-corrected variance and no continuity correction.
- :func:`holm`: Holm's step-down correction of a family of p-values (or of several families
  at once: one label per p-value).

:func:`paired_test` runs any of the three tests (``test=``) beside the bootstrap CI. A column
whose differences are all 0 gets p = 1 under every test (scipy's t-test and large-sample
Wilcoxon return NaN there: no variance, no evidence of a difference).

Large samples (``method="auto"``, the default): a column with at least
:data:`ASYMPTOTIC_MIN_N` pairs whose differences are spread over at least
:data:`ASYMPTOTIC_MIN_EFFECTIVE_N` "effective" cases uses the asymptotic forms of the *same
two procedures* instead of resampling them (what R's ``coin`` does with
``distribution = asymptotic()``); its ``method`` is ``"asymptotic"``. Every other column
takes the exact / Monte-Carlo path above, unchanged.

- Sign-flip test: the randomization distribution of the mean, T = Σ sᵢdᵢ / n with random
  signs sᵢ, has mean 0, variance Σd²/n² and skewness 0 (it is symmetric), all exact; its
  excess kurtosis is −2·Σd⁴/(Σd²)². The p-value is the two-sided normal tail
  ``erfc(|d̄| / (√Σd²/n) / √2)``. The neglected kurtosis term (order 1/n_eff) makes the true
  distribution lighter-tailed than the normal, so the normal tail errs on the conservative
  side far out. No continuity correction: scores are in general not on a lattice.
- Percentile bootstrap: the distribution of a resample's mean has mean d̄, variance σ̂²/n
  (σ̂ with divisor n) and skewness γ̂/√n (γ̂ the sample skewness), so its quantiles are, by
  the first-order Cornish–Fisher expansion, ``d̄ + σ̂/√n·(z + (z² − 1)·γ̂/(6√n))``.

The effective number of cases of a column is ``(Σx²)²/Σx⁴``: n when every |x| is equal, the
number of non-zero differences when they are all ±c, small when a few cases dominate. It is
taken on the raw differences (the sign-flip distribution's excess kurtosis is −2/n_eff) and
on the centred ones (the bootstrap mean's excess kurtosis is about 1/n_eff and its skewness
at most 1/√n_eff), and the smaller one must reach the threshold, so the neglected terms stay
below ~0.1 % (kurtosis) and the skewness the expansion corrects below ~3 %. A column with no
spread (all differences 0, or all equal) has a point-mass distribution, given exactly.
``method="monte-carlo"`` forces the exact / Monte-Carlo path everywhere, ``"asymptotic"``
the asymptotic forms everywhere.

Conventions follow ``scipy.stats.permutation_test`` / ``scipy.stats.bootstrap`` so the tests
can check the numbers against scipy: two-sided p = 2·min(p_less, p_greater), Monte-Carlo
p-values add one to numerator and denominator, percentile CIs use linear interpolation.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from typing import Any

import numpy as np

from heta_notebook.analysis._options import ALTERNATIVES, TEST_ALIASES, check_choice
from heta_notebook.analysis._options import TESTS as TESTS
from heta_notebook.evaluators._aggregation import bootstrap_means

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
EXACT_MAX_N = 12
ASYMPTOTIC_MIN_N = 20_000  # pairs a column needs before "auto" uses the asymptotic forms
ASYMPTOTIC_MIN_EFFECTIVE_N = 1_000  # ... and effective cases, (Σx²)²/Σx⁴ (module docstring)
METHODS = ("auto", "monte-carlo", "asymptotic")
TEST_NAMES = {  # how tables and headlines name each test
    "permutation": "sign-flip permutation test",
    "t-test": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "bootstrap": "paired bootstrap test",
}
FAMILIES = ("score", "all")  # Holm within each score (default), or over every test at once
WILCOXON_ZERO_METHOD = "wilcox"  # zero differences are dropped before ranking
WILCOXON_EXACT_MAX_N = 50  # scipy's "auto": exact null distribution up to 50 pairs (no ties)
WILCOXON_ENUMERATE_MAX_N = 13  # ... with ties or zeros: all 2^n sign patterns up to 13 pairs
_CHUNK_ELEMENTS = 10_000_000  # resamples × cases per block: ~40 MB of float32
_BLOCK_ELEMENTS = 500_000  # cases × columns per block of the column-wise sums: 4 MB


@dataclass(frozen=True)
class PairedTest:
    """Per-column results of the paired tests (arrays of length n_comparisons)."""

    n: np.ndarray
    mean_diff: np.ndarray
    p_value: np.ndarray
    method: np.ndarray  # how each p was obtained: "exact", "monte-carlo", "t-distribution", ...
    ci_low: np.ndarray
    ci_high: np.ndarray
    wins: np.ndarray
    ties: np.ndarray
    losses: np.ndarray
    ci_method: np.ndarray | None = None  # "bootstrap" (resampled) or "asymptotic" per column


def paired_test(
    d: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
    exact_max_n: int = EXACT_MAX_N,
    method: str = "auto",
    asymptotic_min_n: int = ASYMPTOTIC_MIN_N,
    asymptotic_min_effective_n: float = ASYMPTOTIC_MIN_EFFECTIVE_N,
    test: str = "permutation",
    alternative: str = "two-sided",
) -> PairedTest:
    """p-value of ``test``, bootstrap CI and win/tie/loss of every column of ``d`` (b - a).

    ``test``: ``"permutation"`` (sign-flip), ``"t-test"`` (paired t) or ``"wilcoxon"``
    (signed-rank) or ``"bootstrap"`` (resampled centred differences); ``alternative``
    ``"two-sided"``, ``"greater"`` (b above a) or ``"less"``. ``method`` (the permutation test's and the bootstrap's null
    distributions): ``"auto"`` (asymptotic forms for large, well-spread columns, see the
    module docstring), ``"monte-carlo"`` (exact / Monte-Carlo only) or ``"asymptotic"``.
    Identical columns (e.g. recall@10 and evidence_recall@10 on document qrels) are
    resampled once: a column's result depends only on its own values and the seed.
    """
    d = _as_matrix(d)
    check_method(method)
    check_test(test)
    test = TEST_ALIASES.get(test, test)
    check_choice("alternative", alternative, ALTERNATIVES)
    plan = _plan(d, method, asymptotic_min_n, asymptotic_min_effective_n)
    if not all(group.asymptotic.all() for group in plan):  # something is resampled
        unique, inverse = _unique_columns(d)
        if len(unique) < d.shape[1]:
            once = paired_test(
                d[:, unique],
                n_resamples=n_resamples,
                confidence=confidence,
                seed=seed,
                exact_max_n=exact_max_n,
                method=method,
                asymptotic_min_n=asymptotic_min_n,
                asymptotic_min_effective_n=asymptotic_min_effective_n,
                test=test,
                alternative=alternative,
            )
            fields = PairedTest.__dataclass_fields__
            return PairedTest(*(getattr(once, f)[inverse] for f in fields))
    if test == "t-test":
        p, p_method = paired_t_test(d, alternative)
    elif test == "wilcoxon":
        p, p_method = paired_wilcoxon_test(d, alternative=alternative)
    elif test == "bootstrap":
        p, p_method = _bootstrap_test(d, plan, n_resamples, seed, alternative)
    else:
        p, p_method = _permutation(d, plan, n_resamples, seed, exact_max_n, alternative)
    low, high = _bootstrap(d, plan, n_resamples, confidence, seed)
    wins, ties, losses = win_tie_loss(d)
    n = np.sum(~np.isnan(d), axis=0)
    total = _by_column_blocks(lambda block: np.nansum(block, axis=0), d)
    with np.errstate(invalid="ignore"):
        mean = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    ci_method = np.full(d.shape[1], "bootstrap", dtype=object)
    for group in plan:
        ci_method[group.cols[group.asymptotic]] = "asymptotic"
    return PairedTest(n, mean, p, p_method, low, high, wins, ties, losses, ci_method)


def paired_permutation_test(
    d: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    exact_max_n: int = EXACT_MAX_N,
    method: str = "auto",
    asymptotic_min_n: int = ASYMPTOTIC_MIN_N,
    asymptotic_min_effective_n: float = ASYMPTOTIC_MIN_EFFECTIVE_N,
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided sign-flip test of mean(d) = 0 per column; returns (p_values, methods).

    Columns are grouped by which cases they have; each group uses the same random signs
    (seeded), so a column's p-value does not depend on the other columns. ``method`` as in
    :func:`paired_test`.
    """
    d = _as_matrix(d)
    check_method(method)
    plan = _plan(d, method, asymptotic_min_n, asymptotic_min_effective_n)
    return _permutation(d, plan, n_resamples, seed, exact_max_n)


def paired_t_test(d: np.ndarray, alternative: str = "two-sided") -> tuple[np.ndarray, np.ndarray]:
    """Two-sided paired t-test of mean(d) = 0 per column; returns (p_values, methods).

    Each column's p equals ``scipy.stats.ttest_rel(b, a).pvalue`` on its paired cases (NaN
    pairs left out); columns sharing their cases are tested in one vectorised call.
    """
    from scipy import stats as sps

    d = _as_matrix(d)

    def p_values(x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # n = 1 or no variance: NaN / 0
            result = sps.ttest_1samp(x, 0.0, axis=0, alternative=alternative)
            return np.asarray(result.pvalue, dtype=float)

    p = np.full(d.shape[1], np.nan)
    for rows, cols in _groups(d):
        p[cols] = _by_column_blocks(p_values, d, rows, cols)
    methods = np.full(d.shape[1], "t-distribution", dtype=object)
    return _no_difference(d, p, methods)


def paired_wilcoxon_test(
    d: np.ndarray, zero_method: str = WILCOXON_ZERO_METHOD, alternative: str = "two-sided"
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Wilcoxon signed-rank test per column; returns (p_values, methods).

    Each column's p equals ``scipy.stats.wilcoxon(b, a, zero_method=zero_method).pvalue`` on
    its paired cases; the null distribution is chosen per column (module docstring), so a
    column's p never depends on the other columns. ``methods``: ``"exact"``,
    ``"exact-permutation"`` (2^n sign patterns, for ties or zeros) or ``"normal-approx"``.
    """
    if zero_method not in ("wilcox", "pratt", "zsplit"):
        raise ValueError(f"zero_method must be wilcox, pratt or zsplit (got {zero_method!r})")
    d = _as_matrix(d)
    p = np.full(d.shape[1], np.nan)
    methods = np.full(d.shape[1], "", dtype=object)
    for rows, cols in _groups(d):
        kind = _by_column_blocks(_wilcoxon_kind, d, rows, cols)
        for code, label in enumerate(("exact", "exact-permutation", "normal-approx")):
            picked = cols[kind == code]
            if len(picked):
                p[picked] = _by_column_blocks(
                    lambda x, label=label: _wilcoxon_p(x, label, zero_method, alternative),
                    d,
                    rows,
                    picked,
                )
                methods[picked] = label
    return _no_difference(d, p, methods)


def paired_bootstrap_ci(
    d: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
    method: str = "auto",
    asymptotic_min_n: int = ASYMPTOTIC_MIN_N,
    asymptotic_min_effective_n: float = ASYMPTOTIC_MIN_EFFECTIVE_N,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap CI of mean(d) per column (cases resampled with replacement).

    ``method`` as in :func:`paired_test`: large, well-spread columns take the Cornish–Fisher
    quantiles of the bootstrap distribution instead of resampling it.
    """
    d = _as_matrix(d)
    check_method(method)
    plan = _plan(d, method, asymptotic_min_n, asymptotic_min_effective_n)
    return _bootstrap(d, plan, n_resamples, confidence, seed)


def effective_n(x: np.ndarray) -> np.ndarray:
    """Per column, (Σx²)²/Σx⁴: how many cases the sum really rests on (inf if all are 0)."""
    x = _as_matrix(x)
    return _effective_n(_by_column_blocks(_moments, x), centred=False, n=x.shape[0])


def use_asymptotic(
    x: np.ndarray,
    method: str = "auto",
    *,
    min_n: int = ASYMPTOTIC_MIN_N,
    min_effective_n: float = ASYMPTOTIC_MIN_EFFECTIVE_N,
) -> np.ndarray:
    """Which columns of x (no NaN) take the asymptotic forms: all (``"asymptotic"``), none
    (``"monte-carlo"``) or, for ``"auto"``, those with n ≥ ``min_n`` pairs and an
    effective n, raw and centred, of at least ``min_effective_n``."""
    check_method(method)
    x = _as_matrix(x)
    if method != "auto" or x.shape[0] < min_n:
        return np.full(x.shape[1], method == "asymptotic")
    return _well_spread(_by_column_blocks(_moments, x), x.shape[0], min_effective_n)


def check_method(method: str) -> None:
    """Refuse an unknown ``method`` with the list of known ones."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)} (got {method!r})")


def check_test(test: str) -> None:
    """Refuse an unknown ``test`` with the list of known ones (``"sign-flip"`` is accepted
    for ``"permutation"``)."""
    check_choice("test", TEST_ALIASES.get(test, test), TESTS)


def check_family(family: str) -> None:
    """Refuse an unknown correction ``family`` with the list of known ones."""
    check_choice("family", family, FAMILIES)


def holm(p_values: np.ndarray, families: Sequence[Any] | np.ndarray | None = None) -> np.ndarray:
    """Holm step-down adjusted p-values, within each family (one label per p-value) or over
    all of them; NaNs are left out of their family and stay NaN (``adjust``'s Holm)."""
    from heta_notebook.analysis._options import adjust

    return adjust(p_values, families, "holm")


def win_tie_loss(d: np.ndarray, tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column: cases where b beats a (d > 0), ties (|d| <= tol) and losses (d < 0)."""
    d = _as_matrix(d)
    with np.errstate(invalid="ignore"):
        wins = np.sum(d > tol, axis=0)
        losses = np.sum(d < -tol, axis=0)
        ties = np.sum(~np.isnan(d), axis=0) - wins - losses  # the rest: |d| <= tol
    return wins, ties, losses


# --------------------------------------------------------------------------- kernels


def _no_difference(d: np.ndarray, p: np.ndarray, methods: np.ndarray):
    """p = 1 (method "no-difference") for columns with pairs whose differences are all 0."""
    with np.errstate(invalid="ignore"):
        nonzero = _by_column_blocks(lambda x: np.sum(np.abs(x) > 0, axis=0), d)
    n = _by_column_blocks(lambda x: np.sum(~np.isnan(x), axis=0), d)
    flat = (n > 0) & (nonzero == 0)
    p, methods = p.copy(), methods.copy()
    p[flat], methods[flat] = 1.0, "no-difference"
    return p, methods


def _wilcoxon_kind(x: np.ndarray) -> np.ndarray:
    """Per column (no NaN), the null distribution scipy's ``method="auto"`` picks for it alone:
    0 exact (≤ 50 pairs, no zero, no tie), 1 all sign patterns (≤ 13 pairs), 2 normal."""
    n = x.shape[0]
    if n > WILCOXON_EXACT_MAX_N:
        return np.full(x.shape[1], 2)
    magnitudes = np.sort(np.abs(x), axis=0)
    zeros = np.any(x == 0, axis=0)
    ties = np.any(magnitudes[1:] == magnitudes[:-1], axis=0)
    return np.where(~(zeros | ties), 0, np.where(n <= WILCOXON_ENUMERATE_MAX_N, 1, 2))


def _wilcoxon_p(
    x: np.ndarray, kind: str, zero_method: str, alternative: str = "two-sided"
) -> np.ndarray:
    """``scipy.stats.wilcoxon`` p-values of the columns of x with one null distribution."""
    from scipy import stats as sps

    method: Any = {
        "exact": "exact",
        "exact-permutation": sps.PermutationMethod(),  # 9,999 ≥ 2^13: every pattern
        "normal-approx": "asymptotic",
    }[kind]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all zeros: NaN, set to 1 later
        result = sps.wilcoxon(
            x, axis=0, zero_method=zero_method, method=method, alternative=alternative
        )
    return np.asarray(result.pvalue, dtype=float)


def _as_matrix(d: np.ndarray) -> np.ndarray:
    d = np.asarray(d, dtype=float)
    return d[:, None] if d.ndim == 1 else d


def _unique_columns(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the distinct columns of d (NaN-aware) and, per column, its distinct index.

    Columns are bucketed by a random projection, then checked for exact equality.
    """
    m = d.shape[1]
    if m < 2:
        return np.arange(m), np.arange(m)
    probe = np.random.default_rng(12345).normal(size=(2, d.shape[0]))
    if np.isnan(d).any():  # NaN-aware keys, a few columns at a time
        key = _by_column_blocks(lambda x: _column_keys(x, probe), d)
    else:
        key = probe[0] @ d
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if len(first) == m:
        return np.arange(m), np.arange(m)
    same = all(np.array_equal(d[:, j], d[:, first[inverse[j]]], equal_nan=True) for j in range(m))
    return (first, inverse) if same else (np.arange(m), np.arange(m))


def _column_keys(x: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """One random projection per column (NaN-aware): equal columns get equal keys."""
    missing = np.isnan(x)
    return probe[0] @ np.where(missing, 0.0, x) + probe[1] @ missing


def _groups(d: np.ndarray):
    """Yield (row indices, column indices) of columns sharing the same set of paired cases."""
    valid = ~np.isnan(d)
    if valid.all():
        if d.shape[0]:
            yield np.arange(d.shape[0]), np.arange(d.shape[1])
        return
    patterns: dict[bytes, list[int]] = {}
    packed = np.packbits(valid, axis=0)  # column j packs exactly like np.packbits(valid[:, j])
    for j in range(d.shape[1]):
        patterns.setdefault(packed[:, j].tobytes(), []).append(j)
    for cols in patterns.values():
        rows = np.flatnonzero(valid[:, cols[0]])
        if len(rows):
            yield rows, np.asarray(cols)


@dataclass(frozen=True)
class _Group:
    """Columns sharing their paired cases, which of them are asymptotic, and (when the
    asymptotic forms may apply) their moments (``_moments``: 6 × columns)."""

    rows: np.ndarray
    cols: np.ndarray
    asymptotic: np.ndarray
    moments: np.ndarray | None


def _plan(d: np.ndarray, method: str, min_n: int, min_effective_n: float) -> list[_Group]:
    """Group the columns and decide, per column, asymptotic forms or resampling."""
    plan = []
    for rows, cols in _groups(d):
        if method == "monte-carlo" or (method == "auto" and len(rows) < min_n):
            plan.append(_Group(rows, cols, np.zeros(len(cols), bool), None))
            continue
        moments = _by_column_blocks(_moments, d, rows, cols)
        if method == "asymptotic":
            decided = np.ones(len(cols), bool)
        else:
            decided = _well_spread(moments, len(rows), min_effective_n)
        plan.append(_Group(rows, cols, decided, moments))
    return plan


def _permutation(
    d, plan, n_resamples, seed, exact_max_n, alternative="two-sided"
) -> tuple[np.ndarray, np.ndarray]:
    p = np.full(d.shape[1], np.nan)
    methods = np.full(d.shape[1], "", dtype=object)
    for group in plan:
        picked = group.asymptotic
        if picked.any():
            moments = group.moments[:, picked]
            p[group.cols[picked]] = _sign_flip_tail(moments, len(group.rows), alternative)
            methods[group.cols[picked]] = "asymptotic"
        cols = group.cols[~picked]
        if not len(cols):
            continue
        x = _submatrix(d, group.rows, cols)
        if len(group.rows) <= exact_max_n:
            p[cols], methods[cols] = _exact_sign_flip(x, alternative), "exact"
        else:
            p[cols], methods[cols] = _random_sign_flip(x, n_resamples, seed, alternative)
    return p, methods


def _bootstrap(d, plan, n_resamples, confidence, seed) -> tuple[np.ndarray, np.ndarray]:
    low, high = np.full(d.shape[1], np.nan), np.full(d.shape[1], np.nan)
    alpha = (1 - confidence) / 2
    for group in plan:
        picked = group.asymptotic
        if picked.any():
            moments, n = group.moments[:, picked], len(group.rows)
            quantiles = _cornish_fisher_quantiles(moments, n, [alpha, 1 - alpha])
            low[group.cols[picked]], high[group.cols[picked]] = quantiles
        cols = group.cols[~picked]
        if not len(cols):
            continue
        means = _bootstrap_means(_submatrix(d, group.rows, cols), n_resamples, seed)
        low[cols], high[cols] = np.quantile(means, [alpha, 1 - alpha], axis=0)
    return low, high


def _bootstrap_test(d, plan, n_resamples, seed, alternative) -> tuple[np.ndarray, np.ndarray]:
    """The paired bootstrap test of mean(d) = 0: resample the centred differences (the null
    made true, same resamples as the CI) and count means at least as extreme as d̄ (+1 / B+1,
    as the Monte-Carlo permutation test); large well-spread columns: the normal form with
    sd σ̂/√n."""
    p = np.full(d.shape[1], np.nan)
    methods = np.full(d.shape[1], "", dtype=object)
    for group in plan:
        picked = group.asymptotic
        if picked.any():
            moments, n = group.moments[:, picked], len(group.rows)
            sd = np.sqrt(moments[3]) / np.sqrt(n)
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(sd > 0, moments[0] / np.where(sd > 0, sd, 1.0), 0.0)
            p[group.cols[picked]] = _normal_p(z, alternative)
            methods[group.cols[picked]] = "asymptotic"
        cols = group.cols[~picked]
        if not len(cols):
            continue
        x = _submatrix(d, group.rows, cols)
        observed = x.mean(axis=0)
        null = _bootstrap_means(x, n_resamples, seed) - observed  # the centred resamples
        gamma = 1e-12 * np.mean(np.abs(x), axis=0)
        less = np.sum(null <= observed + gamma, axis=0)
        greater = np.sum(null >= observed - gamma, axis=0)
        if alternative == "two-sided":
            count = np.sum(np.abs(null) >= np.abs(observed) - gamma, axis=0)
            p[cols] = np.minimum((count + 1) / (n_resamples + 1), 1.0)
        else:
            p[cols] = _two_sided(less, greater, n_resamples, 1, alternative)
        methods[cols] = "bootstrap"
    return _no_difference(d, p, methods)


def _moments(x: np.ndarray) -> np.ndarray:
    """Per column of x: mean, Σx², Σx⁴ and the centred moments m2, m3, m4 (divisor n)."""
    mean = x.mean(axis=0)
    squares = x**2
    centred = x - mean
    c2 = centred * centred
    return np.stack(
        [
            mean,
            np.sum(squares, axis=0),
            np.sum(squares * squares, axis=0),
            np.mean(c2, axis=0),
            np.mean(c2 * centred, axis=0),
            np.mean(c2 * c2, axis=0),
        ]
    )


def _effective_n(moments: np.ndarray, *, centred: bool, n: int) -> np.ndarray:
    """(Σx²)²/Σx⁴ of the raw or the centred columns (inf where every value is 0)."""
    s2, s4 = (n * moments[3], n * moments[5]) if centred else (moments[1], moments[2])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(s4 > 0, s2 * s2 / np.where(s4 > 0, s4, 1.0), np.inf)


def _well_spread(moments: np.ndarray, n: int, min_effective_n: float) -> np.ndarray:
    """Both effective n (raw: the sign-flip test; centred: the bootstrap) reach the bar."""
    raw = _effective_n(moments, centred=False, n=n)
    return np.minimum(raw, _effective_n(moments, centred=True, n=n)) >= min_effective_n


def _sign_flip_tail(moments: np.ndarray, n: int, alternative: str = "two-sided") -> np.ndarray:
    """``_normal_tail`` from the moments: the asymptotic sign-flip p-value."""
    sigma = np.sqrt(moments[1]) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sigma > 0, moments[0] / sigma, 0.0)
    return _normal_p(z, alternative)


def _normal_p(z: np.ndarray, alternative: str) -> np.ndarray:
    """The normal p-value of a signed z under ``alternative``."""
    from scipy.special import erfc

    if alternative == "greater":
        return erfc(z / np.sqrt(2)) / 2
    if alternative == "less":
        return erfc(-z / np.sqrt(2)) / 2
    return erfc(np.abs(z) / np.sqrt(2))


def _by_column_blocks(
    fn: Callable[..., np.ndarray],
    d: np.ndarray,
    rows: np.ndarray | None = None,
    cols: np.ndarray | None = None,
) -> np.ndarray:
    """``fn(block)`` on C-contiguous copies of ``d[rows][:, cols]`` (default: all), a few
    columns at a time (temporaries stay ~4 MB), joined along the last axis. A column's
    result never depends on the others: each column is summed in row order."""
    cols = np.arange(d.shape[1]) if cols is None else cols
    n = d.shape[0] if rows is None else len(rows)
    step = max(1, _BLOCK_ELEMENTS // max(n, 1))
    parts = [fn(_submatrix(d, rows, cols[i : i + step])) for i in range(0, len(cols), step)]
    if not parts:
        return fn(_submatrix(d, rows, cols))
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)


def _submatrix(d: np.ndarray, rows: np.ndarray | None, cols: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of rows × cols of d (no copy when that is all of a contiguous d)."""
    if rows is None or len(rows) == d.shape[0]:
        if np.array_equal(cols, np.arange(d.shape[1])):
            return np.ascontiguousarray(d)
        return np.ascontiguousarray(d[:, cols])
    return d[np.ix_(rows, cols)]


def _cornish_fisher_quantiles(moments: np.ndarray, n: int, levels: list[float]) -> np.ndarray:
    """Quantiles (levels × columns) of the bootstrap distribution of the mean: mean d̄, sd
    σ̂/√n, skewness γ̂/√n, first-order Cornish–Fisher expansion."""
    from scipy.special import ndtri

    mean, m2, m3 = moments[0], moments[3], moments[4]
    sd = np.sqrt(m2)
    with np.errstate(divide="ignore", invalid="ignore"):
        skew = np.where(m2 > 0, m3 / np.where(m2 > 0, sd**3, 1.0), 0.0)
    z = ndtri(np.asarray(levels, dtype=float))[:, None]
    return mean + sd / np.sqrt(n) * (z + (z**2 - 1) * skew / (6 * np.sqrt(n)))


def _counts(null: np.ndarray, x: np.ndarray, rtol: float) -> tuple[np.ndarray, np.ndarray]:
    """How many null statistics are <= and >= the observed mean (ties within rounding count)."""
    observed = x.mean(axis=0)
    gamma = rtol * np.mean(np.abs(x), axis=0)
    return np.sum(null <= observed + gamma, axis=0), np.sum(null >= observed - gamma, axis=0)


def _two_sided(
    less: np.ndarray,
    greater: np.ndarray,
    total: int,
    adjustment: int,
    alternative: str = "two-sided",
) -> np.ndarray:
    """scipy's p: two-sided 2·min(P(T <= t), P(T >= t)); one-sided P(T >= t) or P(T <= t)."""
    if alternative != "two-sided":
        count = greater if alternative == "greater" else less
        return np.minimum((count + adjustment) / (total + adjustment), 1.0)
    smaller = np.minimum(less, greater) + adjustment
    return np.minimum(smaller / (total + adjustment) * 2, 1.0)


def _normal_tail(x: np.ndarray, alternative: str = "two-sided") -> np.ndarray:
    """p of the observed mean under the normal approximation of the sign-flip
    distribution: mean 0 and variance Σx²/n² (the exact variance of that distribution)."""
    n = x.shape[0]
    sigma = np.sqrt(np.sum(x**2, axis=0)) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(sigma > 0, x.mean(axis=0) / sigma, 0.0)
    return _normal_p(z, alternative)


def _exact_sign_flip(x: np.ndarray, alternative: str = "two-sided") -> np.ndarray:
    """Enumerate all 2^n sign patterns (n <= exact_max_n)."""
    signs = np.array(list(product((1.0, -1.0), repeat=x.shape[0])))
    null = signs @ x / x.shape[0]
    less, greater = _counts(null, x, rtol=1e-12)
    return _two_sided(less, greater, len(null), 0, alternative)


def _random_sign_flip(
    x: np.ndarray, n_resamples: int, seed: int, alternative: str = "two-sided"
) -> tuple[np.ndarray, np.ndarray]:
    """Monte-Carlo sign flips: T* = (2·B - 1) @ x / n with B random 0/1, in blocks."""
    rng = np.random.default_rng(seed)
    n = x.shape[0]
    dtype = np.float64 if n * x.shape[1] <= 200_000 else np.float32
    xs = x.astype(dtype)
    total = xs.sum(axis=0)
    null = np.empty((n_resamples, x.shape[1]))
    for start, stop in _blocks(n_resamples, n):
        bits = _random_bits(rng, stop - start, n, dtype)
        null[start:stop] = 2.0 * (bits @ xs) - total
    less, greater = _counts(null / n, x, rtol=_rtol(dtype))
    p = _two_sided(less, greater, n_resamples, 1, alternative)
    tail = {"greater": greater, "less": less}.get(alternative, np.minimum(less, greater))
    beyond = tail == 0  # observed mean more extreme than every resample
    p = np.where(beyond, np.minimum(p, _normal_tail(x, alternative)), p)
    return p, np.where(beyond, "normal-tail", "monte-carlo").astype(object)


def _random_bits(rng: np.random.Generator, rows: int, n: int, dtype: type) -> np.ndarray:
    """A rows × n matrix of fair 0/1 draws (8 per random byte, in ``np.unpackbits`` order).

    Each byte is looked up in a 256 × 8 table of its bits, already in ``dtype``: 3x faster
    than unpacking and then converting, with the same values.
    """
    raw = np.frombuffer(rng.bytes(-(-rows * n // 8)), dtype=np.uint8)
    return np.take(_bit_table(dtype), raw, axis=0).reshape(-1)[: rows * n].reshape(rows, n)


@lru_cache(maxsize=2)
def _bit_table(dtype: type) -> np.ndarray:
    return np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(dtype)


def _bootstrap_means(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Means of ``n_resamples`` resamples of the rows of x (``aggregation.bootstrap_means``)."""
    return bootstrap_means(x, n_resamples, seed + 1)


def _rtol(dtype: type) -> float:
    """Relative tolerance covering the rounding of a sum of many values in ``dtype``."""
    return 1e-5 if dtype is np.float32 else 1e-12


def _blocks(n_resamples: int, n: int):
    size = max(1, _CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, n_resamples, size):
        yield start, min(start + size, n_resamples)


__all__ = [
    "ASYMPTOTIC_MIN_EFFECTIVE_N",
    "ASYMPTOTIC_MIN_N",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "EXACT_MAX_N",
    "FAMILIES",
    "METHODS",
    "TESTS",
    "TEST_NAMES",
    "WILCOXON_ZERO_METHOD",
    "PairedTest",
    "check_family",
    "check_method",
    "check_test",
    "effective_n",
    "holm",
    "paired_bootstrap_ci",
    "paired_permutation_test",
    "paired_t_test",
    "paired_test",
    "paired_wilcoxon_test",
    "use_asymptotic",
    "win_tie_loss",
]
