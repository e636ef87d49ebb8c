"""Time the 25 default BEIR metrics over a synthetic 10,000-query x 100-result run.

Compares, in one process: our batch path from records (``evaluate_batch`` on cases and
chunk responses, building every EvaluationScore), our path from a plain run dict
(``evaluate_run``, same input as pytrec_eval), pytrec_eval, and ranx (its numba JIT is warmed
on a tiny input first and not timed). Writes ``bench/metrics.md``.

Run by hand (not in the test suite)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /work/venv/bin/python bench/metrics.py
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from heta_notebook.evaluators.retrieval import beir_default_metrics, evaluate_batch, evaluate_run
from heta_notebook.schema import (
    BenchmarkCase,
    BenchmarkEvidence,
    BenchmarkExpected,
    QueryResponse,
    QueryResult,
)

K_VALUES = (1, 3, 5, 10, 100)
TREC_MEASURES = {
    f"{m}.{','.join(map(str, K_VALUES))}" for m in ("ndcg_cut", "map_cut", "recall", "P")
}
RANX_METRICS = [f"{m}@{k}" for m in ("ndcg", "map", "recall", "precision", "mrr") for k in K_VALUES]


def synthetic(n_queries: int, depth: int, seed: int = 0) -> tuple[dict, dict]:
    """qrels (30 judged docs per query, grades 0..3, half of them retrieved) and a scored run."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        docs = rng.choice(100_000, size=depth + 15, replace=False)
        retrieved, unretrieved = docs[:depth], docs[depth:]
        judged = np.concatenate([rng.choice(retrieved, 15, replace=False), unretrieved])
        grades = rng.integers(0, 4, size=judged.size)
        grades[0] = max(grades[0], 1)
        qrels[f"q{q}"] = {f"d{d}": int(g) for d, g in zip(judged, grades, strict=True)}
        run[f"q{q}"] = {
            f"d{d}": float(s) for d, s in zip(retrieved, rng.random(depth), strict=True)
        }
    return qrels, run


def records(qrels: dict, run: dict) -> tuple[list[BenchmarkCase], list[QueryResponse]]:
    """The same data as cases with qrels evidence and chunk-level responses (not timed)."""
    from heta_notebook.evaluators.retrieval import trec_ranking

    cases, responses = [], []
    for q, judged in qrels.items():
        evidence = tuple(
            BenchmarkEvidence(reference_id=d, metadata={"relevance": g}) for d, g in judged.items()
        )
        cases.append(
            BenchmarkCase(case_id=q, query=q, expected=BenchmarkExpected(evidence=evidence))
        )
        results = tuple(
            QueryResult(id=f"{d}#0", text="", score=run[q][d], source={"benchmark_document_id": d})
            for d in trec_ranking(run[q])
        )
        responses.append(QueryResponse(mode="bm25", results=results))
    return cases, responses


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Median wall time of ``repeat`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def time_pytrec(qrels: dict, run: dict, repeat: int) -> tuple[float, dict]:
    import pytrec_eval

    def go() -> dict:
        return pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES | {"recip_rank"}).evaluate(run)

    return timed(go, repeat)


def time_ranx(qrels: dict, run: dict, repeat: int) -> tuple[float, float, dict]:
    """(build Qrels/Run seconds, evaluate seconds, means) after warming numba on a tiny input."""
    from ranx import Qrels, Run, evaluate

    evaluate(Qrels({"q": {"a": 1}}), Run({"q": {"a": 1.0, "b": 0.5}}), RANX_METRICS)
    build, (rq, rr) = timed(lambda: (Qrels(qrels), Run(run)), 1)
    seconds, means = timed(
        lambda: evaluate(rq, rr, RANX_METRICS, save_results_in_run=False), repeat
    )
    return build, seconds, means


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("metrics.md"))
    args = parser.parse_args()

    qrels, run = synthetic(args.queries, args.depth)
    cases, responses = records(qrels, run)
    metrics = beir_default_metrics(K_VALUES)

    t_records, rows = timed(lambda: evaluate_batch(metrics, cases, responses), args.repeat)
    t_run, ours = timed(lambda: evaluate_run(qrels, run, metrics), args.repeat)
    t_pytrec, theirs = time_pytrec(qrels, run, args.repeat)
    t_ranx_build, t_ranx, ranx_means = time_ranx(qrels, run, args.repeat)

    check = _agreement(ours, theirs, rows, ranx_means)
    lines = _report(args, t_records, t_run, t_pytrec, t_ranx_build, t_ranx, check)
    print("\n".join(lines))
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _agreement(ours: dict, theirs: dict, rows: list, ranx_means: dict) -> str:
    """Largest difference between our numbers and pytrec_eval's / ranx's means."""
    worst = 0.0
    for q, measures in theirs.items():
        for k in K_VALUES:
            worst = max(worst, abs(ours[q][f"beir_ndcg@{k}"] - measures[f"ndcg_cut_{k}"]))
            worst = max(worst, abs(ours[q][f"beir_map@{k}"] - measures[f"map_cut_{k}"]))
            worst = max(worst, abs(ours[q][f"beir_recall@{k}"] - measures[f"recall_{k}"]))
            worst = max(worst, abs(ours[q][f"beir_precision@{k}"] - measures[f"P_{k}"]))
    records_vs_run = max(
        abs(score.value - ours[case_id][score.name])
        for case_id, row in zip(ours, rows, strict=True)
        for score in row
    )
    ranx_ndcg = abs(np.mean([v["beir_ndcg@10"] for v in ours.values()]) - ranx_means["ndcg@10"])
    return (
        f"max |ours - pytrec_eval| per query over ndcg/map/recall/P: {worst:.1e}; "
        f"records path vs run path: {records_vs_run:.1e}; mean nDCG@10 vs ranx: {ranx_ndcg:.1e}"
    )


def _report(args, t_records, t_run, t_pytrec, t_ranx_build, t_ranx, check) -> list[str]:
    import pytrec_eval  # noqa: F401

    return [
        "# Ranking metrics: heta_notebook vs pytrec_eval vs ranx",
        "",
        f"Synthetic run: {args.queries:,} queries x {args.depth} results, 30 judged documents per "
        "query (grades 0..3). Metrics: nDCG, MAP, recall, precision and MRR at k = "
        f"{', '.join(map(str, K_VALUES))} (25). pytrec_eval computes ndcg_cut, map_cut, recall, "
        "P at the same k plus recip_rank (it has no MRR@k). Median of "
        f"{args.repeat} runs; {platform.python_version()}, {platform.machine()}, 2 shared cores.",
        "",
        "| path | seconds | vs pytrec_eval |",
        "|---|---:|---:|",
        f"| heta_notebook `evaluate_run` (run dict in, like pytrec_eval) | {t_run:.3f} | "
        f"{t_pytrec / t_run:.1f}x faster |",
        f"| heta_notebook `evaluate_batch` (cases + 1M chunk results in, EvaluationScores out) | "
        f"{t_records:.3f} | {t_pytrec / t_records:.1f}x faster |",
        f"| pytrec_eval `RelevanceEvaluator(...).evaluate(run)` | {t_pytrec:.3f} | 1.0x |",
        f"| ranx `evaluate` (numba warm, Qrels/Run prebuilt) | {t_ranx:.3f} | "
        f"{t_pytrec / t_ranx:.1f}x faster |",
        f"| ranx building `Qrels` + `Run` from dicts (once) | {t_ranx_build:.3f} | |",
        f"| ranx total (build + evaluate) | {t_ranx_build + t_ranx:.3f} | "
        f"{t_pytrec / (t_ranx_build + t_ranx):.1f}x faster |",
        "",
        f"Ratios: evaluate_run / ranx evaluate = {t_run / t_ranx:.2f}; "
        f"evaluate_run / ranx total = {t_run / (t_ranx_build + t_ranx):.2f}; "
        f"evaluate_batch / pytrec_eval = {t_records / t_pytrec:.2f}.",
        "",
        f"Agreement: {check}.",
    ]


if __name__ == "__main__":
    main()
