"""What the default extractive answer step costs on top of retrieval (run by hand).

    python bench/answers.py [--repeats 5]

Builds the default recipe (BM25 + LSA + hybrid, whole documents) on the shipped Cranfield
(225 queries, abstracts ~150 words) and the shipped SQuAD 2.0 sample (626 questions, paragraphs
~120 words), then times ``kb.query_many`` per mode with top_k=10, retrieval only versus with the
answer step (``answer=True``, the same ``Extractive()`` the runner's ``kb.query`` applies).
Prints the best of ``--repeats`` runs and the ratio answer/retrieval per mode.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from heta_notebook.benchmarks.beir import BeirBenchmark  # noqa: E402
from heta_notebook.benchmarks.squad import SquadBenchmark  # noqa: E402
from heta_notebook.kb.knowledge_base import KnowledgeBase  # noqa: E402
from heta_notebook.kb.recipe import Recipe  # noqa: E402


def best_of(repeats: int, function) -> float:
    """Fastest wall time of ``repeats`` calls, in seconds."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def measure(name: str, benchmark, repeats: int) -> None:
    """Retrieval-only vs retrieval + extractive answer, per mode, on one benchmark."""
    _, documents, cases = benchmark.load()
    queries = [case.query for case in cases]
    kb = KnowledgeBase.build_sync(Recipe(name="default"), documents)
    print(f"\n{name}: {len(documents)} documents, {len(queries)} queries, top_k=10")
    print(f"{'mode':18s} {'retrieval s':>12s} {'+ answer s':>11s} {'ratio':>6s} {'answer µs/q':>12s}")
    for mode in kb.query_modes:
        plain = best_of(repeats, lambda m=mode: kb.query_many(queries, mode=m, top_k=10))
        answered = best_of(
            repeats, lambda m=mode: kb.query_many(queries, mode=m, top_k=10, answer=True)
        )
        per_query = (answered - plain) / len(queries) * 1e6
        print(
            f"{mode:18s} {plain:12.3f} {answered:11.3f} {answered / plain:6.2f} {per_query:12.0f}"
        )


def main() -> None:
    """Parse arguments and print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    measure("Cranfield", BeirBenchmark.cranfield(), args.repeats)
    measure("SQuAD 2.0 sample", SquadBenchmark.sample(), args.repeats)


if __name__ == "__main__":
    main()
