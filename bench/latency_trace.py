"""Where the 20 ms row's time goes (``bench/runner.py latency``), by hand (not in the tests).

Runs the bare asyncio pool and the runner on the same sleepy backend (20 ms per query,
concurrency 32, Cranfield × 16 modes = 3,600 case results), logging each query's start and
wake-up, and timing every event-loop callback. Per run it prints:

- wall over ideal (``n × 20 ms / 32``), the time before the first query and after the last reply;
- how late each reply was taken up after its 20 ms, split into the time the loop was busy
  with our own callbacks at that moment (by callback) and the rest (the selector's
  millisecond rounding, the OS);
- the time from a worker's reply to its next query.

Run: ``python bench/latency_trace.py [none|25] [runs]``. On a shared machine, ``chrt -f 10``
keeps the other jobs from delaying wake-ups (bare asyncio then reads about +2.5%).
"""

from __future__ import annotations

import asyncio
import asyncio.events
import bisect
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import runner as bench  # noqa: E402 - the latency row's backend and rankings

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner  # noqa: E402
from heta_notebook.evaluators._retrieval import beir_default_metrics  # noqa: E402

DELAY, CONCURRENCY = 0.02, 32
QUERIES: list[tuple[int, float, float]] = []  # (task, started, woke)
SPANS: list[tuple[float, float, Any]] = []  # (start, end, callback) of every loop callback


class TracedKB(bench.SleepyKB):
    """``SleepyKB`` logging when each query started and when its sleep returned."""

    async def query(self, text, *, mode, top_k=10, options=None):
        started = time.perf_counter()
        await asyncio.sleep(self.delay)
        QUERIES.append((id(asyncio.current_task()), started, time.perf_counter()))
        return await bench.InstantKB.query(self, text, mode=mode, top_k=top_k, options=options)


def time_callbacks() -> None:
    run = asyncio.events.Handle._run

    def timed(handle: asyncio.events.Handle) -> None:
        start = time.perf_counter()
        run(handle)
        SPANS.append((start, time.perf_counter(), handle._callback))

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]


def callback_name(callback: Any) -> str:
    owner = getattr(callback, "__self__", None)
    if hasattr(owner, "get_coro"):
        return "task " + getattr(owner.get_coro(), "__qualname__", "?")
    return getattr(callback, "__qualname__", repr(callback)[:40])


def report(what: str, wall: float, started: float) -> None:
    n = len(QUERIES)
    ideal = n * DELAY / CONCURRENCY
    first = min(q[1] for q in QUERIES)
    last = max(q[2] for q in QUERIES)
    print(
        f"{what}: {n} queries, wall {wall:.3f} s ({100 * (wall / ideal - 1):+.1f}% over ideal), "
        f"{1e3 * (first - started):.1f} ms before the first query, "
        f"{1e3 * (started + wall - last):.1f} ms after the last reply"
    )
    spans = sorted(SPANS, key=lambda span: span[0])
    starts = [span[0] for span in spans]
    periods: list[list[float]] = []  # the loop's busy periods: callbacks back to back
    for start, end, _ in spans:
        if periods and start - periods[-1][1] < 20e-6:
            periods[-1][1] = max(periods[-1][1], end)
        else:
            periods.append([start, end])
    period_starts = [p[0] for p in periods]
    busy: dict[str, float] = {}
    late_total = ours = 0.0
    for _, began, woke in QUERIES:
        due = began + DELAY
        late_total += woke - due
        p = bisect.bisect_right(period_starts, due) - 1
        if p < 0 or periods[p][1] <= due:
            continue  # the loop was idle when this reply came due
        until = min(woke, periods[p][1])  # the reply waited this long on our callbacks
        ours += until - due
        i = max(bisect.bisect_right(starts, due) - 1, 0)
        while i < len(spans) and spans[i][0] < until:
            start, end, callback = spans[i]
            overlap = min(end, until) - max(start, due)
            if overlap > 0:
                name = callback_name(callback)
                busy[name] = busy.get(name, 0.0) + overlap
            i += 1
    print(
        f"  lateness after {DELAY * 1e3:.0f} ms: {1e3 * late_total / n:.3f} ms per query, "
        f"of which the loop busy with our callbacks {1e3 * ours / n:.3f} ms"
    )
    for name, seconds in sorted(busy.items(), key=lambda item: -item[1])[:4]:
        print(f"    {name}: {1e3 * seconds / n:.3f} ms per query")
    by_task: dict[int, list[tuple[int, float, float]]] = {}
    for query in QUERIES:
        by_task.setdefault(query[0], []).append(query)
    gaps = []
    for queries in by_task.values():
        queries.sort(key=lambda query: query[1])
        gaps += [
            b[1] - a[2]
            for a, b in zip(queries, queries[1:], strict=False)
            if b[1] - a[2] < DELAY / 2
        ]
    if gaps:
        gaps.sort()
        print(
            f"  reply -> next query: p50 {1e6 * gaps[len(gaps) // 2]:.0f} us, "
            f"mean {1e6 * statistics.fmean(gaps):.0f} us, p99 {1e6 * gaps[int(len(gaps) * 0.99)]:.0f} us"
        )


async def bare(n: int) -> None:
    items = iter(range(n))

    async def worker() -> None:
        for _ in items:
            started = time.perf_counter()
            await asyncio.sleep(DELAY)
            QUERIES.append((id(asyncio.current_task()), started, time.perf_counter()))

    QUERIES.clear()
    SPANS.clear()
    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    report("bare asyncio", time.perf_counter() - started, started)


async def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "25"
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    evaluators = () if which == "none" else beir_default_metrics()
    ranked = await bench.rankings()
    modes = tuple(f"sleepy_{i}" for i in range(16))
    kb = TracedKB(ranked, modes, DELAY)
    config = BenchmarkRunConfig(top_k=10, max_concurrent_queries=CONCURRENCY, persist_report=False)
    warnings.simplefilter("ignore")
    time_callbacks()
    for number in range(runs + 1):  # the first run warms imports and caches up
        await bare(3600)
        QUERIES.clear()
        SPANS.clear()
        started = time.perf_counter()
        await BenchmarkRunner().run(
            benchmark=bench.CRANFIELD,
            recipe=kb,
            query_modes=modes,
            evaluators=evaluators,
            config=config,
            progress=False,
        )
        if number:
            report(f"runner, {which} evaluators", time.perf_counter() - started, started)


if __name__ == "__main__":
    asyncio.run(main())
