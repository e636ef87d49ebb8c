"""Paired permutation test, bootstrap CI and Holm correction, checked against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from heta_notebook.analysis import _stats as stats


def _scipy_p(d: np.ndarray, n_resamples: int = 9999) -> float:
    """scipy's paired ('samples') permutation test of mean(b - a) with a = 0, b = d."""
    result = sps.permutation_test(
        (d, np.zeros_like(d)),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=n_resamples,
        vectorized=True,
        rng=0,
    )
    return float(result.pvalue)


@pytest.mark.parametrize("n", [5, 9, 12])
def test_exact_sign_flip_p_equals_scipy_exact(n):
    rng = np.random.default_rng(n)
    d = rng.normal(0.4, 1.0, size=n)
    p, method = stats.paired_permutation_test(d)
    assert method[0] == "exact"
    assert p[0] == pytest.approx(_scipy_p(d), abs=1e-12)


def test_exact_test_with_ties_and_zeros_matches_scipy():
    d = np.array([0.0, 0.5, 0.5, -0.5, 1.0, 0.0, 0.5, 1.0])
    p, _ = stats.paired_permutation_test(d)
    assert p[0] == pytest.approx(_scipy_p(d), abs=1e-12)


@pytest.mark.parametrize("shift", [0.0, 0.15, 0.4])
def test_monte_carlo_p_close_to_scipy(shift):
    rng = np.random.default_rng(7)
    d = rng.normal(shift, 1.0, size=80)
    p, method = stats.paired_permutation_test(d, n_resamples=20_000)
    assert method[0] == "monte-carlo"
    expected = _scipy_p(d, n_resamples=20_000)
    # two independent Monte-Carlo estimates of 2·q (q one-sided): a few standard errors apart
    q = min(expected / 2, 0.5)
    se = 2 * np.sqrt(q * (1 - q) / 20_000) * np.sqrt(2) + 1e-4
    assert abs(p[0] - expected) < 4.5 * se


def test_bootstrap_ci_close_to_scipy_percentile():
    rng = np.random.default_rng(3)
    d = rng.normal(0.1, 0.5, size=200)
    low, high = stats.paired_bootstrap_ci(d, n_resamples=20_000)
    ref = sps.bootstrap((d,), np.mean, method="percentile", n_resamples=20_000, rng=0)
    width = ref.confidence_interval.high - ref.confidence_interval.low
    assert low[0] == pytest.approx(ref.confidence_interval.low, abs=0.03 * width)
    assert high[0] == pytest.approx(ref.confidence_interval.high, abs=0.03 * width)
    assert low[0] < d.mean() < high[0]


def test_vectorised_columns_equal_one_at_a_time():
    rng = np.random.default_rng(11)
    d = rng.normal(0.05, 1.0, size=(300, 4))
    d[::7, 2] = np.nan  # a column with missing pairs
    together = stats.paired_test(d, n_resamples=2000)
    for j in range(d.shape[1]):
        alone = stats.paired_test(d[:, j], n_resamples=2000)
        assert together.p_value[j] == alone.p_value[0]
        assert together.ci_low[j] == pytest.approx(alone.ci_low[0], abs=1e-12)
        assert together.n[j] == alone.n[0]


def test_nan_pairs_are_left_out_not_counted_as_zero():
    d = np.array([1.0, 1.0, np.nan, 1.0, np.nan, 1.0, 1.0, 1.0])
    result = stats.paired_test(d)
    assert result.n[0] == 6
    assert result.mean_diff[0] == 1.0
    assert result.p_value[0] == pytest.approx(2 / 2**6)  # all-positive under exact sign flip


def test_identical_is_not_significant_and_shift_is():
    rng = np.random.default_rng(5)
    a = rng.uniform(0, 1, size=500)
    same = stats.paired_test(np.zeros_like(a))
    assert same.p_value[0] == 1.0
    assert same.ci_low[0] == same.ci_high[0] == 0.0
    shifted = stats.paired_test(np.clip(a + 0.1, 0, 1) - a + rng.normal(0, 0.05, 500))
    assert shifted.p_value[0] < 0.001
    assert shifted.ci_low[0] > 0


def test_holm_known_values():
    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan])
    adjusted = stats.holm(p)
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone 0.06
    np.testing.assert_allclose(adjusted[:4], [0.03, 0.06, 0.06, 0.02])
    assert np.isnan(adjusted[4])
    assert stats.holm(np.array([0.9, 0.8])).max() == 1.0


def test_holm_is_never_smaller_than_raw_and_matches_bonferroni_for_the_minimum():
    p = np.random.default_rng(2).uniform(0, 0.2, size=30)
    adjusted = stats.holm(p)
    assert np.all(adjusted >= p)
    assert adjusted.min() == pytest.approx(min(1.0, p.min() * len(p)))


def test_win_tie_loss_counts():
    wins, ties, losses = stats.win_tie_loss(np.array([0.1, 0.0, -0.2, 0.3, np.nan, 0.0]))
    assert (wins[0], ties[0], losses[0]) == (2, 2, 1)


def test_fixed_seed_is_reproducible():
    d = np.random.default_rng(0).normal(0.02, 1, size=(1000, 3))
    first, second = stats.paired_test(d, n_resamples=1000), stats.paired_test(d, n_resamples=1000)
    np.testing.assert_array_equal(first.p_value, second.p_value)
    np.testing.assert_array_equal(first.ci_high, second.ci_high)


def test_beyond_every_resample_uses_the_normal_tail_of_the_same_distribution():
    rng = np.random.default_rng(9)
    d = rng.normal(0.3, 1.0, size=2000)  # z ≈ 13: no resample comes close
    p, method = stats.paired_permutation_test(d, n_resamples=1000)
    assert method[0] == "normal-tail"
    z = abs(d.mean()) / (np.sqrt(np.sum(d**2)) / len(d))
    assert p[0] == pytest.approx(sps.norm.sf(z) * 2, rel=1e-9)
    assert p[0] < 1e-20
    # 300 such comparisons still survive Holm, which 2/(B+1) per test never could
    assert stats.holm(np.full(300, p[0])).max() < 1e-15


def test_normal_tail_agrees_with_scipy_where_monte_carlo_still_resolves():
    rng = np.random.default_rng(4)
    d = rng.normal(0.08, 1.0, size=1000)
    p, method = stats.paired_permutation_test(d, n_resamples=20_000)
    assert method[0] == "monte-carlo"
    z = abs(d.mean()) / (np.sqrt(np.sum(d**2)) / len(d))
    assert p[0] == pytest.approx(2 * sps.norm.sf(z), abs=0.01)


def test_duplicate_columns_are_tested_once_with_identical_results():
    d = np.random.default_rng(8).normal(0.05, 1, size=(400, 3))
    d[5, 1] = np.nan
    wide = d[:, [0, 1, 0, 2, 1]]
    together = stats.paired_test(wide, n_resamples=500)
    np.testing.assert_array_equal(together.p_value[[0, 1]], together.p_value[[2, 4]])
    alone = stats.paired_test(d, n_resamples=500)
    np.testing.assert_allclose(together.p_value[[0, 1, 3]], alone.p_value)
    assert together.n[1] == 399 and list(together.method) == list(alone.method[[0, 1, 0, 2, 1]])
