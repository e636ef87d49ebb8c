"""What exact deep ranks add to a run of the embedded KB (issue 24; target: under 10%).

Run by hand (not part of the test suite)::

    python bench/deep_ranks.py [--repeats 3]

Cranfield (1,400 abstracts, 225 judged queries), recipes ``whole-docs`` and ``chunks-100``
(100-word windows, overlap 20), all three query modes, top 10, default evaluators, no store:
``run_benchmark`` end to end (build, queries, answers, scores, report) with deep ranks (the
default) and with them switched off (``add_deep_ranks`` replaced by a no-op), interleaved,
``--repeats`` rounds; medians and best-of and their ratios. Also the deep ranks alone:
``deep_ranks`` for every judged document (found or not: an upper bound, a run ranks only the
missed ones) of every query and mode, on the built KBs; and the CPU seconds spent inside
``add_deep_ranks`` over the run's other CPU seconds (the direct cost; CPU time, so other jobs
on the machine do not count).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from heta_notebook import BeirBenchmark, Chunking, Recipe, run_benchmark
from heta_notebook.kb._deep_rank import deep_ranks
from heta_notebook.runner import _pool

RECIPES = {
    "whole-docs": Recipe(name="whole-docs"),
    "chunks-100": Recipe(name="chunks-100", chunking=Chunking(unit="words", size=100, overlap=20)),
}


SPENT: list[float] = []


def _timed(*args: object, **kwargs: object) -> None:
    started = time.thread_time()  # CPU of this worker thread: other threads and jobs excluded
    try:
        return ORIGINAL(*args, **kwargs)
    finally:
        SPENT.append(time.thread_time() - started)


ORIGINAL = _pool.add_deep_ranks


def one_run(deep: bool) -> tuple[float, object, float]:
    """Seconds for one end-to-end run (deep ranks on or off), its result, its CPU seconds."""
    original = _pool.add_deep_ranks
    _pool.add_deep_ranks = _timed if deep else (lambda *args, **kwargs: None)
    try:
        with tempfile.TemporaryDirectory() as workspace:
            started, cpu = time.perf_counter(), time.process_time()
            runs = run_benchmark(
                benchmark=BeirBenchmark.cranfield(),
                recipes=RECIPES,
                workspace=workspace,
                progress=False,
            )
            return time.perf_counter() - started, runs, time.process_time() - cpu
    finally:
        _pool.add_deep_ranks = original


def deep_only(runs: object) -> float:
    """Seconds for the deep ranks alone on the runs' built KBs (all queries, all modes)."""
    _, documents, cases = BeirBenchmark.cranfield().load()
    del documents
    queries = [c.query for c in cases]
    judged = [[e.reference_id for e in c.expected.evidence] for c in cases]
    started = time.perf_counter()
    for label in RECIPES:
        result = runs.results[label] if hasattr(runs, "results") else None
        kb = result.knowledge_base if result is not None else None
        if kb is None:
            raise SystemExit("the run kept no KB to time deep ranks on")
        for mode in kb.query_modes:
            deep_ranks(kb, queries, judged, mode=mode, top_k=10)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    repeats = parser.parse_args().repeats
    one_run(True)  # warm-up: imports, Cranfield parsing
    with_deep, without, alone, inside = [], [], [], []
    for _ in range(repeats):
        SPENT.clear()
        seconds, runs, cpu = one_run(True)
        with_deep.append(seconds)
        inside.append(sum(SPENT) / (cpu - sum(SPENT)))
        alone.append(deep_only(runs))
        without.append(one_run(False)[0])
    on, off, only = (statistics.median(x) for x in (with_deep, without, alone))
    best = min(with_deep) / min(without) - 1
    print(
        f"run with deep ranks    {on:7.3f} s  (rounds: {', '.join(f'{x:.3f}' for x in with_deep)})"
    )
    print(
        f"run without deep ranks {off:7.3f} s  (rounds: {', '.join(f'{x:.3f}' for x in without)})"
    )
    print(f"deep ranks alone       {only:7.3f} s  (2 recipes x 3 modes x 225 queries)")
    print(f"added cost: {on / off - 1:+.1%} end to end (medians), {best:+.1%} (best of each)")
    print(f"deep ranks alone = {only / off:.1%} of a run without them")
    print(
        f"CPU inside add_deep_ranks / the rest of the run's CPU: {statistics.median(inside):.1%} "
        f"(rounds: {', '.join(f'{x:.1%}' for x in inside)})"
    )


if __name__ == "__main__":
    main()
