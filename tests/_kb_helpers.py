"""Shared helpers for the benchmarks/KB tests: Cranfield loaded once, nDCG via pytrec_eval."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytrec_eval

from heta_notebook.benchmarks._beir import BeirBenchmark
from heta_notebook.benchmarks._protocol import LoadedBenchmark
from heta_notebook.evaluators._matching import ranked_document_ids
from heta_notebook.schema import BenchmarkCase, QueryResponse


@functools.lru_cache(maxsize=1)
def cranfield() -> LoadedBenchmark:
    """The packaged Cranfield benchmark, loaded once per test session."""
    return BeirBenchmark.cranfield().load()


def qrels_of(cases: Sequence[BenchmarkCase]) -> dict[str, dict[str, int]]:
    """pytrec_eval qrels from the cases' evidence."""
    return {c.case_id: {e.reference_id: e.relevance for e in c.expected.evidence} for c in cases}


def run_of(cases: Sequence[BenchmarkCase], responses: Sequence[QueryResponse]) -> dict:
    """pytrec_eval run: documents in rank order (chunks mapped and deduplicated), scores descending."""
    run = {}
    for case, response in zip(cases, responses, strict=True):
        ranked = ranked_document_ids(response.results)
        run[case.case_id] = {doc: float(len(ranked) - i) for i, doc in enumerate(ranked)}
    return run


def mean_metric(cases, run: dict, measure: str = "ndcg_cut.10") -> float:
    """Mean of one pytrec_eval measure over the cases (queries with no results count as 0)."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_of(cases), {measure})
    scores = evaluator.evaluate({q: run.get(q) or {"__none__": 0.0} for q in qrels_of(cases)})
    key = measure.replace(".", "_")
    return float(np.mean([s[key] for s in scores.values()]))


def random_run(cases, document_ids: Sequence[str], k: int = 10, seed: int = 0) -> dict:
    """A random ranking of ``k`` documents per case (the baseline BM25 must beat)."""
    rng = np.random.default_rng(seed)
    ids = np.array(list(document_ids))
    return {
        c.case_id: {str(d): float(k - i) for i, d in enumerate(rng.choice(ids, k, replace=False))}
        for c in cases
    }


def write_jsonl(path: Path, rows: Sequence[object]) -> Path:
    """Write rows (dicts or raw strings) one per line."""
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_beir(folder: Path, corpus, queries, qrels_lines, split: str = "test") -> Path:
    """A small BEIR folder: corpus/queries rows and raw qrels lines (header added)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "corpus.jsonl", corpus)
    write_jsonl(folder / "queries.jsonl", queries)
    (folder / "qrels").mkdir(exist_ok=True)
    text = "query-id\tcorpus-id\tscore\n" + "".join(line + "\n" for line in qrels_lines)
    (folder / "qrels" / f"{split}.tsv").write_text(text, encoding="utf-8")
    return folder


def write_topics_beir(folder: Path, topics: int = 24, docs_per_topic: int = 6, seed: int = 0):
    """A second, generated BEIR folder whose query ids ("1", "2", ...) overlap Cranfield's.

    Each topic has its own words; a document mixes them with shared filler words (the
    later documents of a topic more diluted), a query names a few topic words, and the
    qrels grade the topic's documents 2 (first half) or 1.
    """
    rng = np.random.default_rng(seed)
    filler = [f"common{i}" for i in range(40)]
    corpus, queries, qrels = [], [], []
    for t in range(1, topics + 1):
        words = [f"t{t}w{j}" for j in range(8)]
        for d in range(docs_per_topic):
            own = list(rng.choice(words, 6 - d // 2))
            text = " ".join(own + list(rng.choice(filler, 10 + 3 * d)))
            doc_id = f"doc{t}-{d}"
            corpus.append({"_id": doc_id, "title": f"topic {t} note {d}", "text": text})
            qrels.append(f"{t}\t{doc_id}\t{2 if d < docs_per_topic // 2 else 1}")
        query = " ".join([*rng.choice(words, 3), *rng.choice(filler, 2)])
        queries.append({"_id": str(t), "text": query})
    return write_beir(folder, corpus, queries, qrels)
