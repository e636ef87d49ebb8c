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

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np
from pydantic_core import to_json

from heta_notebook.evaluators._kernels import (
    CONVENTIONS,
    METRICS,
    Convention,
    MetricName,
    ideal_grades,
    padded,
    paused_gc,
    ranked_grades,
    score_matrix,
    trec_ranking,
)
from heta_notebook.evaluators._matching import (
    EvidenceMatch,
    match_evidence,
    qrels_of,
    ranked_document_ids,
)
from heta_notebook.evaluators._protocol import EvaluatorSettings, SyncScorer
from heta_notebook.schema._construct import constructed_scores
from heta_notebook.schema._records import BenchmarkCase, EvaluationScore, QueryResponse

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
class EvidenceRecallAtK(SyncScorer):
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

    def score(self, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Score one response (``evaluate`` and ``evaluate_batch`` call this)."""
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


class _Judged:
    """One scorable case: its qrels, ranked document ids, and where the relevant ones are."""

    __slots__ = ("index", "qrels", "ranked", "grades", "_ranks", "_relevant", "n_relevant")

    def __init__(self, index: int, qrels: Mapping[str, int], ranked: list[str]) -> None:
        self.index, self.qrels, self.ranked = index, qrels, ranked
        self.grades = list(map(qrels.get, ranked, repeat(0)))
        self._ranks: list[int] | None = None
        self._relevant: list[str] = []
        self.n_relevant = sum(1 for g in qrels.values() if g > 0)

    def matched(self, k: int) -> list[str]:
        """Relevant documents within the top ``k`` (in rank order)."""
        if self._ranks is None:
            self._ranks = [rank for rank, g in enumerate(self.grades) if g > 0]
            self._relevant = [self.ranked[rank] for rank in self._ranks]
        return self._relevant[: bisect_left(self._ranks, k)]


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
    with paused_gc():
        judged, skipped = _judge(cases, responses, depth, metrics[0].convention)
        values = _kernel_values(metrics, judged, depth)
        cutoffs = {m.k for m in metrics}
        convention = metrics[0].convention
        metadata = {
            k: _with_skips(_beir_metadata(judged, k, convention), judged, skipped) for k in cutoffs
        }
        texts = _beir_metadata_json(judged, cutoffs, convention, skipped)
        return [
            _metric_scores(m, values[(m.metric, m.k)], judged, metadata[m.k], texts[m.k], skipped)
            for m in metrics
        ]


def _with_skips(
    metadata: list[dict[str, Any]], judged: list[_Judged], skipped: dict[int, str]
) -> list[dict[str, Any]]:
    """Per case (judged or not) its metadata: a skipped case's is ``skipped_score``'s."""
    if not skipped:
        return metadata
    full: list[dict[str, Any]] = [{}] * (len(judged) + len(skipped))
    for index, reason in skipped.items():
        full[index] = {"skipped": True, "skip_reason": reason}
    for item, meta in zip(judged, metadata, strict=True):
        full[item.index] = meta
    return full


def _metric_scores(
    metric: BeirRetrievalMetric,
    values: np.ndarray,
    judged: list[_Judged],
    metadata: list[dict[str, Any]],
    metadata_json: list[str | None] | None,
    skipped: dict[int, str],
) -> list[EvaluationScore]:
    """One metric's scores in case order: kernel values for judged cases; a skipped case
    gets ``EvaluationScore.skipped_score``'s fields (value 0.0, no verdict, the reason)."""
    threshold = metric.settings.threshold if metric.settings is not None else None
    values_list = values.tolist()
    passed: list[bool | None] = (
        [None] * len(values_list) if threshold is None else [v >= threshold for v in values_list]
    )
    if skipped:
        full_values, full_passed = [0.0] * len(metadata), [None] * len(metadata)
        for item, value, ok in zip(judged, values_list, passed, strict=True):
            full_values[item.index], full_passed[item.index] = value, ok
        values_list, passed = full_values, full_passed
    return constructed_scores(metric.name, values_list, passed, metadata, metadata_json)


def _judge(
    cases: Sequence[BenchmarkCase],
    responses: Sequence[QueryResponse],
    depth: int,
    convention: Convention = "trec_eval",
) -> tuple[list[_Judged], dict[int, str]]:
    """Each case's qrels and ranked documents; a result naming no document holds its rank
    as the document its id names under trec_eval (heta-framework skips it)."""
    judged: list[_Judged] = []
    skipped: dict[int, str] = {}
    for index, (case, response) in enumerate(zip(cases, responses, strict=True)):
        qrels = qrels_of(case.expected.evidence)
        if not qrels:
            skipped[index] = NO_QRELS
        elif not any(grade > 0 for grade in qrels.values()):
            skipped[index] = NO_RELEVANT
        else:
            by_id = qrels if convention == "trec_eval" else None
            ranked = ranked_document_ids(response.results, k=depth, judged=by_id)
            judged.append(_Judged(index, qrels, ranked))
    return judged, skipped


def _kernel_values(
    metrics: Sequence[BeirRetrievalMetric], judged: list[_Judged], depth: int
) -> dict[tuple[MetricName, int], np.ndarray]:
    if not judged:
        return {(m.metric, m.k): np.zeros(0) for m in metrics}
    grades = padded([item.grades for item in judged], depth)
    ideal, n_relevant = ideal_grades([item.qrels for item in judged], depth)
    pairs = [(m.metric, m.k) for m in metrics]
    return score_matrix(grades, ideal, n_relevant, pairs, metrics[0].convention)


def _beir_metadata(judged: list[_Judged], k: int, convention: Convention) -> list[dict[str, Any]]:
    """heta-framework's BEIR metadata per judged case; one dict per (case, k), shared by the
    metrics at that k (records are frozen: treat metadata as read-only)."""
    if convention != "trec_eval":
        return [
            {
                "relevant_documents": item.n_relevant,
                "retrieved_documents": min(len(item.ranked), k),
                "matched_documents": item.matched(k),
                "convention": convention,
            }
            for item in judged
        ]
    return [
        {
            "relevant_documents": item.n_relevant,
            "retrieved_documents": min(len(item.ranked), k),
            "matched_documents": item.matched(k),
        }
        for item in judged
    ]


def _beir_metadata_json(
    judged: list[_Judged], cutoffs: set[int], convention: Convention, skipped: dict[int, str]
) -> dict[int, list[str | None] | None]:
    """Per cutoff, ``_beir_metadata`` (with ``_with_skips``) as compact JSON, as
    ``pydantic_core.to_json`` writes it: the numbers formatted, each matched document id
    escaped once per case, skipped cases' dicts as ``skipped_score`` writes them (None
    for a cutoff when an id is not a string)."""
    end = "]}" if convention == "trec_eval" else '],"convention":' + _quoted(convention) + "}"
    texts: dict[int, list[str | None]] = {k: [None] * (len(judged) + len(skipped)) for k in cutoffs}
    for index, reason in skipped.items():
        for column in texts.values():
            column[index] = '{"skipped":true,"skip_reason":' + _quoted(reason) + "}"
    for item in judged:
        relevant = item.matched(max(cutoffs))
        if not all(d.__class__ is str for d in relevant):
            return dict.fromkeys(cutoffs)
        quoted = list(map(_quoted, relevant))
        head = f'{{"relevant_documents":{item.n_relevant:d},"retrieved_documents":'
        for k, column in texts.items():
            matched = ",".join(quoted[: len(item.matched(k))])
            retrieved = min(len(item.ranked), k)
            column[item.index] = f'{head}{retrieved:d},"matched_documents":[{matched}{end}'
    return texts  # type: ignore[return-value]


def _quoted(text: str) -> str:
    """A string as a JSON literal, as ``pydantic_core.to_json`` writes it."""
    return to_json(text).decode()


def evaluate_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[BeirRetrievalMetric] | None = None,
) -> dict[str, dict[str, float]]:
    """Score a plain run ``{query: {doc: score}}`` like ``pytrec_eval.RelevanceEvaluator``.

    Documents are ranked as trec_eval ranks them (score descending, ties by document id
    descending, compared as bytes). Queries with an empty run or without a relevant judged
    document are left out (skipped). Returns ``{query: {metric name: value}}``.
    """
    metrics = list(metrics or beir_default_metrics())
    queries = [q for q in run if run[q] and any(g > 0 for g in qrels.get(q, {}).values())]
    if not queries:
        return {}
    with paused_gc():
        return _score_run(queries, [qrels[q] for q in queries], [run[q] for q in queries], metrics)


def _score_run(
    queries: list[str],
    qrels: list[Mapping[str, int]],
    runs: list[Mapping[str, float]],
    metrics: list[BeirRetrievalMetric],
) -> dict[str, dict[str, float]]:
    depth = max(m.k for m in metrics)
    grades = ranked_grades(runs, qrels, depth)
    ideal, n_relevant = ideal_grades(qrels, depth)
    names: list[str] = []
    columns: list[list[float]] = []
    for convention in CONVENTIONS:
        group = [m for m in metrics if m.convention == convention]
        if group:
            pairs = [(m.metric, m.k) for m in group]
            values = score_matrix(grades, ideal, n_relevant, pairs, convention)
            names += [m.name for m in group]
            columns += [values[pair].tolist() for pair in pairs]
    rows = zip(*columns, strict=True)
    return {q: dict(zip(names, row, strict=True)) for q, row in zip(queries, rows, strict=True)}


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
    if not evaluators:
        return [() for _ in cases]
    return list(zip(*evaluate_batch_columns(evaluators, cases, responses), strict=True))


def evaluate_batch_columns(
    evaluators: Sequence[Any],
    cases: Sequence[BenchmarkCase],
    responses: Sequence[QueryResponse],
) -> list[list[EvaluationScore]]:
    """``evaluate_batch`` by evaluator: one list of scores (in case order) per evaluator; a
    BEIR metric's is a :class:`ConstructedScores` that a checkpoint writes as columns."""
    unsupported = [e for e in evaluators if not supports_batch(e)]
    if unsupported:
        raise TypeError(f"these evaluators have no evaluate_batch: {unsupported!r}")
    columns: dict[int, list[EvaluationScore]] = {}
    for convention in CONVENTIONS:
        group = [
            (i, e)
            for i, e in enumerate(evaluators)
            if isinstance(e, BeirRetrievalMetric) and e.convention == convention
        ]
        if group:
            scored = beir_scores([e for _, e in group], cases, responses)
            columns.update({i: column for (i, _), column in zip(group, scored, strict=True)})
    for i, e in enumerate(evaluators):
        if i not in columns:
            columns[i] = list(e.evaluate_batch(cases, responses))
        if len(columns[i]) != len(cases):
            raise ValueError(
                f"evaluator {e!r} returned {len(columns[i])} scores for {len(cases)} cases"
            )
    return [columns[i] for i in range(len(evaluators))]


__all__ = [
    "BeirRetrievalMetric",
    "EvidenceRecallAtK",
    "beir_default_metrics",
    "beir_scores",
    "evaluate_batch",
    "evaluate_batch_columns",
    "evaluate_run",
    "paused_gc",
    "supports_batch",
    "trec_ranking",
]
