"""Time the 25 default BEIR metrics over a synthetic 10,000-query x 100-result run.

Compares, in one process: our batch path from records (``evaluate_batch`` on cases and
chunk responses, building every EvaluationScore), our path from a plain run dict
(``evaluate_run``, same input as pytrec_eval), pytrec_eval, and ranx (its numba JIT is warmed
on a tiny input first and not timed). Prints a Markdown table (``--out FILE`` also writes it); results are kept in bench/README.md.

Run by hand (not in the test suite)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /work/venv/bin/python bench/metrics.py
"""

from __future__ import annotations

import argparse
import gc
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from heta_notebook.evaluators._retrieval import beir_default_metrics, evaluate_batch, evaluate_run
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
    from heta_notebook.evaluators._retrieval import trec_ranking

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


def pytrec_from_records(cases: list, responses: list) -> list:
    """pytrec_eval as the engine of the records path: map chunks to documents the same way,
    evaluate, wrap values as EvaluationScores. A lower bound: no MRR@k, no metadata."""
    import pytrec_eval

    from heta_notebook.evaluators._matching import qrels_of, ranked_document_ids
    from heta_notebook.evaluators._retrieval import paused_gc
    from heta_notebook.schema import EvaluationScore

    with paused_gc():
        qrels, run = {}, {}
        for case, response in zip(cases, responses, strict=True):
            ranked = ranked_document_ids(response.results, 100)
            qrels[case.case_id] = qrels_of(case.expected.evidence)
            run[case.case_id] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
        measured = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES | {"recip_rank"}).evaluate(
            run
        )
        return [
            [
                EvaluationScore.model_construct(name=n, value=v, passed=None, metadata={})
                for n, v in values.items()
            ]
            for values in measured.values()
        ]


def ranx_evaluator(qrels: dict, run: dict) -> tuple[Callable[[], object], Callable[[], object]]:
    """(build, evaluate) callables for ranx, after compiling its numba kernels on a tiny input."""
    from ranx import Qrels, Run, evaluate

    tiny_qrels, tiny_run = synthetic(20, 100, seed=1)
    for _ in range(2):  # compile every numba kernel (building and scoring) before timing
        evaluate(Qrels(tiny_qrels), Run(tiny_run), RANX_METRICS, save_results_in_run=False)
    built: dict[str, object] = {}

    def build() -> object:
        built["pair"] = (Qrels(qrels), Run(run))
        return built["pair"]

    def score() -> object:
        rq, rr = built["pair"]
        return evaluate(rq, rr, RANX_METRICS, save_results_in_run=False)

    return build, score


def interleaved(paths: dict[str, Callable[[], object]], repeat: int) -> tuple[dict, dict]:
    """Median seconds per path, running the paths in turn each round (the machine is shared,
    so interleaving spreads load spikes over all of them), and each path's last result.
    Also prints each path's median and best process CPU seconds (the loaded box's fair clock)."""
    times: dict[str, list[float]] = {name: [] for name in paths}
    cpu: dict[str, list[float]] = {name: [] for name in paths}
    results: dict[str, object] = {}
    for _ in range(repeat):
        for name, fn in paths.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            results[name] = fn()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    for name, spent in cpu.items():
        print(f"{name}: CPU s median {statistics.median(spent):.3f}, best {min(spent):.3f}")
    return {name: statistics.median(t) for name, t in times.items()}, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="also write the table here")
    parser.add_argument(
        "--no-records", action="store_true", help="only the run-dict paths (faster at 100k)"
    )
    args = parser.parse_args()

    qrels, run = synthetic(args.queries, args.depth)
    cases, responses = ([], []) if args.no_records else records(qrels, run)
    # The million records would otherwise be scanned by every full collection any path's
    # garbage triggers (pytrec_eval's median tripled): the inputs are frozen, for all paths alike.
    gc.collect()
    gc.freeze()
    metrics = beir_default_metrics(K_VALUES)

    import pytrec_eval

    paths = {
        "run": lambda: evaluate_run(qrels, run, metrics),
        "pytrec": lambda: pytrec_eval.RelevanceEvaluator(
            qrels, TREC_MEASURES | {"recip_rank"}
        ).evaluate(run),
    }
    try:  # ranx is an optional peer: without it its rows are left out
        paths["ranx_build"], paths["ranx"] = ranx_evaluator(qrels, run)
    except ImportError:
        print("ranx is not installed: its rows are left out")
    if not args.no_records:
        paths["records"] = lambda: evaluate_batch(metrics, cases, responses)
        paths["pytrec_records"] = lambda: pytrec_from_records(cases, responses)
    seconds, results = interleaved(paths, args.repeat)
    ranx_means = results.get("ranx")
    ours, theirs, rows = results["run"], results["pytrec"], results.get("records")
    check = _agreement(ours, theirs, rows, ranx_means)
    lines = _report(args, seconds, check)
    print("\n".join(lines))
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _agreement(ours: dict, theirs: dict, rows: list | None, ranx_means: dict | None) -> str:
    """Largest difference between our numbers and pytrec_eval's / ranx's means."""
    worst = 0.0
    for q, measures in theirs.items():
        for k in K_VALUES:
            worst = max(worst, abs(ours[q][f"beir_ndcg@{k}"] - measures[f"ndcg_cut_{k}"]))
            worst = max(worst, abs(ours[q][f"beir_map@{k}"] - measures[f"map_cut_{k}"]))
            worst = max(worst, abs(ours[q][f"beir_recall@{k}"] - measures[f"recall_{k}"]))
            worst = max(worst, abs(ours[q][f"beir_precision@{k}"] - measures[f"P_{k}"]))
    parts = [f"max |ours - pytrec_eval| per query over ndcg/map/recall/P: {worst:.1e}"]
    if rows is not None:
        records_vs_run = max(
            abs(score.value - ours[case_id][score.name])
            for case_id, row in zip(ours, rows, strict=True)
            for score in row
        )
        parts.append(f"records path vs run path: {records_vs_run:.1e}")
    if ranx_means is not None:
        ours_ndcg = np.mean([v["beir_ndcg@10"] for v in ours.values()])
        parts.append(f"mean nDCG@10 vs ranx: {abs(ours_ndcg - ranx_means['ndcg@10']):.1e}")
    return "; ".join(parts)


def _report(args: argparse.Namespace, t: dict[str, float], check: str) -> list[str]:
    def row(label: str, seconds: float, base: float) -> str:
        return f"| {label} | {seconds:.3f} | {base / seconds:.2f}x |"

    lines = [
        "# Ranking metrics: heta_notebook vs pytrec_eval vs ranx",
        "",
        f"Synthetic run: {args.queries:,} queries x {args.depth} results, 30 judged documents per "
        "query (grades 0..3, 15 of them retrieved). Metrics: nDCG, MAP, recall, precision and MRR "
        f"at k = {', '.join(map(str, K_VALUES))} (25). pytrec_eval computes ndcg_cut, map_cut, "
        "recall, P at the same k plus recip_rank (it has no MRR@k). Median of "
        f"{args.repeat} interleaved rounds in one process; Python {platform.python_version()}, "
        f"{platform.machine()}, 2 cores shared with other jobs (absolute times are noisy; "
        "compare the ratios). ranx's numba kernels are compiled on a tiny input first (not timed).",
        "",
        "## Same input as pytrec_eval: a run dict `{query: {doc: score}}`",
        "",
        "| path | seconds | speed vs pytrec_eval |",
        "|---|---:|---:|",
        row("heta_notebook `evaluate_run`", t["run"], t["pytrec"]),
        row(
            "pytrec_eval `RelevanceEvaluator(qrels, measures).evaluate(run)`",
            t["pytrec"],
            t["pytrec"],
        ),
    ]
    if "ranx" in t:
        ranx_total = t["ranx_build"] + t["ranx"]
        lines += [
            row("ranx `evaluate` (Qrels/Run already built)", t["ranx"], t["pytrec"]),
            row("ranx build `Qrels` + `Run` from the dicts + `evaluate`", ranx_total, t["pytrec"]),
            "",
            f"evaluate_run is {t['ranx'] / t['run']:.2f}x the speed of ranx's evaluate alone and "
            f"{ranx_total / t['run']:.2f}x ranx from dicts.",
        ]
    if "records" in t:
        lines += [
            "",
            f"## From records: cases + {args.queries * args.depth:,} chunk results in, "
            f"{args.queries * 25:,} EvaluationScores out",
            "",
            "| path | seconds | speed vs pytrec_eval engine |",
            "|---|---:|---:|",
            row(
                "heta_notebook `evaluate_batch(beir_default_metrics(), cases, responses)`",
                t["records"],
                t["pytrec_records"],
            ),
            row(
                "same mapping, pytrec_eval as the engine (lower bound: no MRR@k, no metadata)",
                t["pytrec_records"],
                t["pytrec_records"],
            ),
            "",
            "The records path maps every chunk result to its document (`matching.py`), reads the "
            "qrels from each case's evidence and builds one EvaluationScore (with "
            "heta-framework's metadata) per case and metric; that bookkeeping, not the metric "
            "arithmetic, is most of its time.",
        ]
    return [*lines, "", f"Agreement: {check}."]


if __name__ == "__main__":
    main()
