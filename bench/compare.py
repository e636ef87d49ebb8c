"""Time compare() on 5 reports × 3 modes × 10,000 cases × 25 scores, next to ranx (run by hand).

    /work/venv/bin/python bench/compare.py [--cases 10000] [--reports 5] [--resamples 10000]

Builds the reports in memory (setup, not timed), then times: compare() (alignment), the
significance frame (paired permutation + bootstrap, 10,000 resamples, Holm), the table HTML,
and ranx on the *same per-query scores and the same comparisons* (each variant against its
baseline): its Fisher randomization test (numba, JIT warm-up excluded) and its paired t-test.
Results are recorded in bench/README.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from heta_notebook.analysis._compare import compare
from heta_notebook.schema import (
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationReport,
    EvaluationScore,
    QueryResponse,
)

MODES = ("bm25", "dense", "hybrid")


def timed(label: str, fn, repeat: int = 1):
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<58} {best:8.3f} s")
    return value, best


def build_reports(n_reports: int, n_cases: int, n_scores: int, seed: int = 0):
    """Reports whose per-case scores are random but with a small true shift per recipe."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 1, size=(n_cases, n_scores))
    names = [f"metric_{j}@10" for j in range(n_scores)]
    reports = []
    for r in range(n_reports):
        results = []
        for m, mode in enumerate(MODES):
            values = np.clip(base + 0.01 * r - 0.02 * m + rng.normal(0, 0.2, base.shape), 0, 1)
            response = QueryResponse.model_construct(mode=mode, results=(), metadata={})
            for i in range(n_cases):
                scores = tuple(
                    EvaluationScore.model_construct(
                        name=n, value=float(v), passed=None, metadata={}
                    )
                    for n, v in zip(names, values[i], strict=True)
                )
                results.append(
                    EvaluationCaseResult.model_construct(
                        case_id=f"q{i}",
                        query=f"query {i}",
                        query_mode=mode,
                        scores=scores,
                        response=response,
                        latency_ms=1.0,
                        error=None,
                        metadata={},
                    )
                )
        reports.append(
            EvaluationReport.model_construct(
                schema_version="1",
                report_id=f"r{r}",
                report_key=None,
                benchmark=BenchmarkManifest(name="bench"),
                knowledge_base_name=f"kb{r}",
                knowledge_base_manifest={},
                recipe_manifest={"name": f"recipe-{r}", "chunk": 100 * r},
                query_modes=MODES,
                score_summary={},
                case_results=tuple(results),
                started_at="2026-01-01T00:00:00",
                finished_at="2026-01-01T00:01:00",
                metadata={},
            )
        )
    return reports


def ranx_side(comparison, n_resamples: int, sample: int) -> None:
    """ranx's own tests on exactly our comparisons (same per-query score arrays)."""
    from ranx.statistical_tests import fisher_randomization_test, paired_student_t_test

    al = comparison.aligned
    jobs = []
    for a, b in comparison.pairs():
        ia, ib = al.variant_index(a), al.variant_index(b)
        for s in range(len(comparison.score_names)):
            jobs.append((al.values[s][:, ia].copy(), al.values[s][:, ib].copy()))
    x, y = jobs[0]
    timed(
        "ranx fisher: numba JIT warm-up (excluded)",
        lambda: fisher_randomization_test(x[:50], y[:50], 10, 0.01, 42),
    )
    # the comparisons with the largest p: where two Monte-Carlo p-values can be compared
    sig = comparison.significance()
    n_pairs, n_scores = len(comparison.pairs()), len(comparison.score_names)
    rows = np.argsort(-sig["p_value"].to_numpy())[:sample]
    picked = [jobs[(r % n_pairs) * n_scores + r // n_pairs] for r in rows]
    ranx_p, one = timed(
        f"ranx fisher, {sample} comparisons × {n_resamples} permutations",
        lambda: [fisher_randomization_test(x, y, n_resamples, 0.01, 42) for x, y in picked],
    )
    print(
        "   p-values, ranx fisher vs ours:",
        ", ".join(
            f"{r[0]:.4f} vs {o:.4f}"
            for r, o in zip(ranx_p, sig["p_value"].to_numpy()[rows], strict=True)
        ),
    )
    print(
        f"{'  → extrapolated to all ' + str(len(jobs)) + ' comparisons':<58} "
        f"{one / sample * len(jobs):8.1f} s"
    )
    timed(
        f"ranx paired t-test, all {len(jobs)} comparisons",
        lambda: [paired_student_t_test(x, y, 0.01) for x, y in jobs],
    )
    timed(
        f"ranx-style W/T/L (python sum), all {len(jobs)}",
        lambda: [(sum(x > y), sum(x == y), sum(x < y)) for x, y in jobs],
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--reports", type=int, default=5)
    parser.add_argument("--scores", type=int, default=25)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--ranx-sample", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    shape = f"{args.reports} reports × 3 modes × {args.cases} cases × {args.scores} scores"
    import scipy.stats  # noqa: F401 - imported by any run already (aggregation); not timed

    reports, _ = timed(
        f"setup: build {shape}", lambda: build_reports(args.reports, args.cases, args.scores)
    )
    totals = []
    for run in range(1, args.repeat + 1):  # best of a few: the machine is shared
        print(f"-- run {run}")
        c, t_align = timed(
            "compare(reports): alignment", lambda: compare(reports, n_resamples=args.resamples)
        )
        _, t_sum = timed("comparison.summary() (vectorised aggregation)", c.summary)
        sig, t_sig = timed(
            f"significance(): {len(c.pairs()) * args.scores} tests, {args.resamples} resamples",
            c.significance,
        )
        _, t_html = timed("table HTML (_repr_html_)", c._repr_html_)
        totals.append(t_align + t_sum + t_sig + t_html)
        print(f"{'TOTAL compare → table with significance':<58} {totals[-1]:8.3f} s")
    print(f"{'BEST TOTAL of ' + str(args.repeat):<58} {min(totals):8.3f} s")
    print(f"significant after Holm: {int(sig['significant'].sum())} of {len(sig)}")
    ranx_side(c, args.resamples, args.ranx_sample)


if __name__ == "__main__":
    main()
