"""Benchmark of the embedded KB on Cranfield: speed vs heta-framework, quality vs pytrec_eval/rank_bm25.

Run by hand (not part of the test suite)::

    python bench/kb.py [--repeats 3]

1. Speed: build + answer all 225 queries (top 10, one ``await kb.query`` per query, as a
   runner does) with our BM25 recipe vs heta-framework 0.1.2's offline full-text recipe
   (TextParser + SplitDocuments(unicode, 600/60) + IndexFullText on InMemoryTextIndexStore and
   a LocalObjectStore, built the way heta's BenchmarkRunner builds: raw documents written to the
   ObjectStore, ``KnowledgeBase.create``, ``kb.query``). Best of ``--repeats`` runs; ratio printed.
2. Quality: nDCG@10 and MAP (pytrec_eval, trec_eval conventions) of every recipe × mode, and
   of heta's recipe; a second, independent BM25 (rank_bm25, same bm25s tokens, k1=1.2, b=0.75,
   Lucene idf, and its stock Okapi idf) must land close to ours.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pytrec_eval
from rank_bm25 import BM25Okapi

from heta_notebook.benchmarks._beir import BeirBenchmark
from heta_notebook.evaluators._matching import ranked_document_ids
from heta_notebook.kb._bm25 import tokenize
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._recipe import Bm25, Chunking, Recipe

BM25_ONLY = {"dense": None, "hybrid": None}
MEASURES = {"ndcg_cut.10", "map"}
HETA_TIMES: dict[str, float] = {}


def best_of(repeats: int, function) -> tuple[float, object]:
    """Smallest wall time of ``repeats`` calls (the machine is shared) and the last result."""
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return min(times), result


def evaluate(cases, ranked: dict[str, list[str]]) -> dict[str, float]:
    """Mean nDCG@10 and MAP with pytrec_eval (scores strictly decreasing: no tie ambiguity)."""
    qrels = {c.case_id: {e.reference_id: e.relevance for e in c.expected.evidence} for c in cases}
    run = {
        q: {d: float(len(ids) - i) for i, d in enumerate(ids)} or {"-": 0.0}
        for q, ids in ranked.items()
    }
    scores = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    return {m: float(np.mean([s[m] for s in scores.values()])) for m in ("ndcg_cut_10", "map")}


# --------------------------------------------------------------------------- ours


def ours_build_and_query(recipe: Recipe, documents, cases, top_k: int = 10):
    """Build, then one ``await kb.query`` per case (the runner's access pattern)."""

    async def run():
        kb = await KnowledgeBase.build(recipe, documents)
        return kb, [await kb.query(c.query, mode="full_text_search", top_k=top_k) for c in cases]

    return asyncio.run(run())


def ours_quality(recipe: Recipe, documents, cases) -> dict[str, dict[str, float]]:
    kb = KnowledgeBase.build_sync(recipe, documents)
    queries = [c.query for c in cases]
    out = {}
    for mode in kb.query_modes:
        responses = kb.query_many(queries, mode=mode, top_k=1000)
        out[mode] = evaluate(
            cases,
            {
                c.case_id: ranked_document_ids(r.results)
                for c, r in zip(cases, responses, strict=True)
            },
        )
    return out


# --------------------------------------------------------------------------- rank_bm25


class LuceneIdfBM25(BM25Okapi):
    """rank_bm25's Okapi scorer with Lucene's idf, log(1 + (N - n + 0.5) / (n + 0.5)), as bm25s 'lucene'."""

    def _calc_idf(self, nd):
        self.idf = {
            w: math.log(1 + (self.corpus_size - n + 0.5) / (n + 0.5)) for w, n in nd.items()
        }


def rank_bm25_quality(cls, documents, cases, config: Bm25) -> dict[str, float]:
    ids = [d.document_id for d in documents]
    model = cls(tokenize([d.read_text() for d in documents], config), k1=config.k1, b=config.b)
    ranked = {}
    for case, tokens in zip(cases, tokenize([c.query for c in cases], config), strict=True):
        scores = model.get_scores(tokens)
        order = np.lexsort((np.arange(len(ids)), -scores))[:1000]
        ranked[case.case_id] = [ids[i] for i in order if scores[i] > 0]
    return evaluate(cases, ranked)


# --------------------------------------------------------------------------- heta-framework


def offline_tiktoken() -> None:
    """Use the cl100k file litellm ships so heta's parser does not try the network per document."""
    spec = importlib.util.find_spec("litellm")
    if spec and spec.submodule_search_locations:
        folder = (
            Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
        )
        if folder.is_dir():
            os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(folder))


def heta_recipe(objects_root: Path):
    """heta-framework's offline full-text recipe: the one that made the committed fixture."""
    path = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "make_heta_report.py"
    spec = importlib.util.spec_from_file_location("make_heta_report", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.offline_recipe(objects_root)


def heta_build_and_query(manifest, documents, cases, top_k: int = 10):
    """Build and query exactly as heta-framework's BenchmarkRunner does."""
    from heta_framework.kb import KnowledgeBase as HetaKnowledgeBase

    async def run():
        with tempfile.TemporaryDirectory() as root:
            recipe = heta_recipe(Path(root))
            keys = []
            for document in documents:
                key = document.raw_key(manifest)
                await recipe.stores.objects.put(key, document.read_text().encode("utf-8"))
                keys.append(key)
            artifacts = {"benchmark_document_keys": tuple(keys), "source_keys": tuple(keys)}
            started = time.perf_counter()
            kb = await HetaKnowledgeBase.create(
                recipe=recipe, name="bench", initial_artifacts=artifacts
            )
            HETA_TIMES["build (KnowledgeBase.create)"] = time.perf_counter() - started
            started = time.perf_counter()
            responses = [
                await kb.query(c.query, mode="full_text_search", top_k=top_k) for c in cases
            ]
            HETA_TIMES["225 queries"] = time.perf_counter() - started
            return responses

    return asyncio.run(run())


def heta_ranked(responses, cases, top_k: int = 10) -> dict[str, list[str]]:
    """Documents in rank order from heta results (raw keys → document ids, deduplicated)."""
    from heta_notebook.schema import QueryResult

    ranked = {}
    for case, response in zip(cases, responses, strict=True):
        results = [
            QueryResult(id=str(r.id), text=r.text, source=dict(r.source)) for r in response.results
        ]
        ranked[case.case_id] = ranked_document_ids(results)
    return ranked


# --------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--heta-repeats", type=int, default=1)
    args = parser.parse_args()
    manifest, documents, cases = BeirBenchmark.cranfield().load()
    print(f"Cranfield: {len(documents)} documents, {len(cases)} queries; cores: {os.cpu_count()}\n")

    docs_bm25 = Recipe(name="bm25 documents", **BM25_ONLY)
    chars_bm25 = Recipe(
        name="bm25 600/60 chars",
        chunking=Chunking(unit="characters", size=600, overlap=60),
        **BM25_ONLY,
    )
    print("## Speed: build + 225 queries (top 10, one await kb.query each), best of runs\n")
    print("| system | seconds | x heta |\n|---|---:|---:|")
    offline_tiktoken()
    heta_seconds, heta_responses = best_of(
        args.heta_repeats, lambda: heta_build_and_query(manifest, documents, cases)
    )
    for recipe in (docs_bm25, chars_bm25):
        seconds, _ = best_of(
            args.repeats, lambda r=recipe: ours_build_and_query(r, documents, cases)
        )
        print(f"| ours, {recipe.name} | {seconds:.3f} | {heta_seconds / seconds:.0f}x faster |")
    print(
        f"| heta-framework 0.1.2 offline full-text (600/60 unicode chunks) | {heta_seconds:.3f} | 1x |"
    )
    print("\nheta-framework: " + ", ".join(f"{k} {v:.1f} s" for k, v in HETA_TIMES.items()))
    kb = KnowledgeBase.build_sync(docs_bm25, documents)
    queries = [c.query for c in cases]
    batch, _ = best_of(
        args.repeats, lambda: kb.query_many(queries, mode="full_text_search", top_k=10)
    )
    build, _ = best_of(args.repeats, lambda: KnowledgeBase.build_sync(docs_bm25, documents))
    print(
        f"\nours, bm25 documents: build {build:.3f} s; 225 queries batched (query_many) {batch:.3f} s\n"
    )

    print("## Quality: pytrec_eval over the top 1000 (documents deduplicated from chunks)\n")
    print("| system | mode | nDCG@10 | MAP |\n|---|---|---:|---:|")
    recipes = (
        Recipe(name="documents"),
        Recipe(name="100-word chunks", chunking=Chunking(unit="words", size=100, overlap=20)),
        chars_bm25,
    )
    for recipe in recipes:
        for mode, values in ours_quality(recipe, documents, cases).items():
            print(
                f"| ours, {recipe.name} | {mode} | {values['ndcg_cut_10']:.4f} | {values['map']:.4f} |"
            )
    for name, cls in (
        ("rank_bm25, Lucene idf", LuceneIdfBM25),
        ("rank_bm25, Okapi idf", BM25Okapi),
    ):
        values = rank_bm25_quality(cls, documents, cases, Bm25())
        print(
            f"| {name} (same tokens, k1=1.2, b=0.75) | full_text_search | {values['ndcg_cut_10']:.4f} | {values['map']:.4f} |"
        )
    values = evaluate(cases, heta_ranked(heta_responses, cases))
    print(
        f"| heta-framework offline full-text (top 10 only) | full_text_search | {values['ndcg_cut_10']:.4f} | {values['map']:.4f} |"
    )


if __name__ == "__main__":
    main()
