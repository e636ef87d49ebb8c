"""The instant protocol object's per-case work without the pool, for instruction counts.

``bench/runner.py throughput`` times whole runs, whose batches follow wall-time windows
(under valgrind, 50x slower, they differ from run to run). This loop does what the pool
does per case without its timing: ``System.read`` of each (case, mode) reply of the
``InstantKB`` (4 modes × 225 Cranfield cases), then each mode's 225 cases scored by the
25 default BEIR metrics in one batch. Count it twice and subtract:

    export PYTHONHASHSEED=0 OPENBLAS_NUM_THREADS=1   # else set orders and BLAS threads vary
    valgrind --tool=cachegrind --cache-sim=no python bench/runner_loop.py 1
    valgrind --tool=cachegrind --cache-sim=no python bench/runner_loop.py 3
    # (I refs of 3 - I refs of 1) / 1800 = instructions per case

``python bench/runner_loop.py 15 time``: the least CPU µs per case of 15 loops.

``pool`` after the count (``runner_loop.py 3 pool``, ``runner_loop.py 15 time pool``): the
order of ``bench/runner.py throughput``'s 16-mode run instead: 16 modes × 225 cases, case
by case (each case in all its modes in a row, as the runner hands them out), read, then
scored in batches of 256 as the pool's batch stage scores them. Per case: (3 − 1) × 3600.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from runner import CRANFIELD, TOP_K, InstantKB, rankings  # noqa: E402

from heta_notebook.benchmarks._protocol import load_benchmark  # noqa: E402
from heta_notebook.evaluators._retrieval import (  # noqa: E402
    beir_default_metrics,
    evaluate_batch_columns,
)
from heta_notebook.systems._adapt import as_system  # noqa: E402


async def main() -> None:
    ranked = await rankings()
    _, documents, cases = await load_benchmark(CRANFIELD)
    pool = "pool" in sys.argv[2:]
    modes = tuple(f"instant_{i}" for i in range(16 if pool else 4))
    kb = InstantKB(ranked, modes)
    system = as_system(kb).bound([d.document_id for d in documents])
    metrics = list(beir_default_metrics())
    if pool:  # the runner's order: each case in all its modes, batches of 256
        pairs = [(c, m, await kb.query(c.query, mode=m, top_k=TOP_K)) for c in cases for m in modes]
        batches = [pairs[start : start + 256] for start in range(0, len(pairs), 256)]
    else:  # each mode's cases, one batch per mode
        batches = [
            [(c, m, await kb.query(c.query, mode=m, top_k=TOP_K)) for c in cases] for m in modes
        ]

    def loop() -> None:
        for batch in batches:
            responses = [system.read(value, mode) for _, mode, value in batch]
            evaluate_batch_columns(metrics, [case for case, _, _ in batch], responses)

    loop()  # the memo of checked sources filled, as in a run's later modes
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    if "time" in sys.argv[2:]:
        best = min(_cpu(loop) for _ in range(repeats))
        print(f"{best / (len(modes) * len(cases)) * 1e6:.1f} µs per case (least CPU)")
    else:
        for _ in range(repeats):
            loop()


def _cpu(loop) -> float:
    started = time.process_time()
    loop()
    return time.process_time() - started


if __name__ == "__main__":
    asyncio.run(main())
