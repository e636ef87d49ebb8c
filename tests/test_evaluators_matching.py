"""Evidence matching (locator → reference_id → text) and chunk → document mapping."""

from __future__ import annotations

from heta_notebook.evaluators._matching import (
    document_ids,
    match_evidence,
    qrels_of,
    ranked_document_ids,
)
from heta_notebook.schema import BenchmarkEvidence, QueryResult
from tests._evaluators_helpers import chunk


def result(id_: str = "r", text: str = "", **source: object) -> QueryResult:
    return QueryResult(id=id_, text=text, source=source)


def test_document_id_precedence_benchmark_id_then_raw_key_then_document_id():
    both = result(
        benchmark_document_id="B", source_key="raw/benchmarks/x/test/R/f.txt", document_id="D"
    )
    assert document_ids(both) == ("B",)
    assert document_ids(result(source_key="raw/benchmarks/x/test/R/f.txt", document_id="D")) == (
        "R",
    )
    assert document_ids(result(document_id="D")) == ("D",)
    assert document_ids(result(note="nothing")) == ()


def test_document_ids_read_plural_forms_origin_and_metadata():
    assert document_ids(result(beir_document_ids=["a", "b", "a"])) == ("a", "b")
    origin = result(origin={"object_key": "raw/benchmarks/x/test/O/f.txt"})
    assert document_ids(origin) == ("O",)
    meta = QueryResult(id="m", metadata={"origin_source_key": "raw/benchmarks/x/test/M/f"})
    assert document_ids(meta) == ("M",)
    assert document_ids(result(object_keys=["raw/benchmarks/x/test/P/1", "junk"])) == ("P",)


def test_ranked_document_ids_dedupes_in_rank_order_and_cuts_at_k_documents():
    results = [chunk("d1", 0), chunk("d1", 1), chunk("d2", 0), result("x"), chunk("d3", 0)]
    assert ranked_document_ids(results) == ["d1", "d2", "d3"]
    assert ranked_document_ids(results, k=2) == ["d1", "d2"]
    assert ranked_document_ids([], k=3) == []


def test_locator_matches_and_reports_rank_and_result():
    evidence = [BenchmarkEvidence(locator={"document_id": "d2", "page_index": 3})]
    results = [
        result("a", document_id="d2", page_index=1),
        result("b", document_id="d2", page_indices=[2, 3]),
    ]
    (match,) = match_evidence(evidence, results)
    assert (match.matched, match.rank, match.result_id, match.matched_by) == (
        True,
        2,
        "b",
        "locator",
    )


def test_locator_that_contradicts_the_result_is_decisive():
    evidence = [BenchmarkEvidence(locator={"document_id": "d2"}, reference_id="r1")]
    (match,) = match_evidence(evidence, [result("r1", document_id="d9")])
    assert not match.matched and match.rank is None and match.matched_by is None


def test_locator_the_result_cannot_answer_falls_through_to_reference_then_text():
    by_ref = BenchmarkEvidence(locator={"page_index": 4}, reference_id="d1")
    by_text = BenchmarkEvidence(locator={"page_index": 4}, text="Wing  FLUTTER")
    results = [chunk("d1", 0), result("t", text="about wing flutter at speed")]
    first, second = match_evidence([by_ref, by_text], results)
    assert (first.matched_by, first.rank) == ("document", 1)
    assert (second.matched_by, second.rank) == ("text", 2)


def test_heta_source_key_prefix_and_chunk_ids():
    prefix = BenchmarkEvidence(locator={"source_key_prefix": "raw/benchmarks/b/test/d7/"})
    chunk_ev = BenchmarkEvidence(locator={"chunk_id": "c-3"})
    results = [
        result("x", source_key="raw/benchmarks/b/test/d1/d1.txt"),
        result("y", source_keys=["raw/benchmarks/b/test/d7/d7.txt"]),
        result("z", chunk_ids=["c-2", "c-3"]),
    ]
    first, second = match_evidence([prefix, chunk_ev], results)
    assert (first.rank, first.matched_by) == (2, "locator")
    assert (second.rank, second.matched_by) == (3, "locator")


def test_reference_id_matches_result_id_or_source_keys_directly():
    evidence = [BenchmarkEvidence(reference_id="c9"), BenchmarkEvidence(reference_id="k/1")]
    first, second = match_evidence(evidence, [result("c9"), result("o", object_key="k/1")])
    assert (first.matched_by, second.matched_by) == ("reference_id", "reference_id")


def test_k_limits_results_and_labels_and_relevance_are_kept():
    evidence = [BenchmarkEvidence(reference_id="d3", metadata={"relevance": 2})]
    (miss,) = match_evidence(evidence, [chunk("d1"), chunk("d2"), chunk("d3")], k=2)
    (hit,) = match_evidence(evidence, [chunk("d1"), chunk("d2"), chunk("d3")], k=3)
    assert not miss.matched and hit.rank == 3
    assert (hit.label, hit.relevance, hit.index, hit.reference_id) == ("d3", 2, 0, "d3")


def test_empty_texts_never_match():
    (match,) = match_evidence([BenchmarkEvidence(text="abc")], [result("e", text="   ")])
    assert not match.matched


def test_qrels_keep_zero_and_negative_grades_and_take_the_max_of_duplicates():
    evidence = [
        BenchmarkEvidence(reference_id="a", metadata={"relevance": 1}),
        BenchmarkEvidence(reference_id="a", metadata={"relevance": 3}),
        BenchmarkEvidence(reference_id="b", metadata={"relevance": 0}),
        BenchmarkEvidence(reference_id="c", metadata={"relevance": -1}),
        BenchmarkEvidence(text="no id"),
        BenchmarkEvidence(reference_id="d"),
    ]
    assert qrels_of(evidence) == {"a": 3, "b": 0, "c": -1, "d": 1}


def test_one_grade_rule_for_scoring_misses_and_the_evidence_itself():
    """A grade that is not a number counts as 1 everywhere (the evidence's ``relevance``, the
    qrels scoring reads, the miss facts of a stored report's expected data): one rule."""
    from heta_notebook.analysis._miss_facts import items_of

    odd = {"reference_id": "a", "metadata": {"relevance": "high"}}
    graded = {"reference_id": "b", "metadata": {"relevance": 2.0}}
    evidence = [BenchmarkEvidence(**odd), BenchmarkEvidence(**graded)]
    assert [e.relevance for e in evidence] == [1, 2]
    assert qrels_of(evidence) == {"a": 1, "b": 2}
    items = items_of({"evidence": [odd, graded]})
    assert items is not None and list(items.relevance) == [1, 2]


def test_the_stored_columns_fast_path_matches_like_match_evidence() -> None:
    """``match_stored`` (the explorers' path over a saved report's columns) gives the ranks
    and rules of ``match_evidence`` for reference-id evidence: one matcher, two inputs."""
    import json

    from heta_notebook.evaluators._matching import match_evidence, match_stored
    from heta_notebook.schema import BenchmarkEvidence, QueryResult

    results = [
        QueryResult(id="x#0", text="a", source={"benchmark_document_id": "d2"}),
        QueryResult(id="d1", text="b"),
        QueryResult(id="c", text="c", metadata={"document_id": "d3"}),
        QueryResult(id="y#1", text="d", source={"source_key": "d4"}),
        QueryResult(id="d2#5", text="e"),
    ]
    evidence = [
        BenchmarkEvidence(reference_id=ref, metadata={"relevance": 1})
        for ref in ("d1", "d2", "d3", "d4", "d5")
    ]

    def as_json(value: dict) -> str | None:
        return json.dumps(value) if value else None

    stored = match_stored(
        evidence,
        [r.id for r in results],
        [as_json(r.source) for r in results],
        [as_json(r.metadata) for r in results],
    )
    assert stored == match_evidence(evidence, results)
    assert [m.rank for m in stored] == [2, 1, 3, 4, None]


def _rank_by_rank(evidence, results):
    """The matching rule as documented: the first rank whose result ``match_result`` accepts."""
    from heta_notebook.evaluators._matching import match_result

    out = []
    for item in evidence:
        found = next(
            (
                (rank, r.id, how)
                for rank, r in enumerate(results, 1)
                if (how := match_result(item, r)) is not None
            ),
            (None, None, None),
        )
        out.append(found)
    return out


def test_reference_evidence_is_matched_as_rank_by_rank_on_every_input() -> None:
    """Reference-id evidence reads one table of first ranks (records, stored columns): the
    same ranks, result ids and rules as trying ``match_result`` rank by rank, including a
    ``doc#n`` chunk id and a document named both directly and through a chunk."""
    import json
    import random

    from heta_notebook.evaluators._matching import match_stored

    rng = random.Random(7)
    forms = [
        lambda d, i: QueryResult(id=f"{d}#{i}", text="t"),
        lambda d, i: QueryResult(id=d, text="t"),
        lambda d, i: QueryResult(id=f"c{i}", text="t", source={"benchmark_document_id": d}),
        lambda d, i: QueryResult(id=f"c{i}", text="t", source={"document_id": d}),
        lambda d, i: QueryResult(id=f"c{i}", text="t", metadata={"beir_document_id": d}),
        lambda d, i: QueryResult(id=f"{d}#{i}", text="t", source={"benchmark_document_id": "z"}),
    ]
    docs = [f"d{n}" for n in range(8)]
    for _ in range(200):
        results = [rng.choice(forms)(rng.choice(docs), i) for i in range(rng.randint(0, 12))]
        evidence = [BenchmarkEvidence(reference_id=d) for d in rng.sample(docs, 4)]
        expected = _rank_by_rank(evidence, results)
        live = match_evidence(evidence, results)
        assert [(m.rank, m.result_id, m.matched_by) for m in live] == expected
        stored = match_stored(
            evidence,
            [r.id for r in results],
            [json.dumps(r.source) if r.source else None for r in results],
            [json.dumps(r.metadata) if r.metadata else None for r in results],
        )
        assert stored == live


def test_stored_keys_read_metadata_naming_no_key_as_absent():
    """Metadata that names none of the keys the rules read (a rank, a method, a title: one
    distinct JSON per hit) gives the keys of no metadata, so each source is parsed once; any
    metadata that may name one (or spells a key with escapes) is read in full. Either way
    the keys are those of the full rule."""
    import json

    from heta_notebook.evaluators import _matching as m

    sources = [
        json.dumps({"benchmark_document_id": "184", "document_id": "184", "chunk_id": "184#0"}),
        json.dumps({"benchmark_document_id": "7", "beir_document_id": "7"}),
        json.dumps({"document_id": "d3"}),
        None,
    ]
    metadatas = [
        None,
        json.dumps({"rank": 1, "retrieval_method": "bm25", "document_title": "scale models"}),
        json.dumps({"document_id": "other"}),
        json.dumps({"origin_source_key": "raw/benchmarks/cranfield/test/99/99.txt"}),
        json.dumps({"object_keys": ["raw/benchmarks/cranfield/test/12/12.txt"]}),
        '{"\\u0064ocument_id": "escaped"}',
    ]
    for source in sources:
        for metadata in metadatas:
            assert m.stored_keys(source, metadata) == m._stored_keys.__wrapped__(source, metadata)
    assert not m.names_a_key(metadatas[1]) and all(map(m.names_a_key, metadatas[2:]))
    assert "escaped" in m.stored_keys(None, metadatas[-1])[1]


def test_key_positions_find_each_text_that_names_a_key_in_a_joined_search():
    """A report's metadata texts are searched joined (``key_positions``, a few C-level
    scans); the texts found are exactly those ``names_a_key`` accepts one by one, whatever
    the order, repeats, empty texts or a raw separator inside a text."""
    import random

    import numpy as np

    from heta_notebook.evaluators import _matching as m

    pieces = ['"rank": 1', '"document_id": "d"', '"source_keys": []', '"object_key": "k"']
    pieces += ['"\\u0064ocument_id": 1', '"title": "a\nb"', '"t": "document_i"', ""]
    rng = random.Random(7)
    for _ in range(200):
        metas = [
            None if rng.random() < 0.1 else "{" + ", ".join(rng.sample(pieces, 2)) + "}"
            for _ in range(rng.randint(0, 12))
        ]
        codes = np.asarray([rng.randint(-1, len(metas) - 1) for _ in range(20)], np.int64)
        kept = m.keyed_only(codes, metas)
        expected = [c if c >= 0 and m.names_a_key(metas[c] or "") else -1 for c in codes]
        assert kept.tolist() == expected
