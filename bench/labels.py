"""Pools (issue 35): ``pool()`` over 3 systems × 10,000 queries × 100 results.

Two inputs: plain runs ``{query: {doc: score}}`` (the issue's size), and reports built from
records (3 × 2,000 queries × 100 results: 600,000 result records; the record path costs per
result, so it scales linearly). Half of each query's documents are judged. Prints seconds.

    PYTHONPATH=$PWD .venv/bin/python bench/labels.py
"""

from __future__ import annotations

import random
import time

from heta_notebook import pool
from heta_notebook.schema._records import (
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationReport,
    QueryResponse,
    QueryResult,
)


def runs(
    systems: int, queries: int, depth: int, seed: int = 0
) -> list[dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    docs = [f"doc{i}" for i in range(5000)]
    out = []
    for _ in range(systems):
        out.append(
            {
                f"q{q}": {d: round(rng.random(), 4) for d in rng.sample(docs[q % 4000 :], depth)}
                for q in range(queries)
            }
        )
    return out


def judged(queries: int) -> dict[str, dict[str, int]]:
    return {
        f"q{q}": {f"doc{i}": 1 for i in range(q % 4000, q % 4000 + 500)} for q in range(queries)
    }


def report(run: dict[str, dict[str, float]], label: str) -> EvaluationReport:
    results = tuple(
        EvaluationCaseResult.model_construct(
            case_id=q,
            query=q,
            query_mode="hybrid",
            scores=(),
            response=QueryResponse.model_construct(
                mode="hybrid",
                results=tuple(
                    QueryResult.model_construct(
                        id=d,
                        score=s,
                        kind="chunk",
                        text="",
                        source={"benchmark_document_id": d},
                        metadata={},
                    )
                    for d, s in docs.items()
                ),
            ),
            metadata={},
        )
        for q, docs in run.items()
    )
    return EvaluationReport.model_construct(
        report_id=label,
        benchmark=BenchmarkManifest(name="synthetic", version="1", split="test"),
        knowledge_base_name=label,
        query_modes=("hybrid",),
        case_results=results,
        metadata={"label": label},
    )


def timed(what: str, thunk) -> None:
    start = time.perf_counter()
    result = thunk()
    print(f"{what}: {time.perf_counter() - start:.2f} s ({len(result):,} unjudged pairs)")


def main() -> None:
    big = runs(3, 10_000, 100)
    labels = judged(10_000)
    for depth in (10, 100):
        timed(
            f"runs 3 × 10,000 × 100, depth {depth}",
            lambda depth=depth: pool(big, depth=depth, labels=labels),
        )
    small = runs(3, 2_000, 100, seed=1)
    reports = [report(r, f"system{i}") for i, r in enumerate(small)]
    for depth in (10, 100):
        timed(
            f"reports 3 × 2,000 × 100 (600k records), depth {depth}",
            lambda depth=depth: pool(reports, depth=depth, labels=judged(2_000)),
        )


if __name__ == "__main__":
    main()
