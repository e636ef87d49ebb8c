"""A plain function system at size (run by hand): N synthetic BEIR queries, the function
returning 100 precomputed document ids per query, run through ``run_benchmark`` with the 25
default metrics, beside its floor: the same calls plus pytrec_eval on the same run (CPU s).

    python bench/plain_function.py [--queries 5000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    import numpy as np
    import pytrec_eval

    from bench.metrics import TREC_MEASURES
    from bench.reports import beir_folder
    from heta_notebook import BenchmarkRunConfig, run_benchmark
    from heta_notebook.benchmarks._beir import BeirBenchmark
    from heta_notebook.evaluators._matching import qrels_of

    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=5000)
    n = parser.parse_args().queries
    bench = BeirBenchmark(beir_folder(Path(tempfile.mkdtemp()) / "beir", n))
    loaded = bench.load()
    rng = np.random.default_rng(0)
    ranked = {
        c.query: [f"d{i}" for i in rng.choice(2000, 100, replace=False)] for c in loaded.cases
    }

    def system(text: str) -> list[str]:
        return ranked[text]

    def floor() -> None:
        run = {
            c.case_id: {d: float(100 - i) for i, d in enumerate(system(c.query))}
            for c in loaded.cases
        }
        qrels = {c.case_id: qrels_of(c.expected.evidence) for c in loaded.cases}
        pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES | {"recip_rank"}).evaluate(run)

    def ours() -> None:
        config = BenchmarkRunConfig(top_k=100)
        run_benchmark(benchmark=bench, recipe=system, progress=False, config=config)

    ours()  # imports and the thread pool, untimed
    best = {"floor": float("inf"), "ours": float("inf")}
    for _ in range(2):
        for name, fn in (("floor", floor), ("ours", ours)):
            start = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - start)
    print(
        f"{n} queries: run {best['ours']:.2f} CPU s, floor {best['floor']:.2f} CPU s, "
        f"ratio {best['ours'] / best['floor']:.1f}x"
    )


if __name__ == "__main__":
    main()
