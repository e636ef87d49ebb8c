"""Cases pair only within one benchmark: overlapping case ids of two datasets never pair."""

from __future__ import annotations

import numpy as np
import pytest

from heta_notebook.analysis._compare import compare
from heta_notebook.testing import GateInputError, check_regression
from tests._compare_helpers import scored_report

IDS = [str(i) for i in range(1, 31)]  # both datasets number their queries 1..30


def _two_benchmarks():
    rng = np.random.default_rng(3)
    low, high = rng.uniform(0.0, 0.2, 30), rng.uniform(0.8, 1.0, 30)
    a = scored_report("a", {"ndcg@10": list(low)}, case_ids=IDS, benchmark=("cran", "1", "test"))
    b = scored_report("b", {"ndcg@10": list(high)}, case_ids=IDS, benchmark=("other", "1", "test"))
    return a, b


def test_allow_different_benchmarks_puts_them_side_by_side_unpaired():
    a, b = _two_benchmarks()
    with pytest.raises(ValueError, match="compare_benchmarks"):
        compare([a, b])
    c = compare([a, b], allow_different_benchmarks=True)
    assert c.pairs() == []  # b's baseline ran on another benchmark: nothing to test
    assert c.significance().empty
    assert c.significance(all_pairs=True).empty
    with pytest.raises(ValueError, match="different benchmarks"):
        c.deltas("ndcg@10", "a · bm25", "b · bm25")
    with pytest.raises(ValueError, match="different benchmarks"):
        c.with_baseline("a · bm25").deltas("ndcg@10", "a · bm25", "b · bm25")
    # every case keeps its own row: 30 + 30 rows, each variant scored on its own 30
    values = c.values("ndcg@10")
    assert len(values) == 60 and values.notna().sum().tolist() == [30, 30]
    assert not (values.notna().all(axis=1)).any()  # no row holds a value of both
    summary = c.summary().set_index("variant")
    assert summary.loc["a · bm25", "mean"] < 0.2 < 0.8 < summary.loc["b · bm25", "mean"]
    assert c.missing_cases().empty  # another benchmark's cases are not "missing"
    assert any("unpaired" in note for note in c.notes())


def test_same_benchmark_still_pairs_next_to_another_one():
    a, b = _two_benchmarks()
    a2 = scored_report("a2", {"ndcg@10": [0.5] * 30}, case_ids=IDS, benchmark=("cran", "1", "test"))
    c = compare([a, b, a2], allow_different_benchmarks=True)
    assert [(x.report, y.report) for x, y in c.pairs()] == [("a", "a2")]
    sig = c.significance(all_pairs=True)
    assert len(sig) == 1 and sig.loc[0, "n_pairs"] == 30
    assert set(c.deltas("ndcg@10", b="a2 · bm25")["baseline"]) == {"a · bm25"}


def test_gate_refuses_a_baseline_of_another_benchmark(tmp_path):
    a, b = _two_benchmarks()
    with pytest.raises(GateInputError, match="different benchmarks"):
        check_regression(b, a, scores=["ndcg@10"], output_dir=tmp_path, write_page=False)


def test_the_explorer_and_evidence_changes_never_pair_across_benchmarks():
    a, b = _two_benchmarks()
    a2 = scored_report("a2", {"ndcg@10": [0.5] * 30}, case_ids=IDS, benchmark=("cran", "1", "test"))
    c = compare([a, b, a2], allow_different_benchmarks=True, baseline="b")
    explorer = c.explore()  # b has no partner: the explorer opens on a pair that pairs
    assert (explorer.a.report, explorer.b.report) == ("a", "a2")
    with pytest.raises(ValueError, match="different benchmarks"):
        explorer.set_pair("a · bm25", "b · bm25")
    with pytest.raises(ValueError, match="different benchmarks"):
        c.evidence_changes("a · bm25", "b · bm25")
