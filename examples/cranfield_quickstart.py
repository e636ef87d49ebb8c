"""Cranfield with the embedded knowledge base: 2 recipes × 3 query modes, nDCG@10 each.

Runs offline with no API key (2.0–2.5 s on a quiet 2-core box, measured 2026-12-04)::

    python examples/cranfield_quickstart.py

Whole documents vs 100-word chunks (20 words overlap); BM25 (bm25s), LSA dense vectors and
their reciprocal-rank fusion. nDCG@10 comes from the core evaluator ``BeirRetrievalMetric``
(trec_eval conventions, chunks mapped back to documents), averaged with ``aggregate``.
"""

from __future__ import annotations

import time

from heta_notebook import (
    BeirBenchmark,
    BeirRetrievalMetric,
    Chunking,
    KnowledgeBase,
    Recipe,
    aggregate,
)

RECIPES = (
    Recipe(name="whole documents"),
    Recipe(name="100-word chunks", chunking=Chunking(unit="words", size=100, overlap=20)),
)


def main() -> None:
    """Build each recipe, ask every Cranfield query in every mode, print nDCG@10."""
    manifest, documents, cases = BeirBenchmark.cranfield().load()
    print(f"{manifest.key}: {len(documents)} documents, {len(cases)} judged queries\n")
    ndcg10 = BeirRetrievalMetric("ndcg", 10)
    queries = [case.query for case in cases]
    print(f"{'recipe':<18} {'mode':<18} {'nDCG@10':>8} {'n':>5} {'query s':>8}")
    for recipe in RECIPES:
        started = time.perf_counter()
        kb = KnowledgeBase.build_sync(recipe, documents, benchmark=manifest)
        built = time.perf_counter() - started
        for mode in kb.query_modes:
            started = time.perf_counter()
            # top 100 chunks so that documents split into chunks still fill the top 10
            responses = kb.query_many(queries, mode=mode, top_k=100)
            elapsed = time.perf_counter() - started
            result = aggregate(ndcg10.evaluate_batch(cases, responses))
            print(
                f"{recipe.name:<18} {mode:<18} {result.value:>8.4f} {result.n_scored:>5} {elapsed:>8.2f}"
            )
        chunks = kb.manifest()["chunks"]
        print(f"  ({recipe.name}: {chunks} chunks, all indexes built in {built:.2f} s)")


if __name__ == "__main__":
    main()
