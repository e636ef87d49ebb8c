"""Retrieval evaluators: evidence recall@k and the BEIR ranking metrics (trec_eval conventions).

``BeirRetrievalMetric`` maps chunk results to benchmark documents (``matching.py``), keeps
each document at its best rank, and scores against the case's qrels (evidence with
``reference_id`` = document id and ``metadata.relevance`` = grade). Numbers equal
pytrec_eval's ``ndcg_cut_k``, ``map_cut_k``, ``recall_k``, ``P_k`` and BEIR's ``MRR@k``;
``convention="heta"`` reproduces heta-framework 0.1.2 instead (see ``_kernels.py``).

Every evaluator here also has ``evaluate_batch(cases, responses)``; the module-level
:func:`evaluate_batch` scores many evaluators at once, computing all BEIR metrics of a
convention in a single numpy pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from heta_notebook.evaluators._kernels import (
    CONVENTIONS,
    METRICS,
    Convention,
    MetricName,
    padded,
    score_matrix,
)
from heta_notebook.evaluators.matching import (
    EvidenceMatch,
    match_evidence,
    qrels_of,
    ranked_document_ids,
)
from heta_notebook.evaluators.protocol import EvaluatorSettings
from heta_notebook.schema import BenchmarkCase, EvaluationScore, QueryResponse

NO_QRELS = "case has no qrels (no expected evidence with a reference_id)"
NO_RELEVANT = (
    "qrels judge no document relevant (grade > 0); pytrec_eval would report 0.0 for every "
    "metric, which would drag means down for a query that cannot be answered"
)


def _check_k(k: int) -> None:
    if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def make_score(
    name: str,
    value: float,
    metadata: dict[str, Any],
    settings: EvaluatorSettings | None = None,
) -> EvaluationScore:
    """A scored value (already finite); ``passed`` from the settings' threshold, if any."""
    threshold = settings.threshold if settings is not None else None
    passed = None if threshold is None else bool(value >= threshold)
    return EvaluationScore.model_construct(
        name=name, value=float(value), passed=passed, metadata=metadata
    )


# --------------------------------------------------------------------------- evidence recall


@dataclass(frozen=True)
class EvidenceRecallAtK:
    """Share of expected evidence items matched by the top ``k`` results.

    Metadata lists matched evidence (with rank, result id and the rule that matched) and
    missing evidence, so a UI can show both. No expected evidence → a skipped score.
    """

    k: int = 5
    settings: EvaluatorSettings | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        _check_k(self.k)

    @property
    def name(self) -> str:
        """``evidence_recall@{k}`` (heta-framework's name)."""
        return f"evidence_recall@{self.k}"

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Score one response."""
        return self.score(case, response)

    def evaluate_batch(
        self, cases: Sequence[BenchmarkCase], responses: Sequence[QueryResponse]
    ) -> list[EvaluationScore]:
        """Score many responses (same numbers as ``evaluate``)."""
        return [self.score(c, r) for c, r in zip(cases, responses, strict=True)]

    def score(self, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Synchronous ``evaluate``."""
        evidence = case.expected.evidence
        if not evidence:
            return EvaluationScore.skipped_score(self.name, "case has no expected evidence")
        matches = match_evidence(evidence, response.results, k=self.k)
        matched = [m for m in matches if m.matched]
        metadata = {
            "k": self.k,
            "matched": len(matched),
            "expected": len(matches),
            "matched_evidence": [_matched_entry(m) for m in matched],
            "missing_evidence": [_missing_entry(m) for m in matches if not m.matched],
            "matched_reference_ids": [m.reference_id for m in matched if m.reference_id],
        }
        return make_score(self.name, len(matched) / len(matches), metadata, self.settings)


def _matched_entry(match: EvidenceMatch) -> dict[str, Any]:
    return {
        **_missing_entry(match),
        "rank": match.rank,
        "result_id": match.result_id,
        "matched_by": match.matched_by,
    }


def _missing_entry(match: EvidenceMatch) -> dict[str, Any]:
    return {"index": match.index, "label": match.label, "reference_id": match.reference_id}


# --------------------------------------------------------------------------- BEIR metrics


@dataclass(frozen=True)
class BeirRetrievalMetric:
    """One BEIR metric (``ndcg``, ``map``, ``recall``, ``precision``, ``mrr``) at one ``k``.

    ``convention="trec_eval"`` (default) equals pytrec_eval / BEIR; ``convention="heta"``
    reproduces heta-framework 0.1.2 (nDCG gain 2**grade - 1, MAP@k divided by min(R, k)).
    """

    metric: MetricName
    k: int = 10
    convention: Convention = field(default="trec_eval", kw_only=True)
    settings: EvaluatorSettings | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")
        if self.convention not in CONVENTIONS:
            raise ValueError(f"convention must be one of {CONVENTIONS}, got {self.convention!r}")
        _check_k(self.k)

    @property
    def name(self) -> str:
        """``beir_{metric}@{k}`` (heta-framework's name, whatever the convention)."""
        return f"beir_{self.metric}@{self.k}"

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Score one response (the batch kernel with a batch of one)."""
        return self.evaluate_batch([case], [response])[0]

    def evaluate_batch(
        self, cases: Sequence[BenchmarkCase], responses: Sequence[QueryResponse]
    ) -> list[EvaluationScore]:
        """Score many responses in one numpy pass."""
        return beir_scores([self], cases, responses)[0]


def beir_default_metrics(
    k_values: Sequence[int] = (1, 3, 5, 10, 100),
    *,
    convention: Convention = "trec_eval",
) -> tuple[BeirRetrievalMetric, ...]:
    """nDCG, MAP, recall, precision and MRR at each k (25 metrics by default, heta's order)."""
    return tuple(
        BeirRetrievalMetric(metric, k, convention=convention)
        for metric in METRICS
        for k in k_values
    )


@dataclass
class _Judged:
    """One scorable case: its qrels and its deduplicated ranked document ids."""

    index: int
    qrels: dict[str, int]
    ranked: list[str]


def beir_scores(
    metrics: Sequence[BeirRetrievalMetric],
    cases: Sequence[BenchmarkCase],
    responses: Sequence[QueryResponse],
) -> list[list[EvaluationScore]]:
    """Scores per metric, per case, for BEIR metrics sharing one convention (one kernel pass)."""
    conventions = {m.convention for m in metrics}
    if len(conventions) != 1:
        raise ValueError(f"beir_scores needs one convention per call, got {sorted(conventions)}")
    depth = max(m.k for m in metrics)
    judged, skipped = _judge(cases, responses, depth)
    values = _kernel_values(metrics, judged, depth)
    out: list[list[EvaluationScore]] = []
    for metric in metrics:
        scores: list[EvaluationScore | None] = [None] * len(cases)
        for index, reason in skipped.items():
            scores[index] = EvaluationScore.skipped_score(metric.name, reason)
        column = values[(metric.metric, metric.k)]
        for row, item in enumerate(judged):
            scores[item.index] = _beir_score(metric, float(column[row]), item)
        out.append(scores)  # type: ignore[arg-type]
    return out


def _judge(
    cases: Sequence[BenchmarkCase], responses: Sequence[QueryResponse], depth: int
) -> tuple[list[_Judged], dict[int, str]]:
    judged: list[_Judged] = []
    skipped: dict[int, str] = {}
    for index, (case, response) in enumerate(zip(cases, responses, strict=True)):
        qrels = qrels_of(case.expected.evidence)
        if not qrels:
            skipped[index] = NO_QRELS
        elif not any(grade > 0 for grade in qrels.values()):
            skipped[index] = NO_RELEVANT
        else:
            judged.append(_Judged(index, qrels, ranked_document_ids(response.results, k=depth)))
    return judged, skipped


def _kernel_values(
    metrics: Sequence[BeirRetrievalMetric], judged: list[_Judged], depth: int
) -> dict[tuple[MetricName, int], np.ndarray]:
    if not judged:
        return {(m.metric, m.k): np.zeros(0) for m in metrics}
    grades = padded([[item.qrels.get(d, 0) for d in item.ranked] for item in judged], depth)
    positive = [sorted((g for g in item.qrels.values() if g > 0), reverse=True) for item in judged]
    ideal = padded(positive, depth)
    n_relevant = np.array([len(p) for p in positive], dtype=float)
    pairs = [(m.metric, m.k) for m in metrics]
    return score_matrix(grades, ideal, n_relevant, pairs, metrics[0].convention)


def _beir_score(metric: BeirRetrievalMetric, value: float, item: _Judged) -> EvaluationScore:
    top = item.ranked[: metric.k]
    metadata = {
        "relevant_documents": sum(1 for g in item.qrels.values() if g > 0),
        "retrieved_documents": len(top),
        "matched_documents": [d for d in top if item.qrels.get(d, 0) > 0],
    }
    if metric.convention != "trec_eval":
        metadata["convention"] = metric.convention
    return make_score(metric.name, value, metadata, metric.settings)


# --------------------------------------------------------------------------- batch entry point


def supports_batch(evaluator: object) -> bool:
    """Whether ``evaluator`` can score many cases at once (has ``evaluate_batch``)."""
    return callable(getattr(evaluator, "evaluate_batch", None))


def evaluate_batch(
    evaluators: Sequence[Any],
    cases: Sequence[BenchmarkCase],
    responses: Sequence[QueryResponse],
) -> list[tuple[EvaluationScore, ...]]:
    """Scores per case (in evaluator order) for batch-capable evaluators.

    BEIR metrics sharing a convention are computed together in one numpy pass; the numbers
    are identical to ``await evaluator.evaluate(...)`` case by case.
    """
    unsupported = [e for e in evaluators if not supports_batch(e)]
    if unsupported:
        raise TypeError(f"these evaluators have no evaluate_batch: {unsupported!r}")
    columns: dict[int, list[EvaluationScore]] = {}
    for convention in CONVENTIONS:
        group = [
            (i, e) for i, e in enumerate(evaluators)
            if isinstance(e, BeirRetrievalMetric) and e.convention == convention
        ]  # fmt: skip
        if group:
            scored = beir_scores([e for _, e in group], cases, responses)
            columns.update({i: column for (i, _), column in zip(group, scored, strict=True)})
    for i, e in enumerate(evaluators):
        if i not in columns:
            columns[i] = list(e.evaluate_batch(cases, responses))
    return [tuple(columns[i][row] for i in range(len(evaluators))) for row in range(len(cases))]


__all__ = [
    "BeirRetrievalMetric",
    "EvidenceRecallAtK",
    "beir_default_metrics",
    "beir_scores",
    "evaluate_batch",
    "supports_batch",
]
