"""How fast a built-in-KB run stops, and what the threaded queries cost (issue #14 part 3).

Cranfield with the default hybrid recipe (BM25 + LSA + RRF: 3 modes x 225 queries), KB
cache warm. Prints the run's time (min of 3) and the seconds from ``task.cancel()`` (issued
once the first case is checkpointed) to the partial report being returned. Run it with
``PYTHONPATH`` pointing at the tree to measure (e.g. main vs this branch) for the ratio.

    PYTHONPATH=. python bench/runner_stop.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time
import warnings

from heta_notebook import BeirBenchmark, BenchmarkRunConfig, BenchmarkRunner, Recipe, ReportStore


async def main() -> None:
    warnings.simplefilter("ignore", RuntimeWarning)  # the "interrupted" hint
    benchmark, recipe = BeirBenchmark.cranfield(), Recipe(name="hybrid")
    with tempfile.TemporaryDirectory() as folder:
        store = ReportStore(folder)
        options = dict(
            benchmark=benchmark,
            recipe=recipe,
            knowledge_base_name="cran",
            store=store,
            progress=False,
        )
        await BenchmarkRunner().run(**options)  # builds and caches the KB
        times = []
        for _ in range(3):
            started = time.perf_counter()
            await BenchmarkRunner().run(**options)
            times.append(time.perf_counter() - started)
        print(f"full run, 675 cases: {min(times):.2f} s (min of 3)")

        config = BenchmarkRunConfig(report_id="stopped", checkpoint_every=1)
        run = asyncio.ensure_future(BenchmarkRunner().run(**options, config=config))
        while not store.checkpoint_keys("cran", "stopped"):  # the first case checkpointed
            await asyncio.sleep(0.001)
        cancelled = time.perf_counter()
        run.cancel()
        report = (await run).report
        print(
            f"cancel -> partial report: {time.perf_counter() - cancelled:.3f} s "
            f"({len(report.case_results)} of 675 cases, partial={report.is_partial})"
        )


if __name__ == "__main__":
    asyncio.run(main())
