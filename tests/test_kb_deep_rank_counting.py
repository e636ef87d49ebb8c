"""How deep ranks are counted (``kb._deep_rank._counts``): ties and the grouping of judged
documents give the KB's own order, exactly.

The Cranfield tests (``test_kb_deep_rank.py``) allow a tied document anywhere in its tie; here a
corpus of twins (every text twice, so every score ties) checks the tie key's order itself, and
the judged documents counted one group at a time give what one group gives.
"""

from __future__ import annotations

import pytest

from heta_notebook import Chunking, KnowledgeBase, Recipe
from heta_notebook.evaluators._matching import ranked_document_ids
from heta_notebook.kb import _deep_rank
from heta_notebook.kb._deep_rank import deep_ranks
from heta_notebook.schema import BenchmarkDocument
from tests._deep_rank_helpers import recomputed_deep_ranks
from tests._kb_helpers import cranfield

MODES = ("full_text_search", "vector_search", "hybrid_search")
TEXTS = (
    "wing flutter at supersonic speed in a wind tunnel with a flexible panel",
    "boundary layer transition on a flat plate with heat transfer and suction",
    "shock wave interaction with a laminar boundary layer near a compression corner",
    "buckling of thin cylindrical shells under axial compression and pressure",
)
IDS = ("9", "10", "2", "100", "b", "a", "beta", "alpha")


def _twins(chunked: bool) -> KnowledgeBase:
    docs = [BenchmarkDocument(document_id=d, text=TEXTS[i // 2]) for i, d in enumerate(IDS)]
    chunking = Chunking(unit="words", size=5, overlap=1) if chunked else None
    recipe = Recipe(name="twins", **({"chunking": chunking} if chunking else {}))
    return KnowledgeBase.build_sync(recipe, docs)


@pytest.mark.parametrize("chunked", [False, True], ids=["documents", "chunks"])
@pytest.mark.parametrize("mode", MODES)
def test_tied_documents_get_the_ranks_the_tie_key_gives_them(chunked: bool, mode: str) -> None:
    kb = _twins(chunked)
    queries = ["boundary layer compression", "supersonic wing panel", "heat transfer"]
    n = len(kb.chunks)
    options = {"candidates": n}
    ranks = deep_ranks(kb, queries, [list(IDS)] * len(queries), mode=mode, options=options)
    full = kb.query_many(queries, mode=mode, top_k=n, options=options)
    for response, ranked in zip(full, ranks, strict=True):
        scores = [r.score for r in response.results]
        first: dict[str, int] = {}
        for place, result in enumerate(response.results, start=1):
            first.setdefault(result.source["document_id"], place)
        documents = {d: i for i, d in enumerate(ranked_document_ids(response.results), start=1)}
        for doc, rank in ranked.items():
            if doc not in first:
                assert rank.chunk_rank is None
                continue
            assert (rank.chunk_rank, rank.document_rank) == (first[doc], documents[doc]), doc
            if mode != "hybrid_search":  # a fused rank records no tie count
                assert rank.tied == scores.count(scores[first[doc] - 1]) - 1


@pytest.mark.parametrize("mode", ["full_text_search", "vector_search"])
def test_judged_documents_counted_a_few_at_a_time_give_the_same_ranks(monkeypatch, mode) -> None:
    chunks = Recipe(name="c", chunking=Chunking(unit="words", size=100, overlap=20))
    kb = KnowledgeBase.build_sync(chunks, cranfield().documents[:300])
    cases = [c for c in cranfield().cases if c.expected.evidence][:60]
    queries = [c.query for c in cases]
    judged = [[e.reference_id for e in c.expected.evidence] for c in cases]
    monkeypatch.setattr(_deep_rank, "_MASK", 1)  # one judged document per group
    grouped = deep_ranks(kb, queries, judged, mode=mode)
    reference = recomputed_deep_ranks(kb, queries, judged, mode=mode)
    as_dicts = [{d: r.to_dict() for d, r in x.items()} for x in grouped]
    assert as_dicts == [{d: r.to_dict() for d, r in x.items()} for x in reference]
    assert sum(r.chunk_rank is not None for x in grouped for r in x.values()) > 20
