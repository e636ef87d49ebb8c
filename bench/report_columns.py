"""In-memory frames and misses before/after ``ReportColumns`` (issue 33), in one process.

Export the previous commit's package under another name first, its records, lazy results
and status rules pointed back at this package (so both read the same report objects):

    git archive b4971d8 heta_notebook | tar -x -C /tmp/old && cd /tmp/old \\
      && mv heta_notebook heta_old && grep -rl heta_notebook heta_old \\
      | xargs sed -i 's/heta_notebook/heta_old/g' && grep -rl heta_old heta_old | xargs sed -i \\
      's/heta_old\\.\\(reports\\._lazy_results\\|schema\\._records\\|schema\\._abstain\\|schema\\._status\\)/heta_notebook.\\1/g'
    PYTHONPATH=. python bench/report_columns.py /tmp/old

Prints CPU seconds (best of 5) on two Cranfield runs and checks every value is identical.
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from heta_notebook import BeirBenchmark, Chunking, Recipe, run_benchmark
from heta_notebook.analysis._frames import ReportFrames as New
from heta_notebook.analysis._misses import evidence_misses

TIMED = ("latency_ms", "mean", "p50", "p95", "max")  # latency: the same run, read twice


def cpu(fn: Callable[[], Any], n: int = 5) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(n):
        gc.collect()
        start = time.process_time()
        value = fn()
        best = min(best, time.process_time() - start)
    return best, value


def every_frame(cls: Any, report: Any) -> tuple[Any, ...]:
    f = cls(report)
    return (
        f.summary(),
        f.cases(),
        f.scores(),
        f.latency(),
        f.abstentions(),
        f.case_counts(),
        f.ties(),
    )


def same(a: Any, b: Any) -> None:
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    else:
        assert a == b


def main() -> None:
    sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "/tmp/old")  # the exported package
    from heta_old.analysis import _misses as old_misses  # type: ignore[import-not-found]
    from heta_old.analysis._frames import ReportFrames as Old  # type: ignore[import-not-found]

    work = Path(tempfile.mkdtemp(prefix="bench-report-columns-"))
    chunks = Chunking(unit="words", size=100, overlap=20)
    runs = run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipes={
            "whole-docs": Recipe(name="whole-docs"),
            "chunks-100": Recipe(name="chunks-100", chunking=chunks),
        },
        query_modes=["full_text_search", "vector_search", "hybrid_search"],
        workspace=work / "ws",
        progress=False,
    )
    for name in ("whole-docs", "chunks-100"):
        report = runs[name]
        print(f"Cranfield {name}, {len(report.case_results)} case results (CPU s, best of 5)")
        cases = [
            (
                "fresh frames: summary only",
                lambda r=report: (Old(r).summary(),),
                lambda r=report: (New(r).summary(),),
            ),
            (
                "fresh frames: every frame",
                lambda r=report: every_frame(Old, r),
                lambda r=report: every_frame(New, r),
            ),
        ]
        report.frames()  # misses read the report's cached frames (its columns built once)
        cases.append(
            (
                "evidence_misses",
                lambda r=report: (old_misses.evidence_misses(r),),
                lambda r=report: (evidence_misses(r),),
            )
        )
        for label, before, after in cases:
            t_old, old = cpu(before)
            t_new, new = cpu(after)
            for a, b in zip(old, new, strict=True):
                same(a, b)
            print(f"  {label:<30} before {t_old:.4f}  after {t_new:.4f}  ({t_new / t_old:.2f}x)")
    print("every value identical (assert_frame_equal, exact)")


if __name__ == "__main__":
    main()
