"""The tests IR papers report: paired t-test, Wilcoxon signed-rank and Holm, checked against
scipy and statsmodels on paired samples with ties and zero differences, and in ``compare``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from heta_notebook.analysis import _stats as stats
from heta_notebook.analysis._compare import compare
from tests._compare_helpers import scored_report


def _ir_like_pair(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two systems' per-query scores on a coarse grid (0, 0.25, ..., 1): many queries score
    the same under both (zero differences) and many |differences| tie."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, n) / 4
    b = np.clip(a + rng.choice([-0.25, 0.0, 0.0, 0.25, 0.5], n), 0, 1)
    return a, b


# sizes cover every null distribution of the Wilcoxon test: all 2^n sign patterns (n <= 13,
# ties or zeros), the normal approximation below and above scipy's exact limit of 50 pairs
@pytest.mark.parametrize("n", [6, 13, 30, 51, 400])
def test_t_test_and_wilcoxon_equal_scipy_with_ties_and_zero_differences(n):
    a, b = _ir_like_pair(n, seed=n)
    d = b - a
    assert (d == 0).any() and len(np.unique(np.abs(d[d != 0]))) < (d != 0).sum()  # ties, zeros
    result_t = stats.paired_test(d, test="t-test", n_resamples=500)
    assert result_t.p_value[0] == pytest.approx(sps.ttest_rel(b, a).pvalue, rel=1e-12)
    assert result_t.method[0] == "t-distribution"
    result_w = stats.paired_test(d, test="wilcoxon", n_resamples=500)
    assert result_w.p_value[0] == pytest.approx(sps.wilcoxon(b, a).pvalue, rel=1e-12)
    expected = "exact-permutation" if n <= 13 else "normal-approx"
    assert result_w.method[0] == expected
    assert result_w.n[0] == n  # zero differences are pairs, though Wilcoxon drops them


def test_wilcoxon_without_ties_uses_the_exact_distribution_like_scipy():
    d = np.random.default_rng(4).normal(0.3, 1.0, 20)  # continuous: no ties, no zeros
    p, method = stats.paired_wilcoxon_test(d)
    assert method[0] == "exact"
    assert p[0] == pytest.approx(sps.wilcoxon(d).pvalue, rel=1e-12)


@pytest.mark.parametrize("zero_method", ["pratt", "zsplit"])
def test_other_zero_rules_equal_scipy(zero_method):
    a, b = _ir_like_pair(80, seed=2)
    p, _ = stats.paired_wilcoxon_test(b - a, zero_method=zero_method)
    assert p[0] == pytest.approx(sps.wilcoxon(b, a, zero_method=zero_method).pvalue, rel=1e-12)
    with pytest.raises(ValueError, match="zero_method must be wilcox, pratt or zsplit"):
        stats.paired_wilcoxon_test(b - a, zero_method="drop")


@pytest.mark.parametrize("test", ["t-test", "wilcoxon"])
def test_columns_tested_together_equal_each_alone(test):
    """Many scores × pairs at once (different sizes, NaN pairs, every Wilcoxon regime): each
    column's p is the one scipy gives for that column alone."""
    d = np.column_stack([np.subtract(*_ir_like_pair(90, seed=s)[::-1]) for s in range(4)])
    d[:80, 1] = np.nan  # 10 pairs left: enumerated sign patterns
    d[:60, 2] = np.nan  # 30 pairs left: normal approximation
    d[:, 3] = np.random.default_rng(1).normal(0.1, 1, 90)  # no ties
    d[:70, 3] = np.nan  # 20 pairs, no ties: exact
    together = stats.paired_test(d, test=test, n_resamples=500)
    scipy_test = sps.ttest_1samp if test == "t-test" else sps.wilcoxon
    for j in range(d.shape[1]):
        x = d[~np.isnan(d[:, j]), j]
        reference = scipy_test(x, 0.0).pvalue if test == "t-test" else scipy_test(x).pvalue
        assert together.p_value[j] == pytest.approx(reference, rel=1e-12)
        alone = stats.paired_test(x, test=test, n_resamples=500)
        assert together.p_value[j] == pytest.approx(alone.p_value[0], rel=1e-12)
    if test == "wilcoxon":
        assert list(together.method) == [
            "normal-approx",
            "exact-permutation",
            "normal-approx",
            "exact",
        ]


@pytest.mark.parametrize("test", ["permutation", "t-test", "wilcoxon"])
def test_no_difference_at_all_is_p_one_under_every_test(test):
    d = np.zeros((60, 2))
    d[:3, 1] = np.nan
    result = stats.paired_test(d, test=test, n_resamples=500)
    assert result.p_value.tolist() == [1.0, 1.0]  # scipy's t-test / Wilcoxon give NaN here
    assert result.n.tolist() == [60, 57] and result.ties.tolist() == [60, 57]


def test_unknown_test_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="test must be one of permutation, t-test, wilcoxon"):
        stats.paired_test(np.ones(5), test="sign")
    with pytest.raises(ValueError, match="got 'anova'"):
        compare([scored_report("a", {"s": [0.1, 0.2]})], test="anova")


def test_holm_equals_statsmodels_with_tied_p_values_and_nan():
    p = np.array([0.01, 0.04, 0.04, 0.03, 0.2, 0.005, 0.04, np.nan, 0.5, 1.0, 0.0004])
    ok = ~np.isnan(p)
    expected = multipletests(p[ok], method="holm")[1]
    adjusted = stats.holm(p)
    np.testing.assert_allclose(adjusted[ok], expected, rtol=0, atol=1e-15)
    assert np.isnan(adjusted[~ok]).all()
    random = np.random.default_rng(0).uniform(0, 0.2, 135).round(3)  # many ties
    np.testing.assert_allclose(stats.holm(random), multipletests(random, method="holm")[1])


def test_holm_within_families_equals_statsmodels_per_family():
    rng = np.random.default_rng(5)
    p = rng.uniform(0, 0.1, 12).round(2)
    families = np.repeat(["ndcg@10", "recall@10", "mrr@10"], 4)
    adjusted = stats.holm(p, families)
    for name in np.unique(families):
        mask = families == name
        np.testing.assert_allclose(adjusted[mask], multipletests(p[mask], method="holm")[1])
    with pytest.raises(ValueError, match="families must label every p-value"):
        stats.holm(p, families[:3])


# --------------------------------------------------------------------------- compare


def _reports(n_scores: int = 3, modes=("bm25", "dense", "hybrid"), n: int = 40):
    """Three recipes × three modes on the same cases; scores on a coarse grid (ties, zeros)."""
    rng = np.random.default_rng(8)
    base = {f"s{i}@10": rng.integers(0, 5, n) / 4 for i in range(n_scores)}
    reports = [scored_report("base", {k: v.tolist() for k, v in base.items()}, modes=modes)]
    for label, shift in (("better", 0.25), ("same", 0.0)):
        moved = {
            k: np.clip(v + rng.choice([-0.25, 0, 0, shift, shift], n), 0, 1).tolist()
            for k, v in base.items()
        }
        reports.append(scored_report(label, moved, modes=modes))
    return reports


@pytest.mark.parametrize("test", ["permutation", "t-test", "wilcoxon"])
def test_compare_runs_each_test_on_the_paired_cases_and_names_it(test):
    reports = _reports()
    c = compare(reports, test=test, n_resamples=2000)
    assert c.test == test and c.family == "score"
    sig = c.significance()
    assert set(sig["test"]) == {test}
    for row in sig.itertuples(index=False):
        pair = c.values(row.score)[[row.baseline, row.variant]].dropna()
        x, y = pair[row.baseline].to_numpy(), pair[row.variant].to_numpy()
        if test == "t-test":
            assert row.p_value == pytest.approx(sps.ttest_rel(y, x).pvalue, rel=1e-9)
        elif test == "wilcoxon":
            assert row.p_value == pytest.approx(sps.wilcoxon(y, x).pvalue, rel=1e-9)
        assert row.delta == pytest.approx(np.mean(y - x))
        assert row.ci_low <= row.delta <= row.ci_high  # the bootstrap CI stays beside the test
    name = stats.TEST_NAMES[test]
    assert c.test_note("s0@10") == f"{name}, Holm over 6 pairs of s0@10"
    assert all(line.endswith(f", {name}, Holm over 6 pairs)") for line in c.headline("s0@10"))
    assert f"  {name}, Holm over 6 pairs of s0@10" in repr(c)
    assert name.removeprefix("paired ") in c.to_html()
    # the choice survives the fluent variations
    assert c.pivot().test == test and c.select(scores=["s1@10"]).test == test


def test_default_family_is_the_pairs_of_one_score_not_scores_times_pairs():
    c = compare(_reports(n_scores=3), test="wilcoxon")
    sig = c.significance()
    assert len(sig) == 3 * 6  # 3 scores × (2 recipes × 3 modes)
    assert (sig["family_size"] == 6).all() and len(c.pairs()) == 6
    assert sig.groupby("family").size().to_dict() == {"s0@10": 6, "s1@10": 6, "s2@10": 6}
    for _, rows in sig.groupby("score"):
        expected = multipletests(rows["p_value"].to_numpy(), method="holm")[1]
        np.testing.assert_allclose(rows["p_holm"], expected)
    every = compare(_reports(n_scores=3), test="wilcoxon", family="all")
    table = every.significance()
    assert (table["family_size"] == 18).all() and set(table["family"]) == {"all"}
    expected = multipletests(table["p_value"].to_numpy(), method="holm")[1]
    np.testing.assert_allclose(table["p_holm"], expected)
    note = "Wilcoxon signed-rank test, Holm over 18 tests of 3 scores × 6 pairs"
    assert every.test_note() == note
    assert "Holm-corrected across 18 comparisons (all scores together)" in every.to_html()
    assert "Holm-corrected across the 6 comparisons of each score" in c.to_html()


def test_slices_join_their_scores_family_under_every_test():
    reports = _reports(n_scores=2, modes=("bm25",), n=40)
    halves = {f"c{i:03d}": "first" if i < 20 else "second" for i in range(40)}
    c = compare(reports, by=halves, test="t-test")
    sig = c.significance()
    assert len(sig) == 2 * 2 * 2  # slices × scores × pairs
    assert (sig["family_size"] == 4).all()  # one score: 2 pairs × 2 slices
    for row in sig.itertuples(index=False):
        pair = c.values(row.score)[[row.baseline, row.variant]]
        pair = pair[[halves[i] == row.slice for i in pair.index]].dropna()
        reference = sps.ttest_rel(pair[row.variant], pair[row.baseline]).pvalue
        assert row.p_value == pytest.approx(reference, rel=1e-9)
    for _, rows in sig.groupby("score"):
        np.testing.assert_allclose(rows["p_holm"], stats.holm(rows["p_value"].to_numpy()))
    assert c.test_note("s0@10", by=halves) == "paired t-test, Holm over 4 tests of s0@10 " + (
        "(2 pairs × 2 slices)"
    )
    assert "paired t-test, Holm over 4 tests of s0@10" in c.to_html()  # the slice section


@pytest.mark.parametrize("test", ["t-test", "wilcoxon"])
def test_the_ci_says_how_it_was_obtained_under_every_test(test):
    reports = _reports(n_scores=1, modes=("bm25",))
    resampled = compare(reports, test=test, n_resamples=500)
    assert set(resampled.significance()["ci_method"]) == {"bootstrap"}
    assert "bootstrap 95% CI (500 resamples)" in resampled.to_html()
    forced = compare(reports, test=test, method="asymptotic")
    sig = forced.significance()
    assert set(sig["ci_method"]) == {"asymptotic"} and set(sig["test"]) == {test}
    assert "bootstrap 95% CI (asymptotic forms)" in forced.to_html()
    # the p-value is the chosen test's either way; only the CI's method changed
    np.testing.assert_array_equal(sig["p_value"], resampled.significance()["p_value"])
