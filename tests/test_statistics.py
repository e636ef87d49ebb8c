"""Statistics a reviewer accepts: one validated option set on every surface, every correction
equal to statsmodels, d_z with its interval equal to a hand computation, power and the minimum
detectable effect equal to statsmodels' TTestPower, a gate that states what it can detect and
refuses a power it lacks, Tukey HSD equal to statsmodels, and the slice interaction test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multicomp import pairwise_tukeyhsd
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

from heta_notebook import (
    compare,
    compare_benchmarks,
    min_detectable_effect,
    power,
    queries_needed,
)
from heta_notebook.analysis._effects import effect_sizes
from heta_notebook.analysis._options import adjust
from heta_notebook.analysis._tukey import grouping_letters
from heta_notebook.cli import main
from heta_notebook.testing._gates import check_regression
from tests._compare_helpers import scored_report

RNG = np.random.default_rng(39)
SYSTEMS = ("base", "x", "y", "z")


def _values(n: int, shift: float, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(np.clip(rng.normal(0.5 + shift, 0.2, n), 0, 1).round(4))


def _suite() -> list:
    """4 systems × 2 benchmarks (30 and 24 queries), two scores each."""
    out = []
    for b, (name, n) in enumerate((("one", 30), ("two", 24))):
        for k, system in enumerate(SYSTEMS):
            scores = {
                "s": _values(n, 0.04 * k, 10 * b + k),
                "r": _values(n, -0.03 * k, 100 + 10 * b + k),
            }
            out.append(scored_report(system, scores, benchmark=(name, "1", "test")))
    return out


def test_compare_benchmarks_t_test_with_bh_equals_scipy_then_statsmodels_cell_by_cell():
    reports = _suite()
    bench = compare_benchmarks(reports, baseline="base", test="t-test", correction="bh")
    for score in ("s", "r"):
        sig = bench.significance(score)
        for name in ("one", "two"):
            rows = sig[sig["benchmark"] == name].set_index("variant")
            values = {r.label: r for r in reports if r.benchmark.name == name}
            base = np.array([c.score(score).value for c in values["base"].case_results])
            raw = []
            for system in SYSTEMS[1:]:
                other = np.array([c.score(score).value for c in values[system].case_results])
                raw.append(sps.ttest_rel(other, base).pvalue)
            expected = multipletests(raw, method="fdr_bh")[1]
            ours = rows.loc[[f"{s} · bm25" for s in SYSTEMS[1:]]]
            np.testing.assert_allclose(ours["p_value"], raw, rtol=1e-10)
            np.testing.assert_allclose(ours["p_adjusted"], expected, rtol=1e-10)
            assert set(ours["correction"]) == {"bh"} and set(ours["test"]) == {"t-test"}
    latex = bench.to_latex(["s"])
    assert "paired t-test" in latex and "Benjamini" in latex


@pytest.mark.parametrize(
    ("ours", "theirs"), [("holm", "holm"), ("bh", "fdr_bh"), ("bonferroni", "bonferroni")]
)
def test_every_correction_equals_statsmodels_with_nan_left_out(ours, theirs):
    p = RNG.uniform(0, 0.2, 40)
    p[[3, 17]] = np.nan
    labels = np.array(["a", "b"] * 20)
    got = adjust(p, labels, ours)
    for label in ("a", "b"):
        mask = (labels == label) & ~np.isnan(p)
        np.testing.assert_allclose(got[mask], multipletests(p[mask], method=theirs)[1])
    assert np.isnan(got[[3, 17]]).all()
    np.testing.assert_array_equal(adjust(p, None, "none"), p)


def test_misspelled_options_name_the_valid_ones():
    reports = _suite()[:4]
    with pytest.raises(
        ValueError, match=r"correction must be one of holm, bh.*did you mean 'holm'"
    ):
        compare(reports, correction="hlm")
    with pytest.raises(TypeError, match=r"unknown option 'tset' \(did you mean 'test'\?\)"):
        compare(reports, tset="t-test")
    with pytest.raises(ValueError, match=r"test must be one of .*did you mean 't-test'"):
        compare_benchmarks(_suite(), test="t-tset")
    with pytest.raises(ValueError, match=r"alternative must be one of two-sided, greater, less"):
        compare(reports, alternative="bigger")
    with pytest.raises(TypeError, match=r"unknown option 'decimal'.*decimals"):
        compare(reports).to_latex(decimal=2)
    c = compare(reports, test="sign-flip")  # the alias of the permutation test
    assert c.test == "permutation"


def test_alternative_and_the_bootstrap_test():
    reports = _suite()[:4]
    one = compare(reports, baseline="base", test="t-test", alternative="greater").significance()
    row = one[(one["score"] == "s") & (one["variant"] == "z · bm25")].iloc[0]
    a = np.array([c.score("s").value for c in reports[0].case_results])
    b = np.array([c.score("s").value for c in reports[3].case_results])
    assert row["p_value"] == pytest.approx(sps.ttest_rel(b, a, alternative="greater").pvalue)
    boot = compare(reports, baseline="base", test="bootstrap", n_resamples=4000).significance()
    t = compare(reports, baseline="base", test="t-test").significance()
    assert ((boot["p_value"] > 0) & (boot["p_value"] <= 1)).all()
    # on near-normal differences the bootstrap and t p-values agree in order of magnitude
    close = np.abs(np.log10(boot["p_value"].clip(1e-4)) - np.log10(t["p_value"].clip(1e-4)))
    assert (close < 0.6).all()


def _hand_d_z_interval(d: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """d_z and its noncentral-t interval by plain bisection (no library root finder)."""
    n = len(d)
    dz = d.mean() / d.std(ddof=1)
    t = dz * math.sqrt(n)

    def bisect(target: float) -> float:
        lo, hi = t - 20, t + 20  # nct.cdf(t; λ) decreases in λ
        for _ in range(200):
            mid = (lo + hi) / 2
            if sps.nct.cdf(t, n - 1, mid) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2 / math.sqrt(n)

    alpha = 1 - confidence
    return dz, bisect(1 - alpha / 2), bisect(alpha / 2)


def test_every_paired_row_carries_d_z_with_an_interval_equal_to_a_hand_computation():
    reports = _suite()[:4]
    sig = compare(reports, baseline="base", confidence=0.9).significance()
    for _, row in sig.iterrows():
        label = row["variant"].split(" · ")[0]
        a = np.array([c.score(row["score"]).value for c in reports[0].case_results])
        b = np.array(
            [c.score(row["score"]).value for c in reports[SYSTEMS.index(label)].case_results]
        )
        dz, low, high = _hand_d_z_interval(b - a, 0.9)
        assert row["d_z"] == pytest.approx(dz, rel=1e-12)
        assert row["d_z_low"] == pytest.approx(low, abs=1e-8)
        assert row["d_z_high"] == pytest.approx(high, abs=1e-8)
        assert row["d_z_low"] < row["d_z"] < row["d_z_high"]
    flat = effect_sizes(np.zeros((5, 1)))
    assert np.isnan(flat.d_z[0])  # no spread: no standardized effect


@pytest.mark.parametrize(
    ("n", "alpha", "target"), [(20, 0.05, 0.8), (198, 0.05, 0.8), (50, 0.01, 0.9)]
)
def test_power_and_minimum_detectable_effect_equal_statsmodels(n, alpha, target):
    sd = 0.12
    d = TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=target)
    assert min_detectable_effect(n, alpha, target, sd) == pytest.approx(d * sd, rel=1e-6)
    for effect in (0.1, 0.3, 0.5):
        assert power(effect, n, alpha) == pytest.approx(
            TTestPower().power(effect, n, alpha), abs=1e-9
        )
    needed = queries_needed(0.03, sd, alpha, target)
    assert power(0.03, needed, alpha, sd) >= target > power(0.03, needed - 1, alpha, sd)


def _gate_reports(n: int, drop: float, tmp_path):
    base = _values(n, 0.0, 1)
    new = [max(0.0, v - drop + 0.05 * np.sin(i)) for i, v in enumerate(base)]
    old_r = scored_report("old", {"beir_ndcg@10": base}).save(tmp_path / f"old{n}.json")
    new_r = scored_report("new", {"beir_ndcg@10": new}).save(tmp_path / f"new{n}.json")
    return old_r, new_r


def test_the_gate_states_its_minimum_detectable_drop(tmp_path):
    old, new = _gate_reports(40, 0.0, tmp_path)
    result = check_regression(new, old, write_page=False, test="t-test")
    line = next(n for n in result.notes if n.startswith("at n = 40 and α = 0.05"))
    mde = float(line.split("drops ≥ ")[1].split()[0])
    sd = float(line.split("observed sd ")[1].split()[0])
    d = TTestPower().solve_power(effect_size=None, nobs=40, alpha=0.05, power=0.8)
    assert mde == pytest.approx(d * sd, abs=2e-3)
    assert "this gate detects drops ≥" in result.message()


def test_a_gate_with_min_power_on_too_few_queries_exits_2_saying_how_many_it_needs(
    tmp_path, capsys
):
    old, new = _gate_reports(12, 0.01, tmp_path)
    argv = ["gate", str(new), "--baseline", str(old), "--page-dir", str(tmp_path)]
    assert main([*argv, "--min-power", "0.8", "--detect", "0.01"]) == 2
    err = capsys.readouterr().err
    assert "at n = 12 this gate has" in err and "needs about" in err
    needed = int(err.split("needs about ")[1].split()[0])
    assert needed > 12
    big, bignew = _gate_reports(400, 0.0, tmp_path)  # enough queries: no refusal
    assert main(["gate", str(bignew), "--baseline", str(big), "--page-dir", str(tmp_path),
                 "--min-power", "0.8", "--detect", "0.05"]) in (0, 1)  # fmt: skip
    assert "this gate detects drops" in capsys.readouterr().out
    with pytest.raises(Exception, match="min_power needs the drop to guard"):
        check_regression(new, old, write_page=False, min_power=0.8)


def test_tukey_hsd_equals_statsmodels_and_letters_group_the_systems():
    reports = _suite()[:4]
    c = compare(reports)
    values = c.values("s").dropna()
    ours = c.tukey("s")
    stacked = np.concatenate([values[col].to_numpy() for col in values.columns])
    groups = np.repeat(values.columns.to_numpy(), len(values))
    theirs = pairwise_tukeyhsd(stacked, groups)
    table = theirs.summary().data[1:]
    by_pair = {(r[0], r[1]): r for r in table}
    for r in ours.itertuples():
        key = (r.group1, r.group2) if (r.group1, r.group2) in by_pair else (r.group2, r.group1)
        sign = 1 if key == (r.group1, r.group2) else -1
        theirs_row = by_pair[key]
        assert sign * r.meandiff == pytest.approx(theirs_row[2], abs=1e-4)
        assert r.reject == theirs_row[6]
    np.testing.assert_allclose(sorted(ours["p_adj"]), sorted(theirs.pvalues), rtol=1e-6, atol=1e-9)
    letters = grouping_letters({"a": 3, "b": 2, "c": 1}, [("a", "c")])
    assert letters == {"a": "a", "b": "ab", "c": "b"}
    md = c.to_markdown(["s"], markers="tukey")
    assert "Tukey HSD" in md and "per-query pairing is ignored" in md


def test_slice_interaction_is_tested_and_stated():
    n = 40
    base = [0.5] * n
    # b gains 0.2 on the first half's slice only: the difference depends on the slice
    gain = [0.7 + 0.01 * (i % 3) if i < n // 2 else 0.5 + 0.01 * (i % 3) for i in range(n)]
    a = scored_report("a", {"s": base})
    b = scored_report("b", {"s": gain})
    c = compare([a, b], baseline="a")
    half = lambda case: "first" if int(case.case_id[1:]) < n // 2 else "second"  # noqa: E731
    table = c.interaction("s", by=half)
    row = table.iloc[0]
    d = np.array(gain) - np.array(base)
    expected = sps.f_oneway(d[: n // 2], d[n // 2 :]).pvalue
    assert row["p_value"] == pytest.approx(expected) and row["p_value"] < 1e-6
    from heta_notebook.analysis._interaction import interaction_line

    assert "depends on" in interaction_line(row) and "ANOVA" in interaction_line(row)
    per = c.summary(by=half)
    assert set(per["slice"]) == {"first", "second"}
