"""Small builders shared by the evaluator tests (cases, responses, chunk results, qrels)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from heta_notebook.schema import (
    BenchmarkCase,
    BenchmarkEvidence,
    BenchmarkExpected,
    EvaluationCaseResult,
    EvaluationScore,
    QueryResponse,
    QueryResult,
)

CRANFIELD = (
    Path(__file__).resolve().parents[1] / "heta_notebook" / "benchmarks" / "data" / "cranfield"
)  # shipped copy


def chunk(doc_id: str, i: int = 0, score: float | None = None, **source: object) -> QueryResult:
    """A chunk result of benchmark document ``doc_id`` (mapped via benchmark_document_id)."""
    return QueryResult(
        id=f"{doc_id}#c{i}",
        text=f"text of {doc_id} chunk {i}",
        score=score,
        source={"benchmark_document_id": doc_id, **source},
    )


def response(results: Sequence[QueryResult], answer: str | None = None, mode: str = "bm25"):
    """A QueryResponse with ``results`` (and an optional answer)."""
    return QueryResponse(mode=mode, results=tuple(results), answer=answer)


def doc_response(doc_ids: Sequence[str], mode: str = "bm25") -> QueryResponse:
    """A response whose results are one chunk per document id, in that rank order."""
    return response([chunk(d, i) for i, d in enumerate(doc_ids)], mode=mode)


def qrels_case(qrels: Mapping[str, int], case_id: str = "q1", **expected: object) -> BenchmarkCase:
    """A case whose expected evidence are document-level qrels ``{doc_id: grade}``."""
    evidence = tuple(
        BenchmarkEvidence(reference_id=doc, metadata={"relevance": grade})
        for doc, grade in qrels.items()
    )
    return BenchmarkCase(
        case_id=case_id,
        query=f"query {case_id}",
        expected=BenchmarkExpected(evidence=evidence, **expected),
    )


def answer_case(*answers: str) -> BenchmarkCase:
    """A case expecting one of ``answers``."""
    return BenchmarkCase(
        case_id="a1", query="what?", expected=BenchmarkExpected(answers=tuple(answers))
    )


def case_result(mode: str, *scores: EvaluationScore, case_id: str = "c") -> EvaluationCaseResult:
    """A case result holding ``scores`` (with a minimal response)."""
    return EvaluationCaseResult(
        case_id=case_id,
        query="q",
        query_mode=mode,
        scores=scores,
        response=QueryResponse(mode=mode),
    )


def load_cranfield() -> tuple[dict[str, str], dict[str, dict[str, str]], dict[str, dict[str, int]]]:
    """Cranfield as (queries, corpus, qrels) dicts in BEIR layout."""
    import json

    def jsonl(name: str) -> list[dict]:
        with open(CRANFIELD / name, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]

    queries = {q["_id"]: q["text"] for q in jsonl("queries.jsonl")}
    corpus = {d["_id"]: d for d in jsonl("corpus.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    with open(CRANFIELD / "qrels" / "test.tsv", encoding="utf-8") as fh:
        for line in fh:
            parts = line.strip().split("\t")
            if len(parts) < 3 or parts[0] == "query-id":
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(float(parts[2]))
    return queries, corpus, qrels
