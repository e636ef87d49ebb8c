"""Query modes on Cranfield: quality against pytrec_eval, sources, errors, batching."""

from __future__ import annotations

import pytest

from heta_notebook.evaluators._matching import document_ids, match_evidence
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._protocol import KnowledgeBaseProtocol
from heta_notebook.kb._recipe import Bm25, Chunking, Recipe
from heta_notebook.schema import QueryResponse
from tests._kb_helpers import cranfield, mean_metric, random_run, run_of

MODES = ("full_text_search", "vector_search", "hybrid_search")


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    manifest, documents, _ = cranfield()
    return KnowledgeBase.build_sync(Recipe(name="docs"), documents, benchmark=manifest)


@pytest.fixture(scope="module")
def ndcg(kb) -> dict[str, float]:
    _, _, cases = cranfield()
    queries = [c.query for c in cases]
    return {
        mode: mean_metric(cases, run_of(cases, kb.query_many(queries, mode=mode, top_k=100)))
        for mode in MODES
    }


def test_kb_satisfies_protocol_and_lists_modes(kb):
    assert isinstance(kb, KnowledgeBaseProtocol)
    assert kb.query_modes == MODES


def test_every_mode_beats_random_by_a_wide_margin(ndcg):
    manifest, documents, cases = cranfield()
    random = mean_metric(cases, random_run(cases, [d.document_id for d in documents]))
    assert random < 0.05
    assert ndcg["full_text_search"] > 0.30 and ndcg["full_text_search"] > 6 * random
    assert ndcg["vector_search"] > 0.25 and ndcg["vector_search"] > 5 * random


def test_hybrid_is_not_worse_than_the_worse_part(ndcg):
    assert ndcg["hybrid_search"] >= min(ndcg["full_text_search"], ndcg["vector_search"])


@pytest.mark.parametrize("mode", MODES)
async def test_query_returns_ranked_chunks_with_sources(kb, mode):
    _, _, cases = cranfield()
    response = await kb.query(cases[0].query, mode=mode, top_k=10)
    assert isinstance(response, QueryResponse) and response.mode == mode
    assert len(response.results) == 10
    scores = [r.score for r in response.results]
    assert scores == sorted(scores, reverse=True)
    top = response.results[0]
    assert top.kind == "chunk" and top.id == f"{top.source['benchmark_document_id']}#0"
    doc = top.source["benchmark_document_id"]
    assert top.source["source_key"] == f"raw/benchmarks/beir_cranfield/test/{doc}/{doc}.txt"
    assert top.metadata["rank"] == 1 and top.metadata["document_title"]
    # the same answer through the batch path, and a full JSON round trip
    batch = kb.query_many([cases[0].query], mode=mode, top_k=10, answer=True)[0]
    assert batch.results == response.results and batch.answer == response.answer
    assert batch.citations == response.citations
    assert QueryResponse.model_validate_json(response.model_dump_json()) == response


def test_hybrid_results_say_where_each_part_ranked_them(kb):
    response = kb.query_sync("boundary layer heat transfer", mode="hybrid_search", top_k=5)
    ranks = response.results[0].metadata["fused_ranks"]
    assert set(ranks) == {"full_text_search", "vector_search"}
    assert any(rank is not None for rank in ranks.values())


def test_evidence_matches_through_the_matching_module(kb):
    _, _, cases = cranfield()
    case = cases[0]
    response = kb.query_sync(case.query, mode="full_text_search", top_k=20)
    matches = match_evidence(case.expected.evidence, response.results, k=20)
    assert any(m.matched for m in matches)


def test_unknown_mode_lists_the_kbs_modes(kb):
    with pytest.raises(
        ValueError,
        match=r"unknown query mode 'graph_search'.*full_text_search, vector_search, hybrid_search",
    ):
        kb.query_sync("wing", mode="graph_search")
    bm25_only = KnowledgeBase.build_sync(
        Recipe(name="b", dense=None, hybrid=None), cranfield().documents[:50]
    )
    with pytest.raises(ValueError, match=r"answers: full_text_search$"):
        bm25_only.query_sync("wing", mode="vector_search")


def test_top_k_bounds_and_unknown_options(kb):
    with pytest.raises(ValueError, match="top_k"):
        kb.query_sync("wing", mode="full_text_search", top_k=0)
    big = kb.query_sync("wing", mode="vector_search", top_k=5000)
    assert len(big.results) == 1400
    response = kb.query_sync(
        "wing", mode="hybrid_search", top_k=3, options={"candidates": 20, "colour": 1}
    )
    assert len(response.results) == 3 and response.metadata["ignored_options"] == ["colour"]


def test_bm25_drops_documents_sharing_no_term(kb):
    response = kb.query_sync("zyxxyz qqqq", mode="full_text_search", top_k=10)
    assert response.results == ()


def test_word_chunks_map_back_to_documents():
    manifest, documents, cases = cranfield()
    subset = documents[:300]
    recipe = Recipe(
        name="w40", chunking=Chunking(unit="words", size=40, overlap=10), dense=None, hybrid=None
    )
    kb = KnowledgeBase.build_sync(recipe, subset, benchmark=manifest)
    assert kb.manifest()["chunks"] > len(subset)
    texts = {d.document_id: d.read_text() for d in subset}
    response = kb.query_sync("supersonic flow over a wedge", mode="full_text_search", top_k=30)
    assert any(r.source["chunk_index"] > 0 for r in response.results)
    for result in response.results:
        source = result.source
        doc = source["benchmark_document_id"]
        assert texts[doc][source["start_offset"] : source["end_offset"]] == result.text
        assert result.id == f"{doc}#{source['chunk_index']}"
        assert document_ids(result) == (doc,)


def test_bm25_parameters_reach_bm25s():
    documents = cranfield().documents[:200]
    scores = {}
    for k1 in (0.5, 2.0):
        kb = KnowledgeBase.build_sync(
            Recipe(name="b", bm25=Bm25(k1=k1), dense=None, hybrid=None), documents
        )
        assert kb.bm25.retriever.k1 == k1
        scores[k1] = [r.score for r in kb.query_sync("pressure", mode="full_text_search").results]
    assert scores[0.5] != scores[2.0]


def test_stemming_needs_pystemmer():
    recipe = Recipe(name="s", bm25=Bm25(stemmer="english"), dense=None, hybrid=None)
    documents = cranfield().documents[:20]
    try:
        import Stemmer  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install PyStemmer"):
            KnowledgeBase.build_sync(recipe, documents)
    else:  # pragma: no cover - only where PyStemmer is installed
        kb = KnowledgeBase.build_sync(recipe, documents)
        assert kb.query_sync("flows", mode="full_text_search").results


def test_manifest_counts_and_sizes(kb):
    manifest = kb.manifest()
    assert manifest["documents"] == 1400 and manifest["chunks"] == 1400
    assert manifest["recipe_hash"] == Recipe(name="docs").hash
    assert manifest["indexes"]["bm25"]["vocabulary"] > 5000
    assert manifest["indexes"]["dense"]["dims"] == 128
    assert manifest["build_seconds"] > 0 and len(manifest["corpus_hash"]) == 16
    assert manifest["query_modes"] == list(MODES)
