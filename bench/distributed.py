"""Local asyncio executor vs RayExecutor with two workers on a CPU-heavy grid, by hand.

Four LSA recipes (TF-IDF + truncated SVD of different sizes, vector search) on a synthetic
corpus, in one run: first the local executor (this process, one recipe after the other),
then a local Ray cluster with two worker CPUs (builds in parallel, then case shards), each
with its own fresh build workspace. Prints both wall times, the ratio, and checks that the
two runs' reports agree case for case. Ray's start-up is timed apart (a notebook starts it
once).

Run: ``python bench/distributed.py [--docs 50000] [--queries 400]``; results go to
``bench/README.md`` by hand.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from heta_notebook import BenchmarkRunConfig, Recipe, run_benchmark  # noqa: E402
from heta_notebook.evaluators._retrieval import beir_default_metrics  # noqa: E402
from heta_notebook.kb._recipe import Dense  # noqa: E402
from heta_notebook.runner._ray_executor import RayExecutor  # noqa: E402
from heta_notebook.schema import (  # noqa: E402
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkManifest,
)
from tests._ray_helpers import local_ray  # noqa: E402

DIMS = (32, 48, 64, 96)


class SyntheticBenchmark:
    """Zipf-distributed words over a 20,000-word vocabulary; each query is 10 words of one document."""

    def __init__(self, n_docs: int, n_queries: int, seed: int = 0):
        rng = np.random.default_rng(seed)
        vocabulary = np.array([f"w{i}" for i in range(20_000)])
        ranks = np.minimum(rng.zipf(1.3, size=(n_docs, 80)), len(vocabulary)) - 1
        texts = [" ".join(vocabulary[row]) for row in ranks]
        self._documents = [
            BenchmarkDocument(document_id=f"d{i}", text=t) for i, t in enumerate(texts)
        ]
        picks = rng.choice(n_docs, size=n_queries, replace=False)
        self._cases = []
        for n, doc in enumerate(picks):
            words = rng.choice(ranks[doc], size=10)
            evidence = (BenchmarkEvidence(reference_id=f"d{doc}", metadata={"relevance": 1}),)
            self._cases.append(
                BenchmarkCase(
                    case_id=f"q{n}",
                    query=" ".join(vocabulary[words]),
                    expected=BenchmarkExpected(evidence=evidence),
                )
            )
        self.manifest = BenchmarkManifest(name=f"synthetic-{n_docs}", version="1", split="test")

    async def documents(self, prepared):
        return self._documents

    async def cases(self, prepared):
        return self._cases


def run(benchmark, workspace: Path, **extra):
    recipes = {
        f"lsa-{d}": Recipe(name=f"lsa-{d}", bm25=None, hybrid=None, dense=Dense(dims=d))
        for d in DIMS
    }
    started = time.perf_counter()
    collection = run_benchmark(
        benchmark=benchmark,
        recipes=recipes,
        evaluators=beir_default_metrics(),
        config=BenchmarkRunConfig(top_k=100),
        workspace=workspace,
        progress=False,
        **extra,
    )
    return collection, time.perf_counter() - started


def same_scores(a, b) -> bool:
    """Equal case ids, modes and score values, recipe by recipe (timings aside)."""
    for label in a.labels:
        left, right = a[label].case_results, b[label].case_results
        if [(r.case_id, r.query_mode) for r in left] != [(r.case_id, r.query_mode) for r in right]:
            return False
        for x, y in zip(left, right, strict=True):
            if [(s.name, s.value) for s in x.scores] != [(s.name, s.value) for s in y.scores]:
                return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=400)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}, cpus: {os.cpu_count()}")
    benchmark = SyntheticBenchmark(args.docs, args.queries)
    with tempfile.TemporaryDirectory() as tmp:
        local, local_s = run(benchmark, Path(tmp) / "local")
        print(f"local executor: {local_s:.1f} s")
        started = time.perf_counter()
        with local_ray(num_cpus=2) as ray:
            print(f"ray start-up: {time.perf_counter() - started:.1f} s ({ray.__version__})")
            remote, ray_s = run(benchmark, Path(tmp) / "ray", executor=RayExecutor())
        print(f"RayExecutor, 2 workers: {ray_s:.1f} s")
    print(f"ratio local / ray: {local_s / ray_s:.2f}x")
    print(f"reports equal case for case: {same_scores(local, remote)}")
    for label in local.labels:
        print(f"  {label}: nDCG@10 {local[label].score_summary.get('vector_search.beir_ndcg@10')}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
