"""Stages take the blame they earn: a rerank that demotes evidence from rank <= 3 (retrieve) to
rank > k is ``lost at stage rerank``, not ``beyond k``, in counts, the card, the explorer's
badge and the comparison's deltas."""

from __future__ import annotations

import pytest

from heta_notebook import BeirBenchmark, BeirRetrievalMetric, Stages, compare, run_benchmark
from tests._kb_helpers import cranfield
from tests._systems_helpers import ranked_ids

K = 10


def _candidates(text: str) -> list[str]:
    """BM25's top 10, then 40 more documents: what the retrieve stage hands the reranker."""
    top = ranked_ids(text)
    rest = [d.document_id for d in cranfield().documents[:60] if d.document_id not in top]
    return top + rest[:40]


def demoting(text: str) -> dict:
    """Retrieve 50; a (bad) rerank moves the first three to the bottom; keep the top k."""
    stages = Stages()
    retrieved = _candidates(text)
    stages.add("retrieve", retrieved)
    reranked = retrieved[3:] + retrieved[:3]
    stages.add("rerank", reranked)
    return stages.response(results=reranked[:K], answer=None)


def plain(text: str) -> list[str]:
    return _candidates(text)[:K]


@pytest.fixture(scope="module")
def runs():
    options = {"evaluators": [BeirRetrievalMetric("recall", K)], "limit": 25, "progress": False}
    bench = BeirBenchmark.cranfield()
    return (
        run_benchmark(benchmark=bench, recipe=plain, **options).report,
        run_benchmark(benchmark=bench, recipe=demoting, **options).report,
    )


def test_a_demoting_rerank_is_blamed_not_depth(runs) -> None:
    _, report = runs
    rows = report.misses(level="evidence")
    ranks = rows["stage_ranks"].dropna()
    demoted = [i for i, r in ranks.items() if r["retrieve"] is not None and r["retrieve"] <= 3]
    assert demoted  # the rule is exercised: evidence BM25 put in its top 3
    for i in demoted:
        row = rows.loc[i]
        assert row["rank"] > K and row["miss_class"] == "lost at stage" and row["stage"] == "rerank"
        assert row["rank"] == ranks[i]["rerank"] and row["rank_source"] == "stage:rerank"
    # nothing in the rerank's top k is blamed on it, and none of the demoted is "beyond k"
    others = rows.drop(index=demoted)
    assert not (others["miss_class"] == "lost at stage").any()
    counts = report.misses()
    lost = counts[counts["miss_class"] == "lost at stage rerank"]
    assert int(lost["count"].sum()) == len(demoted)


def test_card_badge_and_comparison_deltas_say_lost_at_stage_rerank(runs) -> None:
    from heta_notebook.analysis._misses import miss_line, variant_counts

    base, report = runs
    assert "lost at stage rerank" in report._repr_html_()  # the card's miss line
    c = compare({"plain": base, "rerank": report})
    counts = variant_counts(c)
    line = miss_line(counts[counts["variant"] == "rerank · default"])
    assert "lost at stage rerank" in line
    deltas = c.misses()
    assert "lost at stage rerank" in set(deltas["miss_class"])
    explorer = report.explore(miss_class="lost at stage rerank")  # the explorer's filter
    assert explorer.n_matching == len({i for i in _demoted_cases(report)})
    assert "lost at stage rerank" in explorer.static_html()  # the case's badge


def _demoted_cases(report) -> list[str]:
    rows = report.misses(level="evidence")
    return list(rows[rows["stage"] == "rerank"]["case_id"])
