"""BEIR metrics against pytrec_eval (the oracle) on Cranfield and on edge cases; evidence recall."""

from __future__ import annotations

import asyncio
import random

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from heta_notebook.evaluators._retrieval import (  # noqa: E402
    NO_QRELS,
    NO_RELEVANT,
    BeirRetrievalMetric,
    EvidenceRecallAtK,
    beir_default_metrics,
    evaluate_batch,
    evaluate_run,
    trec_ranking,
)
from heta_notebook.schema import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected  # noqa: E402
from tests._evaluators_helpers import (  # noqa: E402
    chunk,
    doc_response,
    load_cranfield,
    qrels_case,
    response,
)

K_VALUES = (1, 3, 5, 10, 100)
TREC_MEASURES = {
    f"{m}.{','.join(map(str, K_VALUES))}" for m in ("ndcg_cut", "map_cut", "recall", "P")
}
TREC_NAME = {
    "ndcg": "ndcg_cut_{k}",
    "map": "map_cut_{k}",
    "recall": "recall_{k}",
    "precision": "P_{k}",
}


def pytrec_order(scores: dict[str, float]) -> list[str]:
    """pytrec_eval's order, written out independently: score desc, then doc id desc as bytes."""
    return [d for d, _ in sorted(scores.items(), key=lambda i: (i[1], i[0].encode()), reverse=True)]


def beir_mrr(qrels: dict[str, int], ranking: list[str], k: int) -> float:
    """BEIR's MRR@k (beir.retrieval.custom_metrics.mrr): 1/rank of the first doc with grade > 0."""
    relevant = {d for d, g in qrels.items() if g > 0}
    return next((1.0 / (r + 1) for r, d in enumerate(ranking[:k]) if d in relevant), 0.0)


def oracle(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict:
    """pytrec_eval's measures plus BEIR's MRR@k, keyed (query, metric, k)."""
    measured = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES | {"recip_rank"}).evaluate(run)
    values = {}
    for q, measures in measured.items():
        for metric, template in TREC_NAME.items():
            values.update({(q, metric, k): measures[template.format(k=k)] for k in K_VALUES})
        values.update(
            {(q, "mrr", k): beir_mrr(qrels[q], pytrec_order(run[q]), k) for k in K_VALUES}
        )
        values[(q, "recip_rank", 0)] = measures["recip_rank"]
    return values


def ours(cases, responses, **kwargs) -> dict:
    metrics = beir_default_metrics(K_VALUES, **kwargs)
    rows = evaluate_batch(metrics, cases, responses)
    return {
        (case.case_id, m.metric, m.k): score
        for case, scores in zip(cases, rows, strict=True)
        for m, score in zip(metrics, scores, strict=True)
    }


def assert_equal_to_oracle(qrels, run, cases, responses):
    expected = oracle(qrels, run)
    got = ours(cases, responses)
    judged = [c.case_id for c in cases if any(g > 0 for g in qrels.get(c.case_id, {}).values())]
    assert judged
    for q in judged:
        for metric in ("ndcg", "map", "recall", "precision", "mrr"):
            for k in K_VALUES:
                score = got[(q, metric, k)]
                assert score.status == "scored"
                assert score.value == pytest.approx(expected[(q, metric, k)], abs=1e-9), (
                    q,
                    metric,
                    k,
                )
        if len(run[q]) <= 100:  # BEIR's MRR@100 is trec_eval's recip_rank when the run fits
            assert got[(q, "mrr", 100)].value == pytest.approx(
                expected[(q, "recip_rank", 0)], abs=1e-9
            )
    return got, expected


# --------------------------------------------------------------------------- Cranfield


@pytest.fixture(scope="module")
def cranfield_run():
    bm25s = pytest.importorskip("bm25s")
    queries, corpus, qrels = load_cranfield()
    doc_ids = list(corpus)
    texts = [f"{corpus[d].get('title', '')} {corpus[d]['text']}" for d in doc_ids]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    qids = sorted(q for q in queries if q in qrels)
    tokens = bm25s.tokenize([queries[q] for q in qids], stopwords="en", show_progress=False)
    found, scores = retriever.retrieve(tokens, k=100, show_progress=False, n_threads=1)
    run = {
        q: {doc_ids[int(i)]: float(s) for i, s in zip(found[row], scores[row], strict=True)}
        for row, q in enumerate(qids)
    }
    return qrels, run


def cranfield_cases(qrels, run):
    """Chunk-level responses: each document appears as two chunks (duplicates to dedupe)."""
    cases, responses = [], []
    for q, scores in run.items():
        results = [chunk(d, i) for d in pytrec_order(scores) for i in (0, 1)]
        cases.append(qrels_case(qrels[q], case_id=q))
        responses.append(response(results))
    return cases, responses


def test_cranfield_bm25_run_equals_pytrec_eval_for_all_225_queries(cranfield_run):
    qrels, run = cranfield_run
    assert len(run) == 225
    cases, responses = cranfield_cases(qrels, run)
    got, expected = assert_equal_to_oracle(qrels, run, cases, responses)
    mean_ndcg10 = sum(got[(q, "ndcg", 10)].value for q in run) / len(run)
    assert 0.2 < mean_ndcg10 < 0.5  # a real BM25 run, not a degenerate one


def test_batch_and_per_case_paths_give_identical_numbers(cranfield_run):
    qrels, run = cranfield_run
    cases, responses = cranfield_cases(qrels, dict(list(run.items())[:40]))
    metrics = beir_default_metrics(K_VALUES)
    batch = evaluate_batch(metrics, cases, responses)

    async def per_case():
        return [
            tuple([await m.evaluate(case=c, response=r) for m in metrics])
            for c, r in zip(cases, responses, strict=True)
        ]

    single = asyncio.run(per_case())
    assert [[s.value for s in row] for row in batch] == [[s.value for s in row] for row in single]
    assert batch == single


def assert_run_equals_pytrec_eval(qrels, run):
    expected = oracle(qrels, run)
    got = evaluate_run(qrels, run, beir_default_metrics(K_VALUES))
    judged = {q for q in run if run[q] and any(g > 0 for g in qrels.get(q, {}).values())}
    assert set(got) == judged
    for q in judged:
        for metric in ("ndcg", "map", "recall", "precision"):
            for k in K_VALUES:
                assert got[q][f"beir_{metric}@{k}"] == pytest.approx(
                    expected[(q, metric, k)], abs=1e-9
                )
        assert got[q]["beir_mrr@100"] == pytest.approx(expected[(q, "recip_rank", 0)], abs=1e-9)


def test_evaluate_run_equals_pytrec_eval_on_cranfield(cranfield_run):
    qrels, run = cranfield_run
    assert_run_equals_pytrec_eval(qrels, run)


def test_evaluate_run_in_small_blocks_equals_pytrec_eval_on_cranfield(cranfield_run, monkeypatch):
    from heta_notebook.evaluators import _retrieval

    monkeypatch.setattr(_retrieval, "RUN_BLOCK", 16)  # 225 queries in 15 blocks
    qrels, run = cranfield_run
    assert_run_equals_pytrec_eval(qrels, run)


def test_evaluate_run_breaks_ties_like_trec_eval():
    rng = random.Random(3)
    ids = ["9", "10", "100", "2", "20", "b", "B", "a1", "é"]
    run = {f"q{i}": {d: float(rng.randint(0, 2)) for d in rng.sample(ids, 6)} for i in range(60)}
    qrels = {q: {d: rng.choice([0, 1, 2]) for d in rng.sample(ids, 5)} for q in run}
    qrels = {q: j for q, j in qrels.items() if any(g > 0 for g in j.values())}
    run = {q: r for q, r in run.items() if q in qrels}
    assert trec_ranking({"9": 1.0, "10": 1.0, "100": 1.0, "2": 1.0}) == ["9", "2", "100", "10"]
    assert_run_equals_pytrec_eval(qrels, run)


# --------------------------------------------------------------------------- edge cases


def random_edge_cases(n_queries: int = 300, seed: int = 7):
    """Graded qrels with 0 and negative labels, runs shorter and longer than k, duplicates."""
    rng = random.Random(seed)
    pool = [f"d{i}" for i in range(150)]
    qrels, run, cases, responses = {}, {}, [], []
    for qi in range(n_queries):
        q = f"q{qi}"
        judged = rng.sample(pool, rng.randint(1, 25))
        qrels[q] = {d: rng.choice([-2, -1, 0, 0, 1, 1, 2, 3, 4]) for d in judged}
        ranking = rng.sample(pool, rng.choice([0, 1, 2, 4, 9, 30, 120]))
        run[q] = {d: float(len(ranking) - r) for r, d in enumerate(ranking)}
        chunks = [chunk(d, r) for r, d in enumerate(ranking)]
        if qi % 3 == 0:  # repeat an earlier document after every result
            chunks = [
                x for r, c in enumerate(chunks) for x in (c, chunk(ranking[r // 2], 1000 + r))
            ]
        cases.append(qrels_case(qrels[q], case_id=q))
        responses.append(response(chunks))
    return qrels, run, cases, responses


def test_graded_edge_cases_equal_pytrec_eval():
    qrels, run, cases, responses = random_edge_cases()
    # pytrec_eval drops queries with an empty run, and crashes (segfault) on a query whose only
    # judgments are negative; we skip queries without a relevant document anyway (next test).
    run = {q: r for q, r in run.items() if r and any(g > 0 for g in qrels[q].values())}
    qrels = {q: qrels[q] for q in run}
    kept = [(c, r) for c, r in zip(cases, responses, strict=True) if c.case_id in run]
    assert_equal_to_oracle(qrels, run, [c for c, _ in kept], [r for _, r in kept])


def test_no_relevant_document_is_skipped_where_pytrec_eval_says_zero():
    """pytrec_eval reports 0.0 for every metric (and segfaults if all labels are negative)."""
    qrels = {"q": {"a": 0, "b": -1}}
    zeros = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(
        {"q": {"a": 2.0, "x": 1.0}}
    )
    assert set(zeros["q"].values()) == {0.0}
    (row,) = evaluate_batch(beir_default_metrics(), [qrels_case(qrels["q"])], [doc_response(["a"])])
    assert {s.status for s in row} == {"skipped"}
    assert row[0].metadata["skip_reason"] == NO_RELEVANT


def test_no_qrels_at_all_is_skipped():
    case = BenchmarkCase(case_id="q", query="q", expected=BenchmarkExpected(answers=("x",)))
    score = asyncio.run(
        BeirRetrievalMetric("ndcg", 10).evaluate(case=case, response=doc_response(["a"]))
    )
    assert score.status == "skipped" and score.metadata["skip_reason"] == NO_QRELS


def test_hand_checked_values_fewer_results_than_k_duplicates_and_negative_labels():
    case = qrels_case({"a": 2, "b": -1, "c": 0, "d": 1, "e": 3})
    resp = doc_response(["b", "a", "a", "c", "x", "d", "b"])  # dedupe → b a c x d
    values = {
        s.name: s.value for s in evaluate_batch(beir_default_metrics((5, 10)), [case], [resp])[0]
    }
    assert values["beir_precision@5"] == pytest.approx(2 / 5)
    assert values["beir_precision@10"] == pytest.approx(2 / 10)  # P@k divides by k
    assert values["beir_recall@5"] == pytest.approx(2 / 3)
    assert values["beir_map@5"] == pytest.approx((1 / 2 + 2 / 5) / 3)
    assert values["beir_mrr@5"] == 0.5
    idcg = 3 + 2 / 1.584962500721156 + 1 / 2
    assert values["beir_ndcg@5"] == pytest.approx(
        (2 / 1.584962500721156 + 1 / 2.584962500721156) / idcg
    )


def test_results_without_document_are_skipped_and_metadata_lists_matches():
    case = qrels_case({"a": 1, "b": 2})
    resp = response([chunk("z"), chunk("b"), chunk("a")])
    score = asyncio.run(BeirRetrievalMetric("recall", 2).evaluate(case=case, response=resp))
    assert score.value == 0.5
    assert score.metadata == {
        "relevant_documents": 2,
        "retrieved_documents": 2,
        "matched_documents": ["b"],
    }


def test_names_defaults_and_validation():
    metrics = beir_default_metrics()
    assert len(metrics) == 25 and len({m.name for m in metrics}) == 25
    assert metrics[0].name == "beir_ndcg@1" and metrics[-1].name == "beir_mrr@100"
    with pytest.raises(ValueError, match="metric must be one of"):
        BeirRetrievalMetric("f1", 10)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive integer"):
        BeirRetrievalMetric("ndcg", 0)
    with pytest.raises(ValueError, match="convention"):
        BeirRetrievalMetric("ndcg", 5, convention="lucene")  # type: ignore[arg-type]


def test_threshold_from_settings_sets_passed():
    from heta_notebook.evaluators._protocol import EvaluatorSettings

    metric = BeirRetrievalMetric("recall", 5, settings=EvaluatorSettings(threshold=0.5))
    (row,) = evaluate_batch([metric], [qrels_case({"a": 1, "b": 1})], [doc_response(["a"])])
    assert (row[0].value, row[0].passed) == (0.5, True)


# --------------------------------------------------------------------------- heta-framework


def heta_objects(qrels: dict[str, int], ranking: list[str]):
    from heta_framework.evaluation.types import BenchmarkCase as HCase
    from heta_framework.evaluation.types import BenchmarkEvidence as HEvidence
    from heta_framework.evaluation.types import BenchmarkExpected as HExpected
    from heta_framework.kb.search.types import QueryResponse as HResponse
    from heta_framework.kb.search.types import QueryResult as HResult

    evidence = tuple(HEvidence(reference_id=d, metadata={"relevance": g}) for d, g in qrels.items())
    case = HCase(case_id="q", query="q", expected=HExpected(evidence=evidence))
    results = tuple(
        HResult(id=f"{d}#{i}", text=f"chunk {i}", source={"beir_document_id": d})
        for i, d in enumerate(ranking)
    )
    return case, HResponse(mode="m", results=results)


def test_heta_convention_reproduces_heta_framework_and_trec_eval_differs():
    heta = pytest.importorskip("heta_framework.evaluation")
    qrels = {"a": 3, "b": 1, "c": 2, "d": 1, "e": 0, "f": 4}
    ranking = ["b", "x", "a", "e", "c", "a", "y", "d"]
    h_case, h_response = heta_objects(qrels, ranking)
    case, resp = qrels_case(qrels), doc_response(ranking)
    differs = set()
    for k in (1, 3, 5, 10):
        for metric in ("ndcg", "map", "recall", "precision", "mrr"):
            theirs = asyncio.run(
                heta.BeirRetrievalMetric(metric=metric, k=k).evaluate(
                    case=h_case, response=h_response
                )
            ).value
            as_heta = evaluate_batch(
                [BeirRetrievalMetric(metric, k, convention="heta")], [case], [resp]
            )
            trec = evaluate_batch([BeirRetrievalMetric(metric, k)], [case], [resp])
            assert as_heta[0][0].value == theirs, (metric, k)  # exact, not approximate
            if abs(trec[0][0].value - theirs) > 1e-12:
                differs.add(metric)
    assert differs == {"ndcg", "map"}  # gain 2**rel - 1 and MAP denominator min(R, k)


# --------------------------------------------------------------------------- evidence recall


def test_evidence_recall_metadata_lists_matched_and_missing():
    evidence = (
        BenchmarkEvidence(reference_id="d2", metadata={"relevance": 2}),
        BenchmarkEvidence(locator={"document_id": "d9"}),
        BenchmarkEvidence(text="text of d3 CHUNK 0"),
    )
    case = BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected(evidence=evidence))
    resp = response([chunk("d1"), chunk("d2"), chunk("d3"), chunk("d9")])
    score = asyncio.run(EvidenceRecallAtK(k=3).evaluate(case=case, response=resp))
    assert score.name == "evidence_recall@3" and score.value == pytest.approx(2 / 3)
    assert score.metadata == {
        "k": 3,
        "matched": 2,
        "expected": 3,
        "matched_evidence": [
            {
                "index": 0,
                "label": "d2",
                "reference_id": "d2",
                "rank": 2,
                "result_id": "d2#c0",
                "matched_by": "document",
            },
            {
                "index": 2,
                "label": "text of d3 CHUNK 0",
                "reference_id": None,
                "rank": 3,
                "result_id": "d3#c0",
                "matched_by": "text",
            },
        ],
        "missing_evidence": [{"index": 1, "label": "document_id=d9", "reference_id": None}],
        "matched_reference_ids": ["d2"],
    }
    assert score.to_dict()["metadata"]["matched"] == 2  # JSON-ready


def test_evidence_recall_without_evidence_is_skipped_and_batch_matches():
    empty = BenchmarkCase(case_id="e", query="q")
    full = qrels_case({"d1": 1, "d4": 1})
    resp = doc_response(["d1", "d2"])
    ev = EvidenceRecallAtK(5)
    batch = ev.evaluate_batch([empty, full], [resp, resp])
    assert batch[0].status == "skipped"
    assert batch[1] == asyncio.run(ev.evaluate(case=full, response=resp))
    assert batch[1].value == 0.5
    with pytest.raises(ValueError):
        EvidenceRecallAtK(0)
