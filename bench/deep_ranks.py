"""What exact deep ranks add to a run of the embedded KB (issue 24; target: under 10%).

Run by hand (not part of the test suite)::

    python bench/deep_ranks.py [--repeats 3]

Cranfield (1,400 abstracts, 225 judged queries), recipes ``whole-docs`` and ``chunks-100``
(100-word windows, overlap 20), all three query modes, top 10, default evaluators, no store:
``run_benchmark`` end to end (build, queries, answers, scores, report) with deep ranks (the
default: the run hands each query's judged documents to ``KnowledgeBase.query_many``, which
counts the ranks of those missing from the top k from its own score vectors) and with them
switched off (``judged`` dropped), interleaved, ``--repeats`` rounds; medians and best-of and
their ratios. The CPU seconds spent inside the deep-rank work (``DeepRanker``'s per-query
calls and the metadata they record) over the run's other CPU seconds is the direct cost (CPU
time, so other jobs on the machine do not count). Also, on the built KBs, one batch of 225
queries per mode searched alone and searched with every judged document ranked (found or
not: an upper bound; a run ranks only the missed ones).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from heta_notebook import BeirBenchmark, Chunking, Recipe, run_benchmark
from heta_notebook.kb import _deep_rank
from heta_notebook.kb._deep_rank import deep_ranks
from heta_notebook.kb._knowledge_base import KnowledgeBase

RECIPES = {
    "whole-docs": Recipe(name="whole-docs"),
    "chunks-100": Recipe(name="chunks-100", chunking=Chunking(unit="words", size=100, overlap=20)),
}
SPENT: list[float] = []
RANKER = _deep_rank.DeepRanker
QUERY_MANY = KnowledgeBase.query_many


def _timed(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()  # CPU of this worker thread: other threads excluded
        try:
            return method(*args, **kwargs)
        finally:
            SPENT.append(time.thread_time() - started)

    return timed


class _TimedRanker(RANKER):
    """The ranker with its per-query work timed (construction too)."""

    __init__ = _timed(RANKER.__init__)
    scored = _timed(RANKER.scored)
    fused = _timed(RANKER.fused)
    metadata = _timed(RANKER.metadata)


def _without_deep_ranks(self: Any, *args: Any, judged: Any = None, **kwargs: Any) -> Any:
    return QUERY_MANY(self, *args, **kwargs)


def one_run(deep: bool) -> tuple[float, object, float]:
    """Seconds for one end-to-end run (deep ranks on or off), its result, its CPU seconds."""
    if deep:
        _deep_rank.DeepRanker = _TimedRanker  # what the KB module looks up: patch it there
    else:
        KnowledgeBase.query_many = _without_deep_ranks
    from heta_notebook.kb import _knowledge_base

    _knowledge_base.DeepRanker = _deep_rank.DeepRanker
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
        _deep_rank.DeepRanker = _knowledge_base.DeepRanker = RANKER
        KnowledgeBase.query_many = QUERY_MANY


def batch_times(runs: Any) -> tuple[float, float]:
    """Seconds for one batch per recipe x mode: searched alone, and with every judged
    document ranked (``deep_ranks``: found or not)."""
    _, documents, cases = BeirBenchmark.cranfield().load()
    del documents
    queries = [c.query for c in cases]
    judged = [[e.reference_id for e in c.expected.evidence] for c in cases]
    alone = ranked = 0.0
    for label in RECIPES:
        kb = runs.results[label].knowledge_base
        if kb is None:
            raise SystemExit("the run kept no KB to time deep ranks on")
        for mode in kb.query_modes:
            started = time.process_time()
            kb.query_many(queries, mode=mode, top_k=10)
            alone += time.process_time() - started
            started = time.process_time()
            deep_ranks(kb, queries, judged, mode=mode, top_k=10)
            ranked += time.process_time() - started
    return alone, ranked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    repeats = parser.parse_args().repeats
    one_run(True)  # warm-up: imports, Cranfield parsing
    with_deep, without, batches, inside = [], [], [], []
    for _ in range(repeats):
        SPENT.clear()
        seconds, runs, cpu = one_run(True)
        with_deep.append(seconds)
        inside.append(sum(SPENT) / (cpu - sum(SPENT)))
        batches.append(batch_times(runs))
        without.append(one_run(False)[0])
    on, off = (statistics.median(x) for x in (with_deep, without))
    alone, ranked = (statistics.median(b[i] for b in batches) for i in (0, 1))
    best = min(with_deep) / min(without) - 1
    print(
        f"run with deep ranks    {on:7.3f} s  (rounds: {', '.join(f'{x:.3f}' for x in with_deep)})"
    )
    print(
        f"run without deep ranks {off:7.3f} s  (rounds: {', '.join(f'{x:.3f}' for x in without)})"
    )
    print(f"added cost: {on / off - 1:+.1%} end to end (medians), {best:+.1%} (best of each)")
    print(
        f"CPU inside the deep-rank work / the rest of the run's CPU: "
        f"{statistics.median(inside):.1%} (rounds: {', '.join(f'{x:.1%}' for x in inside)})"
    )
    print(
        f"one batch of 225 per recipe x mode (CPU): searched {alone:.3f} s, with every judged "
        f"document ranked {ranked:.3f} s ({ranked / alone - 1:+.1%})"
    )


if __name__ == "__main__":
    main()
