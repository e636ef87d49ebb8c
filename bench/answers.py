"""What the default extractive answer step costs on top of retrieval (run by hand).

    python bench/answers.py [--repeats 5]

Builds the default recipe (BM25 + LSA + hybrid, whole documents) on the shipped Cranfield
(225 queries, abstracts ~150 words) and the shipped SQuAD 2.0 sample (626 questions, paragraphs
~120 words), then times ``kb.query_many`` per mode with top_k=10, retrieval only versus with the
answer step (``answer=True``, the same ``Extractive()`` the runner's ``kb.query`` applies),
then a whole ``run_benchmark`` on the SQuAD sample with ``answer=None`` and with the default.
Prints the least CPU time of ``--repeats`` runs and the ratio answer/retrieval per mode.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from heta_notebook.benchmarks._beir import BeirBenchmark  # noqa: E402
from heta_notebook.benchmarks._squad import SquadBenchmark  # noqa: E402
from heta_notebook.kb._knowledge_base import KnowledgeBase  # noqa: E402
from heta_notebook.kb._recipe import Recipe  # noqa: E402


def best_of(repeats: int, function) -> float:
    """Least CPU time (all threads) of ``repeats`` calls, in seconds: steadier than wall time on a
    shared machine."""
    times = []
    for _ in range(repeats):
        started = time.process_time()
        function()
        times.append(time.process_time() - started)
    return min(times)


def measure(name: str, benchmark, repeats: int) -> None:
    """Retrieval-only vs retrieval + extractive answer, per mode, on one benchmark."""
    _, documents, cases = benchmark.load()
    queries = [case.query for case in cases]
    kb = KnowledgeBase.build_sync(Recipe(name="default"), documents)
    print(f"\n{name}: {len(documents)} documents, {len(queries)} queries, top_k=10")
    print(
        f"{'mode':18s} {'retrieval cpu s':>16s} {'+ answer cpu s':>15s} {'ratio':>6s} {'answer µs/q':>12s}"
    )
    for mode in kb.query_modes:
        plain = best_of(repeats, lambda m=mode: kb.query_many(queries, mode=m, top_k=10))
        answered = best_of(
            repeats, lambda m=mode: kb.query_many(queries, mode=m, top_k=10, answer=True)
        )
        per_query = (answered - plain) / len(queries) * 1e6
        print(
            f"{mode:18s} {plain:16.3f} {answered:15.3f} {answered / plain:6.2f} {per_query:12.0f}"
        )


def runner(benchmark, workspace: str) -> None:
    """A whole ``run_benchmark`` (3 modes, default evaluators) with and without the answer step."""
    from heta_notebook.runner import run_benchmark

    print(
        f"\nrun_benchmark on {benchmark.manifest.name}, 3 modes, default evaluators (CPU s, one run)"
    )
    for label, answer in (("answer=None", None), ("Extractive()", "extractive")):
        recipe = Recipe(name=label, answer=answer)
        run_benchmark(benchmark=benchmark, recipe=recipe, workspace=workspace, progress=False)
        started = time.process_time()
        run_benchmark(benchmark=benchmark, recipe=recipe, workspace=workspace, progress=False)
        print(f"{label:14s} {time.process_time() - started:8.2f}  (KB from the cache)")


def main() -> None:
    """Parse arguments and print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    measure("Cranfield", BeirBenchmark.cranfield(), args.repeats)
    measure("SQuAD 2.0 sample", SquadBenchmark.sample(), args.repeats)
    with tempfile.TemporaryDirectory() as workspace:
        runner(SquadBenchmark.sample(), workspace)


if __name__ == "__main__":
    main()
