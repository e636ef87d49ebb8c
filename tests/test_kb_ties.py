"""Rankings that hold on any machine: every KB mode orders ties by a documented key, not by
corpus position, and its numbers under the default tie rule equal pytrec_eval's."""

from __future__ import annotations

import random

import numpy as np
import pytest

from heta_notebook.evaluators._matching import document_scores
from heta_notebook.evaluators._retrieval import BeirRetrievalMetric, evaluate_batch
from heta_notebook.kb._fusion import reciprocal_rank_fusion
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._ranking import tie_keys, top_k
from heta_notebook.kb._recipe import Chunking, Recipe
from heta_notebook.schema import BenchmarkDocument
from tests._kb_helpers import cranfield

pytrec_eval = pytest.importorskip("pytrec_eval")

MODES = ("full_text_search", "vector_search", "hybrid_search")
RECIPES = (
    Recipe(name="docs"),
    Recipe(name="chunks", chunking=Chunking(unit="words", size=6, overlap=2)),
)


def twin_corpus() -> list[BenchmarkDocument]:
    """Documents in pairs with identical text (every score ties with its twin)."""
    texts = [
        "wing flutter at supersonic speed in a wind tunnel",
        "boundary layer transition on a flat plate with heat transfer",
        "shock wave interaction with a laminar boundary layer",
        "buckling of thin cylindrical shells under axial compression",
    ]
    ids = ["9", "10", "2", "100", "b", "a", "beta", "alpha"]
    return [BenchmarkDocument(document_id=doc, text=texts[i // 2]) for i, doc in enumerate(ids)]


def responses(kb: KnowledgeBase, queries: list[str], mode: str, top: int = 8):
    return [
        [(r.id, r.score) for r in resp.results]
        for resp in kb.query_many(queries, mode=mode, top_k=top)
    ]


def test_top_k_keeps_every_tie_of_the_kth_score_and_orders_by_key():
    scores = np.array([1.0, 3.0, 2.0, 2.0, 2.0, 0.5], dtype=np.float32)
    keys = np.array([0, 1, 5, 3, 4, 2])
    rows, values = top_k(scores, 3, keys)
    assert rows.tolist() == [1, 3, 4] and values.tolist() == [3.0, 2.0, 2.0]
    assert tie_keys(["10", "9", "2"], np.array([0, 0, 1, 2]), np.array([0, 1, 0, 0])).tolist() == [
        2,
        3,
        0,
        1,
    ]  # "9" > "2" > "10" as bytes, then chunk index


def test_fusion_breaks_equal_scores_by_best_rank_then_key():
    fused = reciprocal_rank_fusion([[7, 8, 9], [9, 8, 7]], k=60, keys={7: 1, 8: 0, 9: 0})
    assert [item for item, _, _ in fused] == [9, 7, 8]  # 7 and 9 tie at (1, 3): key 0 first


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.name)
def test_tied_results_follow_document_id_descending_whatever_the_corpus_order(recipe):
    documents = twin_corpus()
    queries = ["wing flutter supersonic", "boundary layer", "buckling shells compression"]
    kb = KnowledgeBase.build_sync(recipe, documents)
    shuffled = documents[:]
    random.Random(3).shuffle(shuffled)
    again = KnowledgeBase.build_sync(recipe, shuffled)
    for mode in MODES:
        got = responses(kb, queries, mode)
        assert got == responses(again, queries, mode), mode
        for ranked in got:
            docs = [rid.split("#")[0] for rid, _ in ranked]
            for (a, score_a), (b, score_b) in zip(ranked, ranked[1:], strict=False):
                if score_a == score_b and mode != "hybrid_search":
                    assert a.split("#")[0].encode() >= b.split("#")[0].encode(), (mode, docs)
    top = [rid for rid, _ in responses(kb, ["wing flutter supersonic"], "full_text_search")[0]]
    assert top[:2] == ["9#0", "10#0"] if recipe.name == "docs" else top[0].startswith("9#")


def test_dense_scores_are_stated_to_six_decimals():
    kb = KnowledgeBase.build_sync(RECIPES[0], twin_corpus())
    for _, score in responses(kb, ["shock wave laminar"], "vector_search")[0]:
        assert score == round(score, 6)


def hard_negative_corpus(n_queries: int = 40):
    """Cranfield plus, for each relevant document of the first queries, a hard negative with the
    identical text, listed right after it (its twin must not win by corpus position)."""
    manifest, documents, cases = cranfield()
    cases = list(cases[:n_queries])
    relevant = {e.reference_id for c in cases for e in c.expected.evidence if e.relevance > 0}
    corpus = []
    for d in documents:
        corpus.append(d)
        if d.document_id in relevant:
            corpus.append(d.model_copy(update={"document_id": f"{d.document_id}n"}))
    return corpus, cases


@pytest.mark.parametrize("recipe", RECIPES[:1], ids=lambda r: r.name)
def test_every_mode_equals_pytrec_eval_on_its_own_run_with_exact_ties(recipe):
    """The external-style check: nDCG@10 per case equals pytrec_eval on the (id, score) run."""
    corpus, cases = hard_negative_corpus()
    kb = KnowledgeBase.build_sync(recipe, corpus)
    qrels = {c.case_id: {e.reference_id: e.relevance for e in c.expected.evidence} for c in cases}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    tied_cases = 0
    for mode in MODES:
        found = kb.query_many([c.query for c in cases], mode=mode, top_k=100)
        ours = evaluate_batch([BeirRetrievalMetric("ndcg", 10)], cases, found)
        run = {}
        for case, response in zip(cases, found, strict=True):
            ids, scores = document_scores(response.results)
            run[case.case_id] = dict(zip(ids, scores, strict=True))
        truth = evaluator.evaluate(run)
        for case, (score,) in zip(cases, ours, strict=True):
            assert score.value == pytest.approx(truth[case.case_id]["ndcg_cut_10"], abs=1e-12)
            tied_cases += bool(score.metadata.get("tied"))
    assert tied_cases > 0  # the twins really tie
