"""Relevance labels as data: label sets (original qrels + added labels with provenance),
judged@k, scores that admit holes, pools, the LLM relevance judge, agreement and
corrected means. See ``docs/labels.md``."""

from heta_notebook.labels._benchmark import LabeledBenchmark, labeled, labels_of
from heta_notebook.labels._holes import UNJUDGED, HoleAwareMetric, hole_metrics, score_with_labels
from heta_notebook.labels._judge import (
    UMBRELA,
    FillResult,
    JudgeFailure,
    RelevanceJudge,
    afill_holes,
    fill_holes,
)
from heta_notebook.labels._judged import JudgedAtK, UnjudgedWarning, case_qrels
from heta_notebook.labels._pool import Pool, pool
from heta_notebook.labels._set import Label, LabelSet, read_trec_qrels
from heta_notebook.labels._trust import (
    Agreement,
    CorrectedMean,
    agreement,
    cohen_kappa,
    corrected_label_mean,
    corrected_mean,
    corrected_score,
)

__all__ = [
    "UMBRELA",
    "UNJUDGED",
    "Agreement",
    "CorrectedMean",
    "FillResult",
    "HoleAwareMetric",
    "JudgeFailure",
    "JudgedAtK",
    "Label",
    "LabelSet",
    "LabeledBenchmark",
    "Pool",
    "RelevanceJudge",
    "UnjudgedWarning",
    "afill_holes",
    "agreement",
    "case_qrels",
    "cohen_kappa",
    "corrected_label_mean",
    "corrected_mean",
    "corrected_score",
    "fill_holes",
    "hole_metrics",
    "labeled",
    "labels_of",
    "pool",
    "read_trec_qrels",
    "score_with_labels",
]
