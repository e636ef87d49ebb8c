"""The asymptotic forms of the sign-flip test and the percentile bootstrap (large samples).

Each is checked against the Monte-Carlo version of the *same* procedure at n = 25,000 (a
realistic score difference, a skewed one, a sparse one where most differences are 0): they
must agree within a few Monte-Carlo standard errors. The "auto" rule must leave every column
below its thresholds on the exact / Monte-Carlo path, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from heta_notebook import compare
from heta_notebook.analysis import _stats as stats
from tests._compare_helpers import scored_report

N = 25_000
B = 5_000


def _differences(n: int = N, seed: int = 3) -> np.ndarray:
    """Columns: clipped nDCG-like scores, a skewed (exponential) one, a sparse ±1 one."""
    rng = np.random.default_rng(seed)
    a = rng.beta(2, 3, n)
    b = np.clip(a + rng.normal(-0.002, 0.15, n), 0, 1)
    skewed = rng.exponential(0.2, n) - 0.2 + 0.002
    hits = rng.random(n) < 0.06  # 94 % of cases tie (a 0/1 hit changed on 6 %)
    sparse = np.where(hits, rng.choice([-1.0, 1.0], n, p=[0.47, 0.53]), 0.0)
    return np.column_stack([b - a, skewed, sparse])


@pytest.mark.slow
def test_asymptotic_p_and_ci_agree_with_monte_carlo_within_its_error():
    d = _differences()
    assert stats.use_asymptotic(d).all()  # every column qualifies under "auto"
    auto = stats.paired_test(d)
    mc = stats.paired_test(d, n_resamples=B, method="monte-carlo")
    assert list(auto.method) == ["asymptotic"] * 3
    assert set(mc.method) <= {"monte-carlo", "normal-tail"}
    for j in range(d.shape[1]):
        q = min(mc.p_value[j] / 2, 0.5)
        se_p = 2 * np.sqrt(max(q * (1 - q), 1 / B) / B)
        assert abs(auto.p_value[j] - mc.p_value[j]) < 4 * se_p + 1e-4, j
        # a percentile's Monte-Carlo sd: sqrt(α(1-α)/B) / density of the mean at it
        sd_mean = d[:, j].std() / np.sqrt(N)
        se_q = np.sqrt(0.025 * 0.975 / B) / (sps.norm.pdf(1.96) / sd_mean)
        assert abs(auto.ci_low[j] - mc.ci_low[j]) < 4 * se_q, j
        assert abs(auto.ci_high[j] - mc.ci_high[j]) < 4 * se_q, j
    assert auto.p_value.min() > 0.001 and auto.p_value.max() < 0.9  # informative, not 0 or 1
    np.testing.assert_array_equal(auto.mean_diff, mc.mean_diff)
    np.testing.assert_array_equal(auto.wins, mc.wins)


def test_asymptotic_p_is_the_normal_tail_of_the_sign_flip_distribution():
    d = _differences(n=N, seed=3)
    p, method = stats.paired_permutation_test(d)
    assert list(method) == ["asymptotic"] * 3
    z = np.abs(d.mean(axis=0)) / (np.sqrt(np.sum(d**2, axis=0)) / N)
    np.testing.assert_allclose(p, 2 * sps.norm.sf(z), rtol=1e-12)


def test_cornish_fisher_corrects_for_skewness_where_it_matters():
    """Forced on a small, very skewed sample: the skewness term moves both ends the way the
    bootstrap distribution leans, and closer to it than the symmetric normal."""
    x = np.random.default_rng(2).exponential(1.0, 60)
    low, high = stats.paired_bootstrap_ci(x, method="asymptotic")
    mc_low, mc_high = stats.paired_bootstrap_ci(x, n_resamples=100_000, method="monte-carlo")
    se = x.std() / np.sqrt(len(x))
    normal_low, normal_high = x.mean() - 1.959964 * se, x.mean() + 1.959964 * se
    assert normal_low < low[0] and normal_high < high[0]  # right skew: both ends move up
    assert abs(low[0] - mc_low[0]) < abs(normal_low - mc_low[0])
    assert abs(high[0] - mc_high[0]) < abs(normal_high - mc_high[0])


def test_auto_falls_back_when_the_sum_rests_on_few_cases():
    rng = np.random.default_rng(4)
    d = np.zeros((N, 2))
    d[rng.choice(N, 300, replace=False), 0] = rng.normal(0.1, 1, 300)  # 300 non-zero: n_eff < 1000
    d[:, 1] = rng.normal(0, 0.01, N)
    d[7, 1] = 50.0  # one case dominates the sum of squares
    assert (stats.effective_n(d) < stats.ASYMPTOTIC_MIN_EFFECTIVE_N).all()
    assert not stats.use_asymptotic(d).any()
    auto = stats.paired_test(d, n_resamples=300)
    forced = stats.paired_test(d, n_resamples=300, method="monte-carlo")
    assert "asymptotic" not in set(auto.method)
    np.testing.assert_array_equal(auto.p_value, forced.p_value)
    np.testing.assert_array_equal(auto.ci_low, forced.ci_low)


def test_auto_is_bit_identical_to_monte_carlo_below_the_size_threshold():
    d = _differences(n=3_000, seed=5)
    d[::11, 1] = np.nan  # another group of paired cases
    auto = stats.paired_test(d, n_resamples=2_000)
    forced = stats.paired_test(d, n_resamples=2_000, method="monte-carlo")
    for field in ("p_value", "ci_low", "ci_high", "method"):
        np.testing.assert_array_equal(getattr(auto, field), getattr(forced, field))
    assert "asymptotic" not in set(auto.method)


def test_columns_of_one_group_decide_one_by_one():
    d = _differences(n=N, seed=6)
    d[:, 2] = 0.0
    d[:40, 2] = 1.0  # 40 non-zero differences: this column alone falls back
    p, method = stats.paired_permutation_test(d, n_resamples=500)
    assert list(method[:2]) == ["asymptotic"] * 2 and method[2] in {"monte-carlo", "normal-tail"}
    alone, _ = stats.paired_permutation_test(d[:, :2])
    np.testing.assert_array_equal(p[:2], alone)


def test_columns_without_spread_get_their_point_mass():
    d = np.zeros((N, 2))
    d[:, 1] = 0.25  # every case gains the same
    result = stats.paired_test(d)
    assert list(result.method) == ["asymptotic"] * 2
    assert result.p_value[0] == 1.0 and result.ci_low[0] == result.ci_high[0] == 0.0
    assert result.p_value[1] < 1e-100
    assert result.ci_low[1] == result.ci_high[1] == pytest.approx(0.25)


def test_unknown_method_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="auto, monte-carlo, asymptotic"):
        stats.paired_test(np.ones(20), method="normal")
    with pytest.raises(ValueError, match="got 'bootstrap'"):
        compare([scored_report("a", {"s": [0.1, 0.2]})], method="bootstrap")


def test_compare_passes_the_method_to_every_test_and_keeps_it():
    values = np.random.default_rng(7).uniform(0, 1, 40)
    a = scored_report("a", {"s": values.tolist()})
    b = scored_report("b", {"s": np.clip(values + 0.05, 0, 1).tolist()})
    default = compare([a, b]).significance()
    assert set(default["p_method"]) <= {"monte-carlo", "normal-tail"}  # 40 cases: unchanged
    forced = compare([a, b], method="asymptotic")
    assert forced.significance()["p_method"].tolist() == ["asymptotic"]
    assert "bootstrap 95% CI (asymptotic forms)" in forced.to_html()  # the header says so
    assert "(10,000 resamples)" in compare([a, b]).to_html()
    assert forced.pivot().significance()["p_method"].tolist() == ["asymptotic"]
    same = compare([a, b], method="monte-carlo").significance()
    assert same["p_value"].tolist() == default["p_value"].tolist()
