"""heta_notebook: evaluate retrieval-augmented systems from Jupyter.

Everything a notebook needs is importable from here. Names load lazily on first use, so
``import heta_notebook`` stays fast and pulls in plotly/ipywidgets only when displayed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # schema: the plain-data records
    **dict.fromkeys(
        [
            "BenchmarkManifest", "BenchmarkDocument", "BenchmarkEvidence", "BenchmarkExpected",
            "BenchmarkCase", "QueryResult", "QueryCitation", "QueryTraceEvent", "QueryResponse",
            "EvaluationScore", "EvaluationError", "EvaluationCaseResult", "EvaluationReport",
        ],
        "heta_notebook.schema",
    ),
    # evaluators
    "BenchmarkEvaluatorProtocol": "heta_notebook.evaluators.protocol",
    "EvaluatorSettings": "heta_notebook.evaluators.protocol",
    "evaluator": "heta_notebook.evaluators.decorators",
    "aevaluator": "heta_notebook.evaluators.decorators",
    "EvidenceRecallAtK": "heta_notebook.evaluators.retrieval",
    "BeirRetrievalMetric": "heta_notebook.evaluators.retrieval",
    "beir_default_metrics": "heta_notebook.evaluators.retrieval",
    "AnswerContains": "heta_notebook.evaluators.answer",
    "AnswerExactMatch": "heta_notebook.evaluators.answer",
    "AnswerTokenF1": "heta_notebook.evaluators.answer",
    "mean": "heta_notebook.evaluators.aggregation",
    "median": "heta_notebook.evaluators.aggregation",
    "mode": "heta_notebook.evaluators.aggregation",
    "weighted_mean": "heta_notebook.evaluators.aggregation",
    "aggregate": "heta_notebook.evaluators.aggregation",
    "summarize": "heta_notebook.evaluators.aggregation",
    "bootstrap_ci": "heta_notebook.evaluators.aggregation",
    "evaluate_batch": "heta_notebook.evaluators.retrieval",
    "evaluate_run": "heta_notebook.evaluators.retrieval",
    "LLMJudge": "heta_notebook.evaluators.judge",
    "AnswerCorrectnessJudge": "heta_notebook.evaluators.judge",
    "FaithfulnessJudge": "heta_notebook.evaluators.judge",
    "ContextRelevanceJudge": "heta_notebook.evaluators.judge",
    "judge_configured": "heta_notebook.evaluators.judge",
    # benchmarks
    "BenchmarkProtocol": "heta_notebook.benchmarks.protocol",
    "JsonlBenchmark": "heta_notebook.benchmarks.jsonl",
    "BeirBenchmark": "heta_notebook.benchmarks.beir",
    "RecordsBenchmark": "heta_notebook.benchmarks.records",
    "BenchmarkFormatError": "heta_notebook.benchmarks._io",
    "load_benchmark": "heta_notebook.benchmarks.protocol",
    "load_benchmark_sync": "heta_notebook.benchmarks.protocol",
    # embedded knowledge base
    "Recipe": "heta_notebook.kb.recipe",
    "Chunking": "heta_notebook.kb.recipe",
    "Bm25": "heta_notebook.kb.recipe",
    "Dense": "heta_notebook.kb.recipe",
    "Hybrid": "heta_notebook.kb.recipe",
    "KnowledgeBase": "heta_notebook.kb.knowledge_base",
    "KnowledgeBaseProtocol": "heta_notebook.kb.protocol",
    "RecipeProtocol": "heta_notebook.kb.protocol",
    "Embedder": "heta_notebook.kb.embedders",
    "LsaEmbedder": "heta_notebook.kb.embedders",
    "SentenceTransformerEmbedder": "heta_notebook.kb.embedders",
    # running
    "BenchmarkRunner": "heta_notebook.runner",
    "BenchmarkRunConfig": "heta_notebook.runner",
    "BenchmarkRunResult": "heta_notebook.runner",
    "RunCollection": "heta_notebook.runner",
    "run_benchmark": "heta_notebook.runner",
    "evaluate": "heta_notebook.runner",
    "aevaluate": "heta_notebook.runner",
    # storage
    "ReportStore": "heta_notebook.store",
    # analysis and display
    "compare": "heta_notebook.analysis.compare",
    "Comparison": "heta_notebook.analysis.compare",
    "setup_notebook": "heta_notebook.display.setup",
}  # fmt: skip

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'heta_notebook' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - static view of the lazy exports for type checkers
    from heta_notebook.schema import (  # noqa: F401
        BenchmarkCase,
        BenchmarkDocument,
        BenchmarkEvidence,
        BenchmarkExpected,
        BenchmarkManifest,
        EvaluationCaseResult,
        EvaluationError,
        EvaluationReport,
        EvaluationScore,
        QueryCitation,
        QueryResponse,
        QueryResult,
        QueryTraceEvent,
    )
    from heta_notebook.store import ReportStore  # noqa: F401
