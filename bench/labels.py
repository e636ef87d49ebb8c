"""Pools (issue 35): ``pool()`` over 3 systems × 10,000 queries × 100 results.

Three inputs at the issue's size: plain runs ``{query: {doc: score}}``, reports in memory
(3 × 1,000,000 result records; the first pool builds each report's column view, later ones
reuse it) and the same reports saved as columnar folders and opened again (their Parquet
tables read, no record built). Half of each query's documents are judged. Prints wall and
CPU seconds.

    PYTHONPATH=$PWD .venv/bin/python bench/labels.py
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from heta_notebook import pool
from heta_notebook.labels import Pool
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
        started_at="2026-12-07T00:00:00Z",
        finished_at="2026-12-07T00:00:00Z",
        metadata={"label": label},
    )


def timed(what: str, thunk: Callable[[], Pool]) -> Pool:
    start, cpu = time.perf_counter(), time.process_time()
    result = thunk()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{what}: {wall:.2f} s wall, {cpu:.2f} s CPU ({len(result):,} unjudged pairs)")
    return result


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.1f}")
    big = runs(3, 10_000, 100)
    labels = judged(10_000)
    size = "3 × 10,000 × 100"
    by_runs = {
        depth: timed(
            f"runs {size}, depth {depth}",
            lambda d=depth, given=big: pool(given, depth=d, labels=labels),
        )
        for depth in (10, 100)
    }
    reports = [report(r, f"system{i}") for i, r in enumerate(big)]
    del big
    for depth, note in ((10, " (first pool: builds the column views)"), (10, " again"), (100, "")):
        found = timed(
            f"reports in memory {size}, depth {depth}{note}",
            lambda d=depth, given=reports: pool(given, depth=d, labels=labels),
        )
        assert found.frame.equals(by_runs[depth].frame)
    with tempfile.TemporaryDirectory() as folder:
        paths = [r.save(Path(folder) / r.report_id, format="columnar") for r in reports]
        del reports
        for depth in (10, 100):
            stored = [EvaluationReport.load(p) for p in paths]  # opened afresh: tables unread
            found = timed(
                f"reports stored {size}, depth {depth} (opened, tables read)",
                lambda d=depth, given=stored: pool(given, depth=d, labels=labels),
            )
            assert found.frame.equals(by_runs[depth].frame)


if __name__ == "__main__":
    main()
