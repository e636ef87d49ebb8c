"""Real Cranfield reports for the regression-gate tests: a BM25 baseline, a degraded recipe
that keeps only the first words of each document, and a small random perturbation."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np

from heta_notebook import BenchmarkRunConfig, Recipe, run_benchmark
from heta_notebook.benchmarks._beir import BeirBenchmark
from heta_notebook.evaluators._retrieval import BeirRetrievalMetric
from heta_notebook.schema import EvaluationReport

EVALUATORS = (BeirRetrievalMetric("ndcg", 10), BeirRetrievalMetric("recall", 10))
BM25 = Recipe(name="bm25", dense=None, hybrid=None)


class KeepFirstWords:
    """A deliberately bad recipe: a chunking that drops all but the first words of a document."""

    def __init__(self, words: int = 4, inner: Recipe = BM25) -> None:
        self.words, self.inner = words, inner

    @property
    def name(self) -> str:
        return f"first-{self.words}-words"

    def manifest(self) -> dict:
        return {**self.inner.manifest(), "name": self.name, "keep_words": self.words}

    async def build_knowledge_base(self, documents, **options):
        kept = [
            d.model_copy(update={"text": " ".join(d.read_text().split()[: self.words])})
            for d in documents
        ]
        return await self.inner.build_knowledge_base(kept, **options)


def run(recipe, **labels) -> EvaluationReport:
    """One Cranfield run (top 10, two metrics) in a throwaway workspace."""
    bench = BeirBenchmark.cranfield(**labels)
    with tempfile.TemporaryDirectory() as workspace:
        result = run_benchmark(
            benchmark=bench,
            recipe=recipe,
            evaluators=EVALUATORS,
            config=BenchmarkRunConfig(top_k=10),
            progress=False,
            workspace=workspace,
        )
    return result.report


@functools.cache
def baseline() -> EvaluationReport:
    return run(BM25)


@functools.cache
def degraded() -> EvaluationReport:
    return run(KeepFirstWords())


def perturbed(report: EvaluationReport, cases: int = 25, size: float = 0.02, seed: int = 1):
    """A copy whose nDCG@10 moves up or down by ``size`` on a few random cases (noise)."""
    rng = np.random.default_rng(seed)
    picked = set(rng.choice(len(report.case_results), cases, replace=False).tolist())
    results = []
    for i, r in enumerate(report.case_results):
        if i in picked:
            sign = rng.choice((-1.0, 1.0))
            scores = tuple(
                s.model_copy(update={"value": float(np.clip(s.value + sign * size, 0, 1))})
                if s.name == "beir_ndcg@10"
                else s
                for s in r.scores
            )
            r = r.model_copy(update={"scores": scores})
        results.append(r)
    return report.model_copy(update={"case_results": tuple(results), "report_id": "perturbed"})


def save(report: EvaluationReport, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return report.save(path)
