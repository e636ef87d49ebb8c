"""The live card's cost: a Cranfield run with the progress bar and the live card rendering vs
the same run with progress off (by hand, not in the test suite).

The run is the embedded BM25 recipe over whole documents, every Cranfield query, the 25
default BEIR metrics: a fast run (about 1 ms per case), where a per-case render would show
most. The live card is forced on outside a kernel (``in_notebook``) and each refresh renders
its HTML as a notebook would (into a sink, not a screen); the bar writes to /dev/null. Runs
alternate, best of ``ROUNDS`` each.

Run: ``python bench/live_card.py``; results go to ``bench/README.md`` by hand.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

import heta_notebook.display._live_card as live
from heta_notebook import BeirBenchmark, Recipe, run_benchmark
from heta_notebook.runner import _progress

ROUNDS = 5
RENDERS: list[int] = []


class SinkCard:
    """The live card without a screen: each refresh renders the HTML a notebook would show."""

    def __init__(self, running):
        self.running = running
        self.update()

    def update(self) -> None:
        RENDERS.append(len(live.live_card_html(self.running)))


def one_run(benchmark, *, shown: bool) -> float:
    recipe = Recipe(name="bm25", dense=None, hybrid=None)
    started = time.perf_counter()
    run_benchmark(benchmark=benchmark, recipe=recipe, progress=shown)
    return time.perf_counter() - started


def main() -> None:
    live.LiveCard = SinkCard  # type: ignore[misc]
    _progress.in_notebook = lambda: True  # type: ignore[assignment]
    benchmark = BeirBenchmark.cranfield()
    one_run(benchmark, shown=False)  # warm: parse, build and cache the KB
    off, on = [], []
    with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):
        for _ in range(ROUNDS):
            off.append(one_run(benchmark, shown=False))
            before = len(RENDERS)
            on.append(one_run(benchmark, shown=True))
            renders = len(RENDERS) - before
    best_off, best_on = min(off), min(on)
    print(f"cases: 225 x 1 mode; rounds: {ROUNDS}; load: {os.getloadavg()[0]:.1f}", file=sys.stdout)
    print(f"progress off: best {best_off:.3f} s (all: {', '.join(f'{t:.3f}' for t in off)})")
    print(f"bar + live card: best {best_on:.3f} s (all: {', '.join(f'{t:.3f}' for t in on)})")
    print(f"ratio on/off: {best_on / best_off:.3f}; renders in the last run: {renders}")


if __name__ == "__main__":
    main()
