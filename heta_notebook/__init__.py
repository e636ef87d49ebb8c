"""heta_notebook: evaluate retrieval-augmented systems from Jupyter.

Everything a notebook needs is importable from here. Names load lazily on first use, so
``import heta_notebook`` stays fast and pulls in plotly/ipywidgets only when displayed.
"""

from __future__ import annotations

import importlib
import warnings
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
        "heta_notebook.schema._records",
    ),
    # evaluators
    "BenchmarkEvaluatorProtocol": "heta_notebook.evaluators._protocol",
    "EvaluatorSettings": "heta_notebook.evaluators._protocol",
    "evaluator": "heta_notebook.evaluators._decorators",
    "aevaluator": "heta_notebook.evaluators._decorators",
    "EvidenceRecallAtK": "heta_notebook.evaluators._retrieval",
    "BeirRetrievalMetric": "heta_notebook.evaluators._retrieval",
    "beir_default_metrics": "heta_notebook.evaluators._retrieval",
    "AnswerContains": "heta_notebook.evaluators._answer",
    "AnswerExactMatch": "heta_notebook.evaluators._answer",
    "AnswerTokenF1": "heta_notebook.evaluators._answer",
    "mean": "heta_notebook.evaluators._aggregation",
    "median": "heta_notebook.evaluators._aggregation",
    "most_common": "heta_notebook.evaluators._aggregation",
    "weighted_mean": "heta_notebook.evaluators._aggregation",
    "aggregate": "heta_notebook.evaluators._aggregation",
    "summarize": "heta_notebook.evaluators._aggregation",
    "bootstrap_ci": "heta_notebook.evaluators._aggregation",
    "evaluate_batch": "heta_notebook.evaluators._retrieval",
    "evaluate_run": "heta_notebook.evaluators._retrieval",
    "RecipRank": "heta_notebook.evaluators._recip_rank",
    "LLMJudge": "heta_notebook.evaluators._judge",
    "AnswerCorrectnessJudge": "heta_notebook.evaluators._judge",
    "FaithfulnessJudge": "heta_notebook.evaluators._judge",
    "ContextRelevanceJudge": "heta_notebook.evaluators._judge",
    "judge_configured": "heta_notebook.evaluators._judge",
    # benchmarks
    "BenchmarkProtocol": "heta_notebook.benchmarks._protocol",
    "JsonlBenchmark": "heta_notebook.benchmarks._jsonl",
    "BeirBenchmark": "heta_notebook.benchmarks._beir",
    "RecordsBenchmark": "heta_notebook.benchmarks._records",
    "BenchmarkFormatError": "heta_notebook.benchmarks._io",
    "BenchmarkWarning": "heta_notebook.benchmarks._io",
    "load_benchmark": "heta_notebook.benchmarks._protocol",
    "load_benchmark_sync": "heta_notebook.benchmarks._protocol",
    "read_trec_run": "heta_notebook.benchmarks._trec",
    "read_trec_qrels": "heta_notebook.benchmarks._trec",
    "report_from_trec": "heta_notebook.benchmarks._trec",
    "reports_from_trec": "heta_notebook.benchmarks._trec",
    "TrecFormatError": "heta_notebook.benchmarks._trec_read",
    "write_trec_qrels": "heta_notebook.benchmarks._trec",
    # embedded knowledge base
    "Recipe": "heta_notebook.kb._recipe",
    "Chunking": "heta_notebook.kb._recipe",
    "Bm25": "heta_notebook.kb._recipe",
    "Dense": "heta_notebook.kb._recipe",
    "Hybrid": "heta_notebook.kb._recipe",
    "KnowledgeBase": "heta_notebook.kb._knowledge_base",
    "KnowledgeBaseProtocol": "heta_notebook.kb._protocol",
    "RecipeProtocol": "heta_notebook.kb._protocol",
    "Embedder": "heta_notebook.kb._embedders",
    "LsaEmbedder": "heta_notebook.kb._embedders",
    "SentenceTransformerEmbedder": "heta_notebook.kb._embedders",
    # running
    "BenchmarkRunner": "heta_notebook.runner",
    "BenchmarkRunConfig": "heta_notebook.runner",
    "BenchmarkRunResult": "heta_notebook.runner",
    "RunCollection": "heta_notebook.runner",
    "RayExecutor": "heta_notebook.runner",
    "run_benchmark": "heta_notebook.runner",
    "evaluate": "heta_notebook.runner",
    "aevaluate": "heta_notebook.runner",
    # storage
    "ReportStore": "heta_notebook.reports._store",
    # analysis and display
    "compare": "heta_notebook.analysis._compare",
    "Comparison": "heta_notebook.analysis._compare",
    "compare_benchmarks": "heta_notebook.analysis._benchmarks",
    "StatOptions": "heta_notebook.analysis._options",
    "power": "heta_notebook.analysis._power",
    "min_detectable_effect": "heta_notebook.analysis._power",
    "queries_needed": "heta_notebook.analysis._power",
    "effect_sizes": "heta_notebook.analysis._effects",
    "tukey_hsd": "heta_notebook.analysis._tukey",
    "BenchmarkComparison": "heta_notebook.analysis._benchmarks",
    # generated benchmarks (issue 36): made from a corpus, reviewed, validated
    "generate_benchmark": "heta_notebook.benchmarks._generate",
    "GeneratedBenchmark": "heta_notebook.benchmarks._generate",
    "GenerationManifest": "heta_notebook.benchmarks._generation_manifest",
    "validate_benchmark": "heta_notebook.analysis._validate",
    "BenchmarkValidation": "heta_notebook.analysis._validate",
    "SaturationWarning": "heta_notebook.analysis._validate",
    "ReviewWidget": "heta_notebook.display._review",
    "setup_notebook": "heta_notebook.display._setup",
    "ExplorerOptionError": "heta_notebook.display._explorer_options",
    # heta-framework interop (heta_framework itself is imported only when these are called)
    "to_heta_report": "heta_notebook.integrations.heta",
    "from_heta_report": "heta_notebook.integrations.heta",
    "as_heta_evaluator": "heta_notebook.integrations.heta",

    # answers (issue 15): the recipe's answer step, SQuAD benchmark and metrics
    "Extractive": "heta_notebook.kb._answer",
    "ChatAnswer": "heta_notebook.kb._answer",
    "AnswerPrompt": "heta_notebook.kb._answer",
    "SquadBenchmark": "heta_notebook.benchmarks._squad",
    "SquadExactMatch": "heta_notebook.evaluators._squad",
    "SquadTokenF1": "heta_notebook.evaluators._squad",
    "AbstentionAccuracy": "heta_notebook.evaluators._squad",

    # your own system (issue 23): the one door, HTTP services, stages
    "as_system": "heta_notebook.systems._adapt",
    "HttpSystem": "heta_notebook.systems._http",
    "declare_secrets": "heta_notebook._util.redaction",  # issue 40: hidden wherever echoed
    "Stages": "heta_notebook.systems._stages",
    "IdCoverageError": "heta_notebook.systems._check",
    "NoResultsError": "heta_notebook.systems._check",
    "SystemOutputError": "heta_notebook.systems._normalize",
    "Abstain": "heta_notebook.schema._abstain",
    "token_usage": "heta_notebook.analysis._usage",
    "DepthWarning": "heta_notebook.schema._status",

    # relevance labels (issue 35): label sets, judged@k, holes, pools, the judge, trust
    "Label": "heta_notebook.labels._set",
    "LabelSet": "heta_notebook.labels._set",
    "JudgedAtK": "heta_notebook.labels._judged",
    "UnjudgedWarning": "heta_notebook.labels._judged",
    "HoleAwareMetric": "heta_notebook.labels._holes",
    "hole_metrics": "heta_notebook.labels._holes",
    "score_with_labels": "heta_notebook.labels._holes",
    "labeled": "heta_notebook.labels._benchmark",
    "labels_of": "heta_notebook.labels._benchmark",
    "pool": "heta_notebook.labels._pool",
    "Pool": "heta_notebook.labels._pool",
    "rankings_of": "heta_notebook.labels._pool",
    "RelevanceJudge": "heta_notebook.labels._judge",
    "fill_holes": "heta_notebook.labels._judge",
    "afill_holes": "heta_notebook.labels._judge",
    "agreement": "heta_notebook.labels._trust",
    "cohen_kappa": "heta_notebook.labels._trust",
    "corrected_mean": "heta_notebook.labels._trust",
    "corrected_label_mean": "heta_notebook.labels._trust",
    "corrected_score": "heta_notebook.labels._trust",
    "corrected_scores": "heta_notebook.analysis._corrected",
    "queries_to_label": "heta_notebook.analysis._corrected",
    "CorrectedScore": "heta_notebook.analysis._corrected",
    "NoHumanLabelsError": "heta_notebook.analysis._corrected",
    "Labeler": "heta_notebook.display._labeling",
}  # fmt: skip

__all__ = sorted(_EXPORTS) + ["__version__"]

# Public name -> its name in the module, where the two differ.
_MODULE_NAMES = {"most_common": "mode"}
# Old public names, still importable with a DeprecationWarning: old -> new.
_DEPRECATED = {"mode": "most_common"}


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        new = _DEPRECATED[name]
        warnings.warn(
            f"heta_notebook.{name} is deprecated (it reads like a query mode); use "
            f"heta_notebook.{new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return __getattr__(new)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'heta_notebook' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), _MODULE_NAMES.get(name, name))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - the lazy exports, spelled out for type checkers
    # Kept equal to _EXPORTS by tests/test_public_api_static.py.
    from heta_notebook._util.redaction import (  # noqa: F401
        declare_secrets,
    )
    from heta_notebook.analysis._benchmarks import (  # noqa: F401
        BenchmarkComparison,
        compare_benchmarks,
    )
    from heta_notebook.analysis._compare import (  # noqa: F401
        Comparison,
        compare,
    )
    from heta_notebook.analysis._corrected import (  # noqa: F401
        CorrectedScore,
        NoHumanLabelsError,
        corrected_scores,
        queries_to_label,
    )
    from heta_notebook.analysis._effects import effect_sizes  # noqa: F401
    from heta_notebook.analysis._options import StatOptions  # noqa: F401
    from heta_notebook.analysis._power import (  # noqa: F401
        min_detectable_effect,
        power,
        queries_needed,
    )
    from heta_notebook.analysis._tukey import tukey_hsd  # noqa: F401
    from heta_notebook.analysis._usage import (  # noqa: F401
        token_usage,
    )
    from heta_notebook.analysis._validate import (  # noqa: F401
        BenchmarkValidation,
        SaturationWarning,
        validate_benchmark,
    )
    from heta_notebook.benchmarks._beir import (  # noqa: F401
        BeirBenchmark,
    )
    from heta_notebook.benchmarks._generate import (  # noqa: F401
        GeneratedBenchmark,
        generate_benchmark,
    )
    from heta_notebook.benchmarks._generation_manifest import (  # noqa: F401
        GenerationManifest,
    )
    from heta_notebook.benchmarks._io import (  # noqa: F401
        BenchmarkFormatError,
        BenchmarkWarning,
    )
    from heta_notebook.benchmarks._jsonl import (  # noqa: F401
        JsonlBenchmark,
    )
    from heta_notebook.benchmarks._protocol import (  # noqa: F401
        BenchmarkProtocol,
        load_benchmark,
        load_benchmark_sync,
    )
    from heta_notebook.benchmarks._records import (  # noqa: F401
        RecordsBenchmark,
    )
    from heta_notebook.benchmarks._squad import (  # noqa: F401
        SquadBenchmark,
    )
    from heta_notebook.benchmarks._trec import (  # noqa: F401
        read_trec_qrels,
        read_trec_run,
        report_from_trec,
        reports_from_trec,
        write_trec_qrels,
    )
    from heta_notebook.benchmarks._trec_read import TrecFormatError  # noqa: F401
    from heta_notebook.display._explorer_options import (  # noqa: F401
        ExplorerOptionError,
    )
    from heta_notebook.display._labeling import (  # noqa: F401
        Labeler,
    )
    from heta_notebook.display._review import (  # noqa: F401
        ReviewWidget,
    )
    from heta_notebook.display._setup import (  # noqa: F401
        setup_notebook,
    )
    from heta_notebook.evaluators._aggregation import (  # noqa: F401
        aggregate,
        bootstrap_ci,
        mean,
        median,
        summarize,
        weighted_mean,
    )
    from heta_notebook.evaluators._aggregation import mode as most_common  # noqa: F401
    from heta_notebook.evaluators._answer import (  # noqa: F401
        AnswerContains,
        AnswerExactMatch,
        AnswerTokenF1,
    )
    from heta_notebook.evaluators._decorators import (  # noqa: F401
        aevaluator,
        evaluator,
    )
    from heta_notebook.evaluators._judge import (  # noqa: F401
        AnswerCorrectnessJudge,
        ContextRelevanceJudge,
        FaithfulnessJudge,
        LLMJudge,
        judge_configured,
    )
    from heta_notebook.evaluators._protocol import (  # noqa: F401
        BenchmarkEvaluatorProtocol,
        EvaluatorSettings,
    )
    from heta_notebook.evaluators._recip_rank import RecipRank  # noqa: F401
    from heta_notebook.evaluators._retrieval import (  # noqa: F401
        BeirRetrievalMetric,
        EvidenceRecallAtK,
        beir_default_metrics,
        evaluate_batch,
        evaluate_run,
    )
    from heta_notebook.evaluators._squad import (  # noqa: F401
        AbstentionAccuracy,
        SquadExactMatch,
        SquadTokenF1,
    )
    from heta_notebook.integrations.heta import (  # noqa: F401
        as_heta_evaluator,
        from_heta_report,
        to_heta_report,
    )
    from heta_notebook.kb._answer import (  # noqa: F401
        AnswerPrompt,
        ChatAnswer,
        Extractive,
    )
    from heta_notebook.kb._embedders import (  # noqa: F401
        Embedder,
        LsaEmbedder,
        SentenceTransformerEmbedder,
    )
    from heta_notebook.kb._knowledge_base import (  # noqa: F401
        KnowledgeBase,
    )
    from heta_notebook.kb._protocol import (  # noqa: F401
        KnowledgeBaseProtocol,
        RecipeProtocol,
    )
    from heta_notebook.kb._recipe import (  # noqa: F401
        Bm25,
        Chunking,
        Dense,
        Hybrid,
        Recipe,
    )
    from heta_notebook.labels._benchmark import (  # noqa: F401
        labeled,
        labels_of,
    )
    from heta_notebook.labels._holes import (  # noqa: F401
        HoleAwareMetric,
        hole_metrics,
        score_with_labels,
    )
    from heta_notebook.labels._judge import (  # noqa: F401
        RelevanceJudge,
        afill_holes,
        fill_holes,
    )
    from heta_notebook.labels._judged import (  # noqa: F401
        JudgedAtK,
        UnjudgedWarning,
    )
    from heta_notebook.labels._pool import (  # noqa: F401
        Pool,
        pool,
        rankings_of,
    )
    from heta_notebook.labels._set import (  # noqa: F401
        Label,
        LabelSet,
    )
    from heta_notebook.labels._trust import (  # noqa: F401
        agreement,
        cohen_kappa,
        corrected_label_mean,
        corrected_mean,
        corrected_score,
    )
    from heta_notebook.reports._store import ReportStore  # noqa: F401
    from heta_notebook.runner import (  # noqa: F401
        BenchmarkRunConfig,
        BenchmarkRunner,
        BenchmarkRunResult,
        RayExecutor,
        RunCollection,
        aevaluate,
        evaluate,
        run_benchmark,
    )
    from heta_notebook.schema._abstain import Abstain  # noqa: F401
    from heta_notebook.schema._records import (  # noqa: F401
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
    from heta_notebook.schema._status import (  # noqa: F401
        DepthWarning,
    )
    from heta_notebook.systems._adapt import (  # noqa: F401
        as_system,
    )
    from heta_notebook.systems._check import (  # noqa: F401
        IdCoverageError,
        NoResultsError,
    )
    from heta_notebook.systems._http import (  # noqa: F401
        HttpSystem,
    )
    from heta_notebook.systems._normalize import (  # noqa: F401
        SystemOutputError,
    )
    from heta_notebook.systems._stages import (  # noqa: F401
        Stages,
    )
