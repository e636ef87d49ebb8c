"""Generated benchmarks: how fast known-item generation is at 100k documents, and how well each
offline method's benchmark ranks systems the way Cranfield's real qrels do.

    PYTHONPATH=. python bench/generate.py speed   # 100k synthetic documents, 10k known-item queries
    PYTHONPATH=. python bench/generate.py tau     # tau per method over 9 embedded variants, 3 seeds

Results and the machine they ran on are in bench/README.md ("Generated benchmarks") and
docs/generate.md.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import warnings

import numpy as np


def speed(documents: int = 100_000, queries: int = 10_000, words: int = 150) -> None:
    from heta_notebook import generate_benchmark

    rng = np.random.default_rng(0)
    vocabulary = np.array([f"w{i}" for i in range(50_000)])
    ranks = np.minimum(rng.zipf(1.2, size=documents * words), len(vocabulary)) - 1
    corpus = [
        {"_id": f"d{i}", "text": " ".join(vocabulary[ranks[i * words : (i + 1) * words]])}
        for i in range(documents)
    ]
    with tempfile.TemporaryDirectory() as folder:
        started, cpu = time.perf_counter(), time.process_time()
        generate_benchmark(corpus, queries, method="known_item", seed=0, folder=folder)
        took, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(
        f"known-item: {queries:,} queries over {documents:,} documents in {took:.1f} s wall, "
        f"{cpu:.1f} s CPU (load average {os.getloadavg()[0]:.1f})"
    )


def systems() -> dict:
    from heta_notebook import Chunking, Recipe
    from heta_notebook.kb._recipe import Bm25, Dense

    return {
        "docs": Recipe(name="docs"),
        "chunks": Recipe(
            name="chunks", chunking=Chunking(unit="words", size=60), dense=Dense(dims=64)
        ),
        "plain": Recipe(
            name="plain", bm25=Bm25(k1=0.6, b=0.2, stopwords=None), dense=Dense(dims=16)
        ),
    }


def tau(seeds: tuple[int, ...] = (0, 1, 2), n: int = 225) -> None:
    from heta_notebook import BeirBenchmark, generate_benchmark, run_benchmark, validate_benchmark
    from heta_notebook.analysis._validate import DEFAULT_SCORES, _evaluators
    from heta_notebook.benchmarks._beir import cranfield_folder

    warnings.simplefilter("ignore")
    reference = run_benchmark(
        benchmark=BeirBenchmark.cranfield(), recipes=systems(),
        evaluators=_evaluators(DEFAULT_SCORES), config={"top_k": 100}, progress=False,
    )  # fmt: skip
    print("| method | seed | " + " | ".join(f"τ {s} [95% CI]" for s in DEFAULT_SCORES) + " |")
    for method in ("known_item", "title", "inverse_cloze"):
        for seed in seeds:
            generated = generate_benchmark(cranfield_folder(), n, method=method, seed=seed)
            result = validate_benchmark(generated, reference, systems=systems())
            cells = [
                f"{row.tau:.2f} [{row.ci_low:.2f}, {row.ci_high:.2f}], {int(row.flipped)}/{int(row.pairs)} flip"
                for _, row in result.agreement.iterrows()
            ]
            print(f"| {method} | {seed} | " + " | ".join(cells) + " |")


def main() -> None:
    {"speed": speed, "tau": tau}[sys.argv[1] if len(sys.argv) > 1 else "speed"]()


if __name__ == "__main__":
    main()
