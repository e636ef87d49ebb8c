"""Cranfield end to end: two recipes × three query modes, reports saved to a local store.

Run: ``python examples/cranfield_recipes.py [STORE_DIR]`` (default ``./heta_reports``).
Runs offline with no API key. Run it twice: the second run reuses the built indexes.
Interrupt it (Ctrl-C) and run it again: it resumes where it stopped.
"""

from __future__ import annotations

import sys

from heta_notebook import (
    BeirBenchmark,
    BenchmarkRunConfig,
    Chunking,
    Recipe,
    ReportStore,
    run_benchmark,
)

MODES = ("full_text_search", "vector_search", "hybrid_search")


def main(store_dir: str = "heta_reports") -> None:
    """Run both recipes on Cranfield, save the reports, print nDCG@10 / MAP@100 / latency."""
    store = ReportStore(store_dir)
    recipes = {
        "whole-documents": Recipe(name="whole-documents"),
        "chunks-100": Recipe(
            name="chunks-100", chunking=Chunking(unit="words", size=100, overlap=20)
        ),
    }
    runs = run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipes=recipes,
        knowledge_base_name="cranfield",
        query_modes=MODES,
        config=BenchmarkRunConfig(top_k=100, max_concurrent_queries=8),
        store=store,
        resume=True,
    )
    summary = runs.summary()
    table = summary[summary.score.isin(["beir_ndcg@10", "beir_map@100", "beir_recall@100"])]
    print(table.pivot_table(index=["label", "query_mode"], columns="score", values="mean").round(4))
    for label, report in runs.reports.items():
        latency = report.metadata["latency"]
        p50 = ", ".join(f"{mode} {info['p50_ms']:.1f} ms" for mode, info in latency.items())
        print(f"{label}: {len(report.case_results)} case results, p50 latency: {p50}")
    print(f"saved to {store.root}:")
    listing = store.list()[["knowledge_base_name", "report_id", "n_cases", "partial"]]
    print(listing.to_string(index=False))


if __name__ == "__main__":
    main(*sys.argv[1:2])
