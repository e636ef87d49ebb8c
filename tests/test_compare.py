"""compare(): inputs, alignment and missing cases, deltas, significance, W/T/L, manifests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from heta_notebook import ReportStore
from heta_notebook.analysis._compare import Comparison, compare
from heta_notebook.analysis._compare_frames import flatten
from heta_notebook.schema import EvaluationReport
from tests._compare_helpers import scored_report

HETA_REPORT = Path(__file__).parent / "fixtures" / "heta" / "report.json"


def _pair(shift: float = 0.0, n: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.2, 0.7, size=n)
    b = np.clip(a + shift + (rng.normal(0, 0.02, n) if shift else 0), 0, 1)
    return scored_report(
        "base", {"ndcg@10": list(a), "recall@10": list(a)}, recipe={"chunking": {"size": 100}}
    ), scored_report(
        "new", {"ndcg@10": list(b), "recall@10": list(a)}, recipe={"chunking": {"size": "document"}}
    )


def test_identical_reports_show_no_significance():
    a, _ = _pair()
    c = compare(
        [
            a,
            scored_report(
                "copy",
                {
                    "ndcg@10": [s.value for s in _scores(a, "ndcg@10")],
                    "recall@10": [s.value for s in _scores(a, "recall@10")],
                },
            ),
        ]
    )
    sig = c.significance()
    assert (sig["p_value"] == 1.0).all() and not sig["significant"].any()
    assert (sig["delta"] == 0).all() and (sig["ties"] == 60).all()


def _scores(report: EvaluationReport, name: str):
    return [r.score(name) for r in report.case_results]


def test_a_clear_shift_is_significant_and_delta_is_exact():
    a, b = _pair(shift=0.1)
    c = compare([a, b])
    row = c.significance().set_index("score").loc["ndcg@10"]
    expected = np.mean(
        [
            y.value - x.value
            for x, y in zip(_scores(a, "ndcg@10"), _scores(b, "ndcg@10"), strict=True)
        ]
    )
    assert row["delta"] == pytest.approx(expected)
    assert row["p_value"] < 0.001 and row["significant"]
    assert row["ci_low"] > 0.05 and row["ci_high"] < 0.15
    assert row["wins"] > 50 and row["wins"] + row["ties"] + row["losses"] == row["n_pairs"] == 60
    unchanged = c.significance().set_index("score").loc["recall@10"]
    assert unchanged["p_value"] == 1.0 and unchanged["ties"] == 60


def _holm_reference(p: np.ndarray) -> np.ndarray:
    """Holm by hand: sort, scale by (m - rank), running maximum, cap at 1."""
    order = np.argsort(p)
    m = len(p)
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(np.maximum.accumulate((m - np.arange(m)) * p[order]), 1)
    return adjusted


def test_holm_family_is_one_score_across_the_pairs_unless_all():
    a, b = _pair(shift=0.03, seed=3)
    third = scored_report("third", {"ndcg@10": [0.5] * 60, "recall@10": [0.4] * 60})
    c = compare([a, b, third])
    assert (c.test, c.family) == ("permutation", "score")
    sig = c.significance()
    assert len(sig) == 4  # 2 scores × 2 pairs: two families of 2, not one of 4
    assert sig["family_size"].tolist() == [2, 2, 2, 2]
    assert sig["family"].tolist() == ["ndcg@10", "ndcg@10", "recall@10", "recall@10"]
    for _, rows in sig.groupby("score"):
        np.testing.assert_allclose(rows["p_holm"], _holm_reference(rows["p_value"].to_numpy()))
    every = compare([a, b, third], family="all").significance()
    assert (every["family"] == "all").all() and (every["family_size"] == 4).all()
    np.testing.assert_allclose(every["p_holm"], _holm_reference(every["p_value"].to_numpy()))
    assert (every["p_holm"] >= sig["p_holm"]).all()  # a larger family never lowers a p
    narrower = compare([a, b, third], family="all").select(scores=["ndcg@10"]).significance()
    assert len(narrower) == 2 and (narrower["family_size"] == 2).all()
    with pytest.raises(ValueError, match="family must be one of score, all"):
        compare([a, b], family="everything")


def test_deltas_are_per_case_and_signed():
    a = scored_report("a", {"s": [0.1, 0.5, 0.9]})
    b = scored_report("b", {"s": [0.3, 0.5, 0.4]})
    d = compare([a, b]).deltas("s")
    assert list(d["case_id"]) == ["c000", "c001", "c002"]
    np.testing.assert_allclose(d["delta"], [0.2, 0.0, -0.5])
    assert set(d["baseline"]) == {"a · bm25"} and set(d["variant"]) == {"b · bm25"}


def test_missing_cases_are_reported_not_dropped():
    a = scored_report("a", {"s": [0.1, 0.2, 0.3, 0.4]})
    b = scored_report("b", {"s": [0.2, 0.3]}, case_ids=["c000", "c003"])
    c = compare([a, b])
    missing = c.missing_cases()
    assert list(missing["case_id"]) == ["c001", "c002"]
    assert set(missing["variant"]) == {"b · bm25"} and set(missing["status"]) == {"missing"}
    assert c.significance().iloc[0]["n_pairs"] == 2
    assert any("2 case(s) missing" in note for note in c.notes())
    assert "2 case(s) missing" in c._repr_html_()
    assert c.summary().set_index("variant").loc["b · bm25", "n_missing"] == 2


def test_skipped_scores_are_not_paired():
    a = scored_report("a", {"s": [0.1, None, 0.3]})
    b = scored_report("b", {"s": [0.2, 0.9, None]})
    sig = compare([a, b]).significance().iloc[0]
    assert sig["n_pairs"] == 1 and sig["delta"] == pytest.approx(0.1)


def test_modes_of_one_report_are_compared_with_the_first_mode():
    r = scored_report("only", {"s": [0.1, 0.2]}, modes=("bm25", "dense", "hybrid"))
    c = compare(r)
    assert [v.name for v in c.variants] == ["only · bm25", "only · dense", "only · hybrid"]
    assert [(a.mode, b.mode) for a, b in c.pairs()] == [("bm25", "dense"), ("bm25", "hybrid")]


def test_report_baseline_pairs_each_mode_with_the_same_mode():
    a = scored_report("a", {"s": [0.1, 0.2]}, modes=("bm25", "dense"))
    b = scored_report("b", {"s": [0.1, 0.3]}, modes=("bm25", "dense"))
    c = compare([a, b], baseline="b")
    assert [(x.name, y.name) for x, y in c.pairs()] == [
        ("b · bm25", "a · bm25"),
        ("b · dense", "a · dense"),
    ]
    single = c.with_baseline("a · dense")
    assert len(single.pairs()) == 3 and all(x.name == "a · dense" for x, _ in single.pairs())
    with pytest.raises(KeyError, match="neither a report label"):
        compare([a, b], baseline="nope")


def test_different_benchmarks_are_refused_with_names():
    a = scored_report("a", {"s": [0.1]})
    b = scored_report("b", {"s": [0.1]}, benchmark=("toy", "2", "test"))
    with pytest.raises(ValueError, match=r"'a' → toy:1:test; 'b' → toy:2:test.*allow_different"):
        compare([a, b])
    c = compare([a, b], allow_different_benchmarks=True)
    assert any("different benchmarks" in n for n in c.notes())


def test_inputs_dict_store_run_collection_paths(tmp_path):
    a, b = _pair()
    store = ReportStore(tmp_path / "store")
    store.save(a)
    store.save(b)
    assert set(compare(store, benchmark="toy").labels) == {"base", "new"}
    assert set(compare(store.load_all()).labels) == {"base", "new"}
    assert compare({"left": a, "right": b}).labels == ["left", "right"]

    class Runs:  # RunCollection's shape: .reports label → report
        reports = {"x": a, "y": b}

    assert compare(Runs()).labels == ["x", "y"]
    path = a.save(tmp_path / "a.json")
    assert compare([path, b]).labels == ["base", "new"]
    with pytest.raises(TypeError, match="only apply"):
        compare([a, b], benchmark="toy")


def test_real_run_collection_is_accepted():
    result = pytest.importorskip("heta_notebook.runner._result")
    a, b = _pair()

    class Result:  # BenchmarkRunResult holds .report
        def __init__(self, report):
            self.report = report

    runs = result.RunCollection(results={"one": Result(a), "two": Result(b)})
    assert compare(runs).labels == ["one", "two"]


def test_heta_framework_reports_compare_with_unique_labels():
    report = EvaluationReport.load(HETA_REPORT)
    data = json.loads(HETA_REPORT.read_text())
    data["report_id"] = "second-run"
    c = compare([report, EvaluationReport.load(data)])
    assert len(set(c.labels)) == 2 and all(label.startswith(report.label) for label in c.labels)
    assert "beir_ndcg@10" in c.score_names and c.primary_score == "beir_ndcg@10"
    assert not c.significance()["significant"].any()
    assert len(c.headline()) == len(c.pairs()) == 2
    assert c.manifest_diff().empty
    assert "heta-cranfield-mini" in c._repr_html_()
    assert c.explore().state["n_cases"] == 8  # no metadata["expected"]: degrades, no crash


def test_manifest_diff_and_headline():
    a, b = _pair(shift=0.1)
    c = compare([a, b])
    diff = c.manifest_diff()
    assert list(diff.index) == ["chunking.size"] and list(diff.loc["chunking.size"]) == [
        100,
        "document",
    ]
    [line] = c.headline()  # named by labels; what changed is the pair's change_description
    assert line.startswith("base → new: ndcg@10 +0.1")
    [(a_, b_)] = c.pairs()
    assert c.change_description(a_, b_) == "chunking.size 100 → document"
    assert line.endswith("(p<0.001, sign-flip permutation test, Holm over 1 pair)")


def test_flatten_nested_manifests():
    flat = flatten({"a": {"b": 1, "c": [1, 2]}, "steps": [{"name": "x"}, {"name": "y"}], "e": {}})
    assert flat == {"a.b": 1, "a.c": [1, 2], "steps[0].name": "x", "steps[1].name": "y", "e": {}}


def test_verdict_flips_and_evidence_changes():
    a = scored_report("a", {"judge": [1.0, 0.0, 1.0]}, passed={"judge": [True, False, True]})
    b = scored_report("b", {"judge": [0.0, 1.0, 1.0]}, passed={"judge": [False, True, True]})
    flips = compare([a, b]).verdict_flips("judge", "a · bm25", "b · bm25")
    assert list(flips["case_id"]) == ["c000", "c001"]
    assert list(flips["passed_a"]) == [True, False]


def test_text_scores_are_noted_not_compared():
    a = scored_report("a", {"s": [0.1, 0.2]})
    c = compare([a, a.model_copy(update={"metadata": {"label": "b"}})])
    assert c.labels == ["a", "b"]
    assert isinstance(c, Comparison) and c.score_names == ["s"]


def test_summary_matches_the_aggregation_module():
    from heta_notebook.evaluators._aggregation import summarize
    from tests._display_helpers import make_report

    report = make_report(30, seed=5)
    summary = compare(report).summary().set_index(["query_mode", "score"])
    reference = summarize(report.case_results)
    assert len(reference) == len(summary)
    for key, agg in reference.items():
        mode, name = key.split(".", 1)
        row = summary.loc[(mode, name)]
        assert row["n"] == agg.n_scored and row["n_skipped"] == agg.n_skipped
        assert row["n_error"] == agg.n_error
        assert row["mean"] == pytest.approx(agg.value, abs=1e-12)
        if agg.ci_low is not None:
            assert row["ci_low"] == pytest.approx(agg.ci_low, abs=1e-9)
            assert row["ci_high"] == pytest.approx(agg.ci_high, abs=1e-9)
        if agg.pass_rate is not None:
            assert row["pass_rate"] == pytest.approx(agg.pass_rate)


def test_significance_of_all_pairs():
    a, b = _pair(shift=0.1)
    c = compare([a, b, scored_report("third", {"ndcg@10": [0.5] * 60, "recall@10": [0.4] * 60})])
    every = c.significance(all_pairs=True)
    assert len(every) == 2 * 3  # 2 scores × 3 pairs
    assert {("new · bm25", "third · bm25")} <= set(
        zip(every["baseline"], every["variant"], strict=True)
    )
