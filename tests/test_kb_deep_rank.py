"""Exact deep ranks of the embedded KB equal the ranks found by retrieving the whole corpus.

On a sample of Cranfield cases, for whole documents and 100-word chunks and every mode: the
chunk rank and document rank of each judged document equal its place in the full ranking.
A judged document tied on score with another chunk may sit anywhere in its tie (the KB's
tie rule decides; no test depends on it), so it is checked to lie within the tie.
"""

from __future__ import annotations

import functools

import pytest

from heta_notebook import BeirBenchmark, Chunking, KnowledgeBase, Recipe, run_benchmark
from heta_notebook.display._explorer_data import encode_report
from heta_notebook.evaluators._matching import ranked_document_ids
from heta_notebook.kb._deep_rank import deep_ranks
from tests._deep_rank_helpers import recomputed_deep_ranks
from tests._kb_helpers import cranfield

RECIPES = {
    "whole-docs": Recipe(name="whole-docs"),
    "chunks-100": Recipe(name="chunks-100", chunking=Chunking(unit="words", size=100, overlap=20)),
}


@functools.lru_cache(maxsize=2)
def _kb(name: str) -> KnowledgeBase:
    return KnowledgeBase.build_sync(RECIPES[name], cranfield().documents)


def _full_ranks(response) -> tuple[dict[str, int], dict[str, int]]:
    chunk_rank: dict[str, int] = {}
    for rank, result in enumerate(response.results, start=1):
        chunk_rank.setdefault(result.source["document_id"], rank)
    docs = ranked_document_ids(response.results)
    return chunk_rank, {doc: i for i, doc in enumerate(docs, start=1)}


@pytest.mark.parametrize("recipe", list(RECIPES))
@pytest.mark.parametrize("mode", ["full_text_search", "vector_search", "hybrid_search"])
def test_deep_ranks_equal_the_whole_corpus_ranking(recipe: str, mode: str) -> None:
    kb = _kb(recipe)
    cases = cranfield().cases[::9]  # 25 cases, ~200 judged documents
    n = len(kb.chunks)
    options = {"candidates": n}  # hybrid: fuse full component lists, as top_k=n would
    queries = [c.query for c in cases]
    judged = [[e.reference_id for e in c.expected.evidence] for c in cases]
    deep = deep_ranks(kb, queries, judged, mode=mode, top_k=10, options=options)
    full = kb.query_many(queries, mode=mode, top_k=n, options=options)
    exact = tied = 0
    for response, ranks in zip(full, deep, strict=True):
        chunk_rank, document_rank = _full_ranks(response)
        for doc, rank in ranks.items():
            assert rank.indexed
            if rank.tied:
                tied += 1
                assert chunk_rank[doc] in range(
                    rank.chunk_rank - rank.tied, rank.chunk_rank + rank.tied + 1
                )
                continue
            assert (rank.chunk_rank, rank.document_rank) == (
                chunk_rank.get(doc),
                document_rank.get(doc),
            ), doc
            exact += 1
    assert exact > 150 and tied < exact / 5


@pytest.mark.parametrize("recipe", list(RECIPES))
@pytest.mark.parametrize("mode", ["full_text_search", "vector_search", "hybrid_search"])
def test_ranks_counted_during_the_search_equal_the_ranks_recomputed(recipe: str, mode: str) -> None:
    """What a run stores (``query_many(judged=...)``: the ranks of the judged documents missing
    from the top k, counted from the search's own score vectors) is, field for field, what
    rescoring every chunk gives; found documents get none."""
    kb = _kb(recipe)
    cases = cranfield().cases[::5]
    queries = [c.query for c in cases]
    judged = [[e.reference_id for e in c.expected.evidence] + ["no-such-document"] for c in cases]
    responses = kb.query_many(queries, mode=mode, top_k=10, judged=judged)
    reference = recomputed_deep_ranks(kb, queries, judged, mode=mode, top_k=10)
    compared = 0
    for response, expected, docs in zip(responses, reference, judged, strict=True):
        assert "deep_ranks_error" not in response.metadata
        found = {r.source["document_id"] for r in response.results}
        stored = response.metadata.get("deep_ranks", {})
        assert set(stored) == set(docs) - found
        assert stored == {doc: expected[doc].to_dict() for doc in stored}
        compared += len(stored)
    assert compared > 100
    whole = deep_ranks(kb, queries, judged, mode=mode, top_k=10)  # found or not, one search
    assert [{d: r.to_dict() for d, r in x.items()} for x in whole] == [
        {d: r.to_dict() for d, r in x.items()} for x in reference
    ]


def test_a_query_without_judged_documents_gets_no_deep_ranks() -> None:
    kb = _kb("whole-docs")
    plain, judged = (
        kb.query_many(["sonic boom"], mode="vector_search", judged=j)[0] for j in (None, [[]])
    )
    assert "deep_ranks" not in plain.metadata and "deep_ranks" not in judged.metadata
    assert list(plain.results) == list(judged.results)


def test_not_indexed_documents_are_said_so() -> None:
    kb = _kb("whole-docs")
    ranks = deep_ranks(kb, ["sonic boom"], [["no-such-document"]], mode="full_text_search")
    assert ranks[0]["no-such-document"].indexed is False


def test_a_bm25_score_of_zero_has_no_rank() -> None:
    kb = _kb("whole-docs")
    case = cranfield().cases[0]
    doc = case.expected.evidence[0].reference_id
    ranks = deep_ranks(kb, ["zzzunknownword"], [[doc]], mode="full_text_search")[0][doc]
    assert ranks.indexed and ranks.chunk_rank is None


def test_a_run_stores_deep_ranks_and_a_chunked_recipe_shows_split(tmp_path) -> None:
    runs = run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipes={"chunks-100": RECIPES["chunks-100"], "whole-docs": RECIPES["whole-docs"]},
        query_modes=["vector_search"],
        workspace=tmp_path,
        progress=False,
        case_ids=[*(str(i) for i in range(1, 51)), "183"],  # case 183 and 50 more to compare
    )
    chunks, docs = runs["chunks-100"], runs["whole-docs"]
    case = next(r for r in chunks.case_results if r.case_id == "183")
    judged = next(c for c in cranfield().cases if c.case_id == "183").expected.evidence
    returned = {r.source["document_id"] for r in case.response.results}
    unfound = {e.reference_id for e in judged} - returned  # the found ones have their rank
    assert unfound and set(case.response.metadata["deep_ranks"]) == unfound
    rows = chunks.misses(level="evidence")
    rows = rows[rows["case_id"] == "183"]
    assert set(rows["miss_class"]) <= {"found", "split", "beyond k"}
    assert "split" in set(rows["miss_class"])  # abstracts cut in chunks, none high enough
    missed = rows[rows["miss_class"] != "found"]
    assert (missed["rank"] > 10).all() and missed["rank_source"].eq("deep rank").all()
    # found items have the rank evidence matching gives them (the frames' evidence table)
    for report in (chunks, docs):
        found = report.misses(level="evidence")
        found = found[found["rank_source"] == "response"].set_index(["case_id", "label"])
        matched = report.frames().evidence()
        matched = matched[matched["matched"]].set_index(["case_id", "label"])
        assert found["rank"].sort_index().tolist() == matched["rank"].sort_index().tolist()
    # whole documents have one chunk each: a miss there is never "split"
    assert "split" not in set(docs.misses()["miss_class"])
    # the explorers' payload carries each evidence item's class and deep rank
    payload = encode_report(chunks, max_cases=None)
    strings, cases = payload["strings"], payload["cases"]
    row = chunks.case_results.index(case)
    shown = {strings[e[0]]: (strings[e[6]], e[7]) for e in cases["evidence"][row]}
    classes = zip(rows["miss_class"], rows["rank"], strict=True)
    expected = dict(zip(rows["label"], classes, strict=True))
    assert shown == expected
    assert "split" in {strings[j] for j in cases["misses"][row]}


def test_a_small_kb_gives_each_class_its_real_cause() -> None:
    """Empty text: not indexed; no shared word (BM25): not retrieved; long document cut in
    chunks ranked below k: split; a one-chunk document below k: beyond k."""
    from heta_notebook.schema import BenchmarkDocument

    filler = " ".join(f"filler{i}" for i in range(40))
    texts = {
        "empty": "",
        "far": "gardening tomatoes compost",
        "long": f"{filler} sonic boom strength " + " ".join(f"pad{i}" for i in range(60)),
        "short": "sonic",
        **{f"top{i}": f"sonic boom strength factors {i}" for i in range(3)},
    }
    docs = [BenchmarkDocument(document_id=d, text=t) for d, t in texts.items()]
    kb = KnowledgeBase.build_sync(
        Recipe(
            name="w", chunking=Chunking(unit="words", size=30, overlap=0), dense=None, hybrid=None
        ),
        docs,
    )
    ranks = deep_ranks(kb, ["sonic boom strength"], [list(texts)], mode="full_text_search")[0]
    assert ranks["empty"].indexed is False
    assert ranks["far"].indexed and ranks["far"].chunk_rank is None
    assert ranks["long"].chunks > 1 and ranks["long"].chunk_rank > 3
    assert ranks["short"].chunks == 1 and ranks["short"].chunk_rank > 3
    assert sorted(ranks[f"top{i}"].document_rank for i in range(3)) == [1, 2, 3]
