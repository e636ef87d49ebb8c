"""Realistic synthetic evaluation reports for display, analysis and comparison tests.

``make_report()`` builds an ``EvaluationReport`` that looks like a real BEIR run: several
query modes, ranked chunk results mapped to benchmark documents, graded qrels as expected
evidence, BEIR-style scores (ndcg/map/recall/precision@k, mrr@10) computed honestly from the
synthetic ranking (trec_eval conventions), an ``evidence_recall@10`` score with contract-4
metadata, an answer check, an LLM-judge score with reasons, query errors, evaluator errors,
skipped scores and ``metadata["expected"]`` / ``metadata["labels"]``.

``hostile=True`` puts XSS payloads into every untrusted string (queries, answers, chunks,
judge reasons, metadata, labels, expected answers) for escaping tests.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from typing import Any

from heta_notebook.schema import (
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationError,
    EvaluationReport,
    EvaluationScore,
    QueryResponse,
    QueryResult,
    QueryTraceEvent,
)

PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">click</a>',
)
HOSTILE = " ".join(PAYLOADS)
WORDS = tuple(
    [
        "boundary",
        "layer",
        "flow",
        "heat",
        "transfer",
        "supersonic",
        "wing",
        "pressure",
        "shock",
        "wave",
        "laminar",
        "turbulent",
        "cylinder",
        "nozzle",
        "viscous",
        "plate",
        "slender",
        "body",
        "hypersonic",
        "drag",
        "lift",
        "stability",
    ]
)
MODE_QUALITY = {"bm25": 0.55, "dense": 0.45, "hybrid": 0.65}
DEFAULT_KS = (1, 3, 5, 10)


def make_report(
    n_cases: int = 24,
    modes: Sequence[str] = ("bm25", "dense", "hybrid"),
    *,
    seed: int = 0,
    k_values: Sequence[int] = DEFAULT_KS,
    n_results: int = 10,
    judge: bool = True,
    errors: bool = True,
    hostile: bool = False,
    partial: bool = False,
    expected_metadata: bool = True,
    label: str | None = None,
    quality_shift: float = 0.0,
    report_id: str | None = None,
) -> EvaluationReport:
    """A synthetic but realistic report (see the module docstring).

    Deterministic for a given ``seed``. Case ``q0003`` (every 11th from there) has no
    qrels, so its retrieval scores are skipped. With ``errors``, every 13th case fails in the
    first mode (query error) and the judge fails on every 17th case. ``quality_shift`` moves
    every mode's ranking quality (for comparison tests).
    """
    rng = random.Random(seed)
    results = []
    for i in range(n_cases):
        case = _case(i, rng, hostile)
        for m, mode in enumerate(modes):
            quality = MODE_QUALITY.get(mode, 0.5 - 0.05 * m) + quality_shift
            if errors and m == 0 and i % 13 == 7:
                results.append(_failed(case, mode, hostile))
                continue
            results.append(
                _case_result(case, mode, rng, quality, k_values, n_results, judge, errors, hostile)
            )
    if not expected_metadata:
        results = [r.model_copy(update={"metadata": {}}) for r in results]
    return _report(results, modes, label, partial, hostile, report_id or f"synthetic-{seed}")


def _case(i: int, rng: random.Random, hostile: bool) -> dict[str, Any]:
    words = rng.sample(WORDS, 5)
    query = f"what is the effect of {words[0]} on {words[1]} {words[2]}?"
    if hostile:
        query = f"{query} {HOSTILE}"
    qrels = {}
    if i % 11 != 3:  # q0003, q0014, ... have no qrels → skipped retrieval scores
        for doc in rng.sample(range(1, 200), rng.randint(1, 4)):
            qrels[f"d{doc}"] = rng.randint(1, 4)
    answer = f"The {words[1]} {words[2]} depends on {words[0]}."
    evidence = [
        BenchmarkEvidence(
            reference_id=doc,
            metadata={"relevance": grade, "note": HOSTILE if hostile else ""},
        )
        for doc, grade in qrels.items()
    ]
    answers = (answer + (f" {HOSTILE}" if hostile else ""),)
    expected = BenchmarkExpected(answers=answers, evidence=tuple(evidence))
    labels = {"topic": words[0], "difficulty": ["easy", "medium", "hard"][i % 3]}
    if hostile:
        labels["note"] = HOSTILE
    return {
        "id": f"q{i:04d}",
        "query": query,
        "qrels": qrels,
        "expected": expected,
        "labels": labels,
        "answer": answer,
    }


def _ranking(case: dict[str, Any], rng: random.Random, quality: float, n: int) -> list[str]:
    relevant = list(case["qrels"])
    docs: list[str] = []
    for _ in range(n):
        pool = [d for d in relevant if d not in docs]
        if pool and rng.random() < quality:
            docs.append(rng.choice(pool))
        else:
            docs.append(f"d{rng.randint(200, 1400)}")
    return docs


def _results(docs: list[str], mode: str, case: dict[str, Any], hostile: bool) -> list[QueryResult]:
    out = []
    for rank, doc in enumerate(docs, start=1):
        text = f"Chunk of {doc} about {case['query'][:40]}. " + " ".join(WORDS[rank % 7 :][:12])
        if hostile:
            text += f" {HOSTILE}"
        out.append(
            QueryResult(
                id=f"{mode}:{case['id']}:{doc}#c{rank}",
                text=text,
                score=round(1.0 / (rank + 0.5), 6),
                source={"benchmark_document_id": doc, "chunk_id": f"{doc}#c{rank}"},
                metadata={"title": f"Title {doc}" + (f" {HOSTILE}" if hostile else "")},
            )
        )
    return out


def _case_result(case, mode, rng, quality, k_values, n_results, judge, errors, hostile):
    docs = _ranking(case, rng, quality, n_results)
    results = _results(docs, mode, case, hostile)
    good = rng.random() < quality
    answer = case["answer"] if good else f"It is unrelated to {rng.choice(WORDS)}."
    if hostile:
        answer += f" {HOSTILE}"
    response = QueryResponse(
        mode=mode,
        results=tuple(results),
        answer=answer,
        trace=(
            QueryTraceEvent(stage="retrieve", message=f"{mode} top-{n_results}"),
            QueryTraceEvent(stage="generate", message="extractive answer"),
        ),
        metadata={"retriever": mode},
    )
    scores = _retrieval_scores(case, docs, k_values)
    scores.append(_evidence_recall(case, results, 10))
    scores.append(EvaluationScore(name="answer_contains", value=good, passed=good))
    if judge:
        scores.append(_judge(case, good, rng, errors, hostile))
    return EvaluationCaseResult(
        case_id=case["id"],
        query=case["query"],
        query_mode=mode,
        scores=tuple(scores),
        response=response,
        latency_ms=round(rng.lognormvariate(3.0 + 0.3 * len(mode) % 3, 0.5), 3),
        metadata=_case_metadata(case),
    )


def _case_metadata(case: dict[str, Any]) -> dict[str, Any]:
    return {"expected": case["expected"].to_dict(), "labels": case["labels"]}


def _failed(case: dict[str, Any], mode: str, hostile: bool) -> EvaluationCaseResult:
    message = "connection reset by peer" + (f" {HOSTILE}" if hostile else "")
    return EvaluationCaseResult(
        case_id=case["id"],
        query=case["query"],
        query_mode=mode,
        error=EvaluationError.from_exception(ConnectionError(message)),
        latency_ms=5000.0,
        metadata=_case_metadata(case),
    )


def retrieval_values(qrels: dict[str, int], docs: list[str], k: int) -> dict[str, float]:
    """trec_eval-style ndcg/map/recall/precision@k and mrr@k of a ranked document list."""
    ranked = list(dict.fromkeys(docs))[:k]
    relevant = {d: g for d, g in qrels.items() if g > 0}
    gains = [relevant.get(d, 0) for d in ranked]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    hits, precisions = 0, []
    for i, g in enumerate(gains):
        if g > 0:
            hits += 1
            precisions.append(hits / (i + 1))
    first = next((i + 1 for i, g in enumerate(gains) if g > 0), None)
    return {
        f"ndcg@{k}": dcg / idcg if idcg else 0.0,
        f"map@{k}": sum(precisions) / len(relevant) if relevant else 0.0,
        f"recall@{k}": hits / len(relevant) if relevant else 0.0,
        f"precision@{k}": hits / k,
        f"mrr@{k}": 1.0 / first if first else 0.0,
    }


def _retrieval_scores(case, docs, k_values) -> list[EvaluationScore]:
    names = [f"{m}@{k}" for m in ("ndcg", "map", "recall", "precision") for k in k_values]
    names.append("mrr@10")
    if not case["qrels"]:
        return [EvaluationScore.skipped_score(n, "no qrels for this query") for n in names]
    values: dict[str, float] = {}
    for k in (*k_values, 10):
        values.update(retrieval_values(case["qrels"], docs, k))
    return [
        EvaluationScore(name=n, value=values[n], metadata={"k": int(n.split("@")[1])})
        for n in names
    ]


def _evidence_recall(case, results: list[QueryResult], k: int) -> EvaluationScore:
    name = f"evidence_recall@{k}"
    evidence = case["expected"].evidence
    if not evidence:
        return EvaluationScore.skipped_score(name, "no expected evidence", k=k)
    matched, missing = [], []
    for index, item in enumerate(evidence):
        hit = next(
            (
                (rank, r.id)
                for rank, r in enumerate(results[:k], 1)
                if r.source.get("benchmark_document_id") == item.reference_id
            ),
            None,
        )
        base = {"index": index, "label": item.label(), "reference_id": item.reference_id}
        if hit:
            matched.append({**base, "rank": hit[0], "result_id": hit[1], "matched_by": "document"})
        else:
            missing.append(base)
    value = len(matched) / len(evidence)
    meta = {
        "k": k,
        "matched": len(matched),
        "expected": len(evidence),
        "matched_evidence": matched,
        "missing_evidence": missing,
    }
    return EvaluationScore(name=name, value=value, passed=value >= 0.5, metadata=meta)


def _judge(case, good: bool, rng: random.Random, errors: bool, hostile: bool) -> EvaluationScore:
    name = "judge_correctness"
    if errors and int(case["id"][1:]) % 17 == 5:
        return EvaluationScore.error_score(name, TimeoutError("judge timed out after 30 s"))
    value = round(min(1.0, max(0.0, (0.8 if good else 0.25) + rng.uniform(-0.2, 0.2))), 3)
    reason = (
        "The answer states the expected relationship and cites the retrieved passage."
        if good
        else "The answer does not mention the expected relationship; it talks about something else."
    )
    key = ("reason", "reasoning", "explanation")[int(case["id"][1:]) % 3]
    meta = {
        key: reason + (f" {HOSTILE}" if hostile else ""),
        "model": "judge-mini",
        "prompt_version": "v1",
        "usage": {"prompt_tokens": 412, "completion_tokens": 38},
    }
    return EvaluationScore(name=name, value=value, passed=value >= 0.5, metadata=meta)


def _report(results, modes, label, partial, hostile, report_id) -> EvaluationReport:
    metadata: dict[str, Any] = {"run_seconds": 42.5}
    if label:
        metadata["label"] = label
    if partial:
        metadata["partial"] = True
    if hostile:
        metadata["note"] = HOSTILE
    name = "bm25-chunks" + (f" {HOSTILE}" if hostile else "")
    return EvaluationReport(
        report_id=report_id,
        benchmark=BenchmarkManifest(name="cranfield-synthetic", version="1", split="test"),
        knowledge_base_name="kb-synthetic",
        knowledge_base_manifest={"name": "kb-synthetic", "documents": 1400, "chunks": 5200},
        recipe_manifest={
            "name": name,
            "chunk_size": 200,
            "chunk_overlap": 20,
            "embedder": "lsa-256",
        },
        query_modes=tuple(modes),
        score_summary={},
        case_results=tuple(results),
        started_at="2026-11-29T22:00:00+00:00",
        finished_at="2026-11-29T22:00:42.500000+00:00",
        metadata=metadata,
    )


def live_markup(html_text: str) -> list[str]:
    """Live markup found by parsing ``html_text``: script tags, on* attributes, javascript: URLs.

    Returns human-readable findings (empty when the HTML is safe). Our own ``<script>`` tags
    (plotly.js, figure code) are allowed only when they carry no data payload marker.
    """
    from html.parser import HTMLParser

    findings: list[str] = []

    class Finder(HTMLParser):
        in_script = False

        def handle_starttag(self, tag, attrs_):
            if tag == "script":
                self.in_script = True
            if tag in {"img", "iframe", "object", "embed"} and any(
                v == "x" for k, v in attrs_ if k == "src"
            ):
                findings.append(f"<{tag}> from data")
            for key, value in attrs_:
                if key.lower().startswith("on"):
                    findings.append(f"{tag} {key}={value!r}")
                if value and "javascript:" in value.lower().replace(" ", ""):
                    findings.append(f"{tag} {key}={value!r}")

        def handle_endtag(self, tag):
            if tag == "script":
                self.in_script = False

        def handle_data(self, data):
            # a payload inside our own script is only safe when JSON-escaped
            raw_payload = "<script>alert(1)" in data or "<img src=x" in data
            if self.in_script and raw_payload:
                findings.append("payload inside <script>")

    Finder().feed(html_text)
    return findings


def page_payloads(page: str) -> list[dict[str, Any]]:
    """The report payloads a standalone explorer page embeds (its widget models' state), with
    their string tables rebuilt from the page's text chunks."""
    from heta_notebook.display._texts import resolve
    from heta_notebook.display._widgets import unpack

    out = []
    for part in page.split('-models">')[1:]:
        models = json.loads(part.split("</script>", 1)[0])

        def chunk_of(ref: str, models: dict = models) -> dict[str, Any]:
            return unpack(models[ref.removeprefix("IPY_MODEL_")]["packed"])

        out += [resolve(unpack(m["payload"]), chunk_of) for m in models.values() if "payload" in m]
    return out


def payload_size(payload: dict[str, Any]) -> int:
    """Bytes of an explorer payload as compact JSON (what a saved notebook would store)."""
    return len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def plotly_js_copies(page: str) -> dict[str, int]:
    """How many copies of plotly.js ``page`` holds: raw (the library's first 200 characters)
    and compressed (``display._setup.plotlyjs_block``: each must unpack to the full library
    or to the shipped cartesian bundle, ``cartesian`` counts those)."""
    import base64
    import gzip
    import re

    from plotly.offline import get_plotlyjs

    from heta_notebook.display._setup import _cartesian_gzip

    source = get_plotlyjs()
    shipped = _cartesian_gzip()
    cartesian = gzip.decompress(shipped).decode("utf-8") if shipped else None
    # attributes in any order: nbconvert's export writes id before type
    packed = re.findall(r'<script(?=[^>]*\bid="hn-plotlyjs-gz")[^>]*>([^<]*)</script>', page)
    unpacked = [gzip.decompress(base64.b64decode(block)).decode("utf-8") for block in packed]
    assert all(text in (source, cartesian) for text in unpacked)
    return {
        "raw": page.count(source[:200]),
        "compressed": len(packed),
        "cartesian": sum(text == cartesian for text in unpacked),
    }
