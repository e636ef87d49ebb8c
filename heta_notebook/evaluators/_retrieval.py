"""Retrieval evaluators: evidence recall@k and the BEIR ranking metrics (trec_eval conventions).

``BeirRetrievalMetric`` maps chunk results to benchmark documents (``matching.py``), gives
each document its best result's score, and scores against the case's qrels (evidence with
``reference_id`` = document id and ``metadata.relevance`` = grade). Equal scores follow the
metric's tie rule (``ties=``, see ``_kernels.py``): by default ``"trec_eval"`` (score
descending, ties by document id descending as bytes), under which the numbers equal
pytrec_eval's ``ndcg_cut_k``, ``map_cut_k``, ``recall_k``, ``P_k`` and BEIR's ``MRR@k`` on the
same ``{doc: score}`` run, ties included; ``"as_returned"`` keeps the system's order and
``"expected"`` averages over every order of each tied group. A case whose top k holds equal
scores (or whose k-th and next result tie) says so: ``metadata["tied"] = True``, and
``metadata["by_tie_rule"]`` gives the metric's value under each of the three rules.
``convention="heta"`` reproduces heta-framework 0.1.2 instead (see ``_kernels.py``).

Every evaluator here also has ``evaluate_batch(cases, responses)``; the module-level
:func:`evaluate_batch` scores many evaluators at once, computing all BEIR metrics of a
convention in a single numpy pass.
"""

from __future__ import annotations

import functools
import operator
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Literal

import numpy as np
from pydantic_core import to_json

from heta_notebook.evaluators._kernels import (
    CONVENTIONS,
    METRICS,
    TIES,
    Convention,
    MetricName,
    Ties,
    grade_matrix,
    ideal_grades,
    judged_values,
    paused_gc,
    positive_ranks,
    ranked_grades,
    score_matrix,
    trec_ranking,
)
from heta_notebook.evaluators._matching import (
    EvidenceMatch,
    document_scores,
    match_evidence,
    qrels_of,
)
from heta_notebook.evaluators._protocol import EvaluatorSettings, SyncScorer
from heta_notebook.evaluators._tie_rules import (
    _decreasing,
    _first_tie,
    _tie_groups,
    ranked_by_rule,
    same_values,
)
from heta_notebook.schema._construct import ConstructedScores
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
    ``ties`` orders equal scores: ``"trec_eval"`` (the default, as pytrec_eval does),
    ``"as_returned"`` (the system's order; the default with ``convention="heta"``, as
    heta-framework ranks) or ``"expected"`` (tie-aware expected value).
    """

    metric: MetricName
    k: int = 10
    convention: Convention = field(default="trec_eval", kw_only=True)
    ties: Ties = field(default=None, kw_only=True)  # type: ignore[arg-type]  # None: set in __post_init__
    settings: EvaluatorSettings | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")
        if self.convention not in CONVENTIONS:
            raise ValueError(f"convention must be one of {CONVENTIONS}, got {self.convention!r}")
        if self.ties is None:
            default = "trec_eval" if self.convention == "trec_eval" else "as_returned"
            object.__setattr__(self, "ties", default)
        if self.ties not in TIES:
            raise ValueError(f"ties must be one of {TIES}, got {self.ties!r}")
        _check_k(self.k)

    def manifest(self) -> dict[str, Any]:
        """What the report records about this metric: its cutoff, convention, tie rule and
        what an unjudged document counts as (trec_eval's non-relevant; see ``labels/``)."""
        return {
            "metric": self.metric,
            "k": self.k,
            "convention": self.convention,
            "ties": self.ties,
            "unjudged": "nonrelevant",
        }

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
        return beir_scores([self], cases, responses)[0].records()


def beir_default_metrics(
    k_values: Sequence[int] = (1, 3, 5, 10, 100),
    *,
    convention: Convention = "trec_eval",
    ties: Ties | None = None,
) -> tuple[BeirRetrievalMetric, ...]:
    """nDCG, MAP, recall, precision and MRR at each k (25 metrics by default, heta's order)."""
    return tuple(
        BeirRetrievalMetric(metric, k, convention=convention, ties=ties)  # type: ignore[arg-type]
        for metric in METRICS
        for k in k_values
    )


class _Judged:
    """One scorable case: its qrels, ranked document ids and their grades."""

    __slots__ = (
        "index",
        "qrels",
        "ranked",
        "grades",
        "n_relevant",
        "first_tie",
        "groups",
        "returned",
        "sorted",
    )

    def __init__(
        self,
        index: int,
        qrels: Mapping[str, int],
        ranked: list[str],
        first_tie: int | None = None,
        groups: list[tuple[int, int]] | None = None,
        n_relevant: int | None = None,
    ) -> None:
        self.index, self.qrels, self.ranked = index, qrels, ranked
        # unjudged: 0.0, not 0 (most of a ranking: numpy reads a float faster than an int)
        self.grades = list(map(qrels.get, ranked, repeat(0.0)))
        self.n_relevant = _n_relevant(qrels) if n_relevant is None else n_relevant
        self.first_tie, self.groups = first_tie, groups
        self.returned: tuple[list[str], list[float] | None] | None = None
        self.sorted: tuple[list[str], list[float] | None] | None = None

    def tied(self, k: int) -> bool:
        """Whether two of the top ``k`` (or the k-th and the next) have equal scores."""
        return self.first_tie is not None and self.first_tie < k

    def facts(self, ranks: list[int]) -> _Facts:
        """What this case's metadata says (kept per case; the ranking is not), from the ranks
        of its grades > 0 (``_kernels.positive_ranks``)."""
        relevant = list(map(self.ranked.__getitem__, ranks))
        return _Facts(
            self.index, self.n_relevant, len(self.ranked), self.first_tie, ranks, relevant
        )


def _n_relevant(qrels: Mapping[str, int]) -> int:
    """R: how many judged documents are relevant (grade > 0)."""
    return list(map(operator.gt, qrels.values(), repeat(0))).count(True)


class _Facts:
    """What one judged case's BEIR metadata is made of: its case index, R, how many
    documents it ranked, where its first tie is, and its relevant documents' ranks and ids."""

    __slots__ = ("index", "n_relevant", "n_ranked", "first_tie", "ranks", "relevant")

    def __init__(
        self,
        index: int,
        n_relevant: int,
        n_ranked: int,
        first_tie: int | None,
        ranks: list[int],
        relevant: list[str],
    ) -> None:
        self.index, self.n_relevant, self.n_ranked = index, n_relevant, n_ranked
        self.first_tie, self.ranks, self.relevant = first_tie, ranks, relevant

    def tied(self, k: int) -> bool:
        """Whether two of the top ``k`` (or the k-th and the next) have equal scores."""
        return self.first_tie is not None and self.first_tie < k

    def matched(self, k: int) -> list[str]:
        """Relevant documents within the top ``k`` (in rank order)."""
        return self.relevant[: bisect_left(self.ranks, k)]


class _BatchFacts:
    """A batch's per-case facts, skip reasons and tie-rule values: each metric's metadata
    dicts (and their JSON) are made from them on first request, per cutoff once (the metrics
    at one cutoff share them), then per metric where ties add ``by_tie_rule``."""

    def __init__(
        self,
        judged: list[_Facts],
        skipped: dict[int, str],
        tail: dict[str, str],
        by_rule: dict[tuple[MetricName, int], RuleValues],
        cutoffs: set[int],
    ) -> None:
        self.judged, self.skipped, self.tail, self.by_rule = judged, skipped, tail, by_rule
        self.cutoffs = cutoffs
        self.n_cases = len(judged) + len(skipped)
        self._metadata: dict[Any, list[dict[str, Any]]] = {}
        self._texts: dict[Any, list[str | None] | None] = {}

    def metadata(self, pair: tuple[MetricName, int]) -> list[dict[str, Any]]:
        """One metric's metadata per case (read-only: shared with the metrics at its k)."""
        if pair not in self._metadata:
            k = pair[1]
            if k not in self._metadata:
                base = _beir_metadata(self.judged, k, self.tail)
                self._metadata[k] = _with_skips(base, self.judged, self.skipped)
            self._metadata[pair] = _with_rule_values(self._metadata[k], self.by_rule.get(pair))
        return self._metadata[pair]

    def texts(self, pair: tuple[MetricName, int]) -> list[str | None] | None:
        """``metadata(pair)`` as compact JSON per case (None when an id is not a string)."""
        if pair not in self._texts:
            k = pair[1]
            if k not in self._texts:  # every cutoff at once: each id quoted once
                self._texts.update(
                    _beir_metadata_json(self.judged, self.cutoffs, self.tail, self.skipped)
                )
            self._texts[pair] = _with_rule_texts(self._texts[k], self.by_rule.get(pair))
        return self._texts[pair]


def beir_scores(
    metrics: Sequence[BeirRetrievalMetric],
    cases: Sequence[BenchmarkCase],
    responses: Sequence[QueryResponse],
) -> list[ConstructedScores]:
    """Scores per metric, per case, for BEIR metrics sharing one convention and tie rule
    (one kernel pass), as one column per metric whose records are built when read: values
    and verdicts as arrays, each case's metadata (and its JSON) made from a few facts per
    case on first use (a run's statistics and checkpoint read the columns, no record)."""
    rules = {(m.convention, m.ties) for m in metrics}
    if len(rules) != 1:
        raise ValueError(f"beir_scores needs one convention and tie rule per call, got {rules}")
    depth = max(m.k for m in metrics)
    convention, ties = metrics[0].convention, metrics[0].ties
    with paused_gc():
        judged, skipped = _judge(cases, responses, depth, ties, metrics[0].convention)
        grades = grade_matrix(judged, depth)
        ranks = positive_ranks(grades)
        values = _kernel_values(metrics, judged, depth, grades)
        by_rule = _values_by_rule(metrics, judged, values, depth)
        facts = _BatchFacts(
            list(map(_Judged.facts, judged, ranks)),
            skipped,
            _metadata_tail(convention, ties),
            by_rule,
            {m.k for m in metrics},
        )
        at = np.fromiter((item.index for item in judged), np.int64, len(judged))
        return [_metric_column(m, values[(m.metric, m.k)], at, facts) for m in metrics]


RuleValues = dict[int, dict[str, float]]  # case index -> {tie rule: value}


def _values_by_rule(
    metrics: Sequence[BeirRetrievalMetric],
    judged: list[_Judged],
    values: dict[tuple[MetricName, int], np.ndarray],
    depth: int,
) -> dict[tuple[MetricName, int], RuleValues]:
    """For cases whose top k holds a tie, each metric's value under every tie rule (rescored
    for those cases only), so a report can say how much ties move a number."""
    rows = [row for row, item in enumerate(judged) if item.tied(depth)]
    if not rows:
        return {}
    indices = [judged[row].index for row in rows]
    main = {pair: v[rows] for pair, v in values.items()}
    per_rule = {metrics[0].ties: main}
    for rule in TIES:
        if rule not in per_rule:
            tied = [judged[row] for row in rows]
            per_rule[rule] = _rescored_values(metrics, tied, rule, main, depth)
    out: dict[tuple[MetricName, int], RuleValues] = {}
    for m in metrics:
        pair = (m.metric, m.k)
        by_rule = [(rule, per_rule[rule][pair].tolist()) for rule in TIES]  # Python floats
        out[pair] = {
            index: {rule: column[n] for rule, column in by_rule}
            for n, (row, index) in enumerate(zip(rows, indices, strict=True))
            if judged[row].tied(m.k)
        }
    return out


def _rescored_values(
    metrics: Sequence[BeirRetrievalMetric],
    tied: list[_Judged],
    rule: Ties,
    main: dict[tuple[MetricName, int], np.ndarray],
    depth: int,
) -> dict[tuple[MetricName, int], np.ndarray]:
    """The tied cases' values under ``rule``: ranked again and scored, but for the cases
    whose values it cannot change (``_tie_rules.same_values``), which keep ``main``'s."""
    if metrics[0].ties != "trec_eval":
        return _kernel_values(
            metrics, [_rescored(t, n, rule, depth) for n, t in enumerate(tied)], depth
        )
    convention = metrics[0].convention
    fresh = [n for n, item in enumerate(tied) if not same_values(item, rule, depth, convention)]
    out = {pair: column.copy() for pair, column in main.items()}
    if fresh:
        subset = [_rescored(tied[n], i, rule, depth) for i, n in enumerate(fresh)]
        scored = _kernel_values(metrics, subset, depth)
        for pair, column in out.items():
            column[fresh] = scored[pair]
    return out


def _rescored(item: _Judged, index: int, rule: Ties, depth: int) -> _Judged:
    """A tied case ranked again under ``rule`` from the document scores it kept (in the
    sorted order of its main rule when ``rule`` sorts the same way)."""
    if rule != "as_returned" and item.sorted is not None:
        return _judged(index, item.qrels, *item.sorted, depth, rule, item.n_relevant)
    ids, scores = item.returned or (item.ranked, None)
    ranked = ranked_by_rule(ids, scores, rule)
    return _judged(index, item.qrels, *ranked, depth, rule, item.n_relevant)


def _with_rule_values(
    metadata: list[dict[str, Any]], by_rule: RuleValues | None
) -> list[dict[str, Any]]:
    """One metric's metadata with ``by_tie_rule`` on its tied cases."""
    if not by_rule:
        return metadata
    metadata = list(metadata)
    for index, rules in by_rule.items():
        metadata[index] = {**metadata[index], "by_tie_rule": rules}
    return metadata


def _with_rule_texts(
    texts: list[str | None] | None, by_rule: RuleValues | None
) -> list[str | None] | None:
    """``_with_rule_values`` on the metadata's JSON."""
    if not by_rule or texts is None:
        return texts
    texts = list(texts)
    for index, rules in by_rule.items():
        text = texts[index]
        if text is not None:  # the dict's JSON ends with "}": append the one new field
            texts[index] = f'{text[:-1]},"by_tie_rule":{to_json(rules).decode()}}}'
    return texts


def _with_skips(
    metadata: list[dict[str, Any]], judged: list[_Facts], skipped: dict[int, str]
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


def _metric_column(
    metric: BeirRetrievalMetric, values: np.ndarray, at: np.ndarray, facts: _BatchFacts
) -> ConstructedScores:
    """One metric's scores in case order: kernel values for judged cases (``at``: their
    case indices); a skipped case gets ``EvaluationScore.skipped_score``'s fields (value 0.0,
    no verdict, the reason)."""
    threshold = metric.settings.threshold if metric.settings is not None else None
    n = facts.n_cases
    full = values if len(at) == n else np.zeros(n)
    if full is not values:
        full[at] = values
    passed: list[bool | None] = [None] * n
    if threshold is not None:
        for index, value in zip(at.tolist(), values.tolist(), strict=True):
            passed[index] = value >= threshold
    pair = (metric.metric, metric.k)
    return ConstructedScores(
        metric.name,
        full,
        passed,
        functools.partial(facts.metadata, pair),
        functools.partial(facts.texts, pair),
        skipped=facts.skipped,
    )


def _judge(
    cases: Sequence[BenchmarkCase],
    responses: Sequence[QueryResponse],
    depth: int,
    ties: Ties,
    convention: Convention = "trec_eval",
) -> tuple[list[_Judged], dict[int, str]]:
    """Each case's qrels and ranked documents; a result naming no document holds its rank
    as the document its id names under trec_eval (heta-framework skips it)."""
    judged: list[_Judged] = []
    skipped: dict[int, str] = {}
    seen: dict[int, tuple[Any, dict[str, int], int]] = {}  # a case's modes share its qrels
    for index, (case, response) in enumerate(zip(cases, responses, strict=True)):
        evidence = case.expected.evidence
        known = seen.get(id(evidence))
        if known is None or known[0] is not evidence:
            qrels = qrels_of(evidence)
            known = seen[id(evidence)] = (evidence, qrels, _n_relevant(qrels))
        _, qrels, n_relevant = known
        if not qrels:
            skipped[index] = NO_QRELS
        elif not n_relevant:
            skipped[index] = NO_RELEVANT
        else:
            by_id = qrels if convention == "trec_eval" else None
            returned = document_scores(response.results, judged=by_id)
            ids, scores = returned
            if scores is not None and _decreasing(scores):  # no tie: as returned, any rule
                judged.append(_Judged(index, qrels, ids[:depth], n_relevant=n_relevant))
                continue
            ranked = ranked_by_rule(ids, scores, ties)
            item = _judged(index, qrels, *ranked, depth, ties, n_relevant)
            if item.tied(depth):  # kept to rescore it under the other tie rules
                item.returned = returned  # trec_eval and expected sort alike: sorted once
                item.sorted = ranked if ties != "as_returned" else None
            judged.append(item)
    return judged, skipped


def _judged(
    index: int,
    qrels: Mapping[str, int],
    ids: list[str],
    scores: list[float] | None,
    depth: int,
    ties: Ties,
    n_relevant: int | None = None,
) -> _Judged:
    """A judged case ranked under ``ties``: the top ``depth`` (tie-aware: to the end of the
    tied group at ``depth``), and where its first tie is."""
    first_tie = _first_tie(scores[: depth + 1] if scores is not None else None)
    if ties != "expected" or first_tie is None or scores is None:
        return _Judged(index, qrels, ids[:depth], first_tie, n_relevant=n_relevant)
    groups = _tie_groups(scores, depth)
    return _Judged(index, qrels, ids[: len(groups)], first_tie, groups, n_relevant)


def _kernel_values(
    metrics: Sequence[BeirRetrievalMetric],
    judged: list[_Judged],
    depth: int,
    grades: np.ndarray | None = None,
) -> dict[tuple[MetricName, int], np.ndarray]:
    pairs = [(m.metric, m.k) for m in metrics]
    return judged_values(judged, pairs, metrics[0].convention, depth, grades)


def _metadata_tail(convention: Convention, ties: Ties) -> dict[str, str]:
    """The rule fields a case's metadata carries when they are not the convention's default."""
    if convention != "trec_eval":
        return {"convention": convention, **({"ties": ties} if ties != "as_returned" else {})}
    return {"ties": ties} if ties != "trec_eval" else {}


def _beir_metadata(judged: list[_Facts], k: int, tail: dict[str, str]) -> list[dict[str, Any]]:
    """heta-framework's BEIR metadata per judged case; one dict per (case, k), shared by the
    metrics at that k (records are frozen: treat metadata as read-only). ``tied`` is set
    (True) only on cases whose top ``k`` holds a tie."""
    return [
        {
            "relevant_documents": item.n_relevant,
            "retrieved_documents": min(item.n_ranked, k),
            "matched_documents": item.matched(k),
            **tail,
            **({"tied": True} if item.tied(k) else {}),
        }
        for item in judged
    ]


def _beir_metadata_json(
    judged: list[_Facts], cutoffs: set[int], tail: dict[str, str], skipped: dict[int, str]
) -> dict[int, list[str | None] | None]:
    """Per cutoff, ``_beir_metadata`` (with ``_with_skips``) as compact JSON, as
    ``pydantic_core.to_json`` writes it: the numbers formatted, each matched document id
    escaped once per case, skipped cases' dicts as ``skipped_score`` writes them (None
    for a cutoff when an id is not a string)."""
    end = "]" + "".join(f",{_quoted(key)}:{_quoted(value)}" for key, value in tail.items())
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
            retrieved = min(item.n_ranked, k)
            tied = ',"tied":true}' if item.tied(k) else "}"
            column[item.index] = f'{head}{retrieved:d},"matched_documents":[{matched}{end}{tied}'
    return texts  # type: ignore[return-value]


def _quoted(text: str) -> str:
    """A string as a JSON literal, as ``pydantic_core.to_json`` writes it."""
    return to_json(text).decode()


def evaluate_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[BeirRetrievalMetric] | None = None,
    *,
    missing: Literal["drop", "zero"] = "drop",
) -> dict[str, dict[str, float]]:
    """Score a plain run ``{query: {doc: score}}`` against ``{query: {doc: grade}}`` qrels.

    Each metric ranks by its tie rule (default trec_eval's: score descending, ties by
    document id descending as bytes; ``"as_returned"`` keeps each run dict's order).
    Queries in the run but not in the qrels are ignored. ``missing`` says which queries count:

    - ``"drop"`` (default, as case scoring skips them): only queries with a non-empty run and
      at least one relevant (grade > 0) judged document;
    - ``"zero"``: ``trec_eval -c``: every query in the qrels; one with no (or an empty) run,
      or no relevant judged document, scores 0 on every metric. Per query these are
      pytrec_eval's values on ``{q: run.get(q, {}) for q in qrels}``, so the means are
      ``trec_eval -c``'s.

    Returns ``{query: {metric name: value}}``.
    """
    if missing not in ("drop", "zero"):
        raise ValueError(f"missing must be 'drop' or 'zero', got {missing!r}")
    metrics = list(metrics or beir_default_metrics())
    scored: dict[str, dict[str, float]] = {}
    with paused_gc():
        judged = [(q, j, r) for q, j in qrels.items() if j and (r := run.get(q))]
        for start in range(0, len(judged), RUN_BLOCK):
            _score_block(judged[start : start + RUN_BLOCK], metrics, scored)
    if missing == "drop":  # exactly the scored queries, already in the qrels' order
        return scored
    zeros = dict.fromkeys((m.name for m in metrics), 0.0)
    return {q: scored[q] if q in scored else dict(zeros) for q in qrels}


RUN_BLOCK = 2048
"""Queries scored together by ``evaluate_run``: every temporary matrix of a block stays in the
CPU cache and is reused by the allocator (whole-run matrices of 10 M entries cost a page fault
per 4 kB and a trip to memory per pass). Rows are independent, so values do not depend on it."""


def _score_block(
    judged: list[tuple[str, Mapping[str, int], Mapping[str, float]]],
    metrics: list[BeirRetrievalMetric],
    scored: dict[str, dict[str, float]],
) -> None:
    """Add ``evaluate_run``'s scores of some queries to ``scored``: those with a relevant
    judged document, as ``{query: {metric name: value}}``."""
    depth = max(m.k for m in metrics)
    # with a relevant document: R > 0 (R is computed for the kernels anyway)
    ideal, n_relevant = ideal_grades([j for _, j, _ in judged], depth)
    if not n_relevant.all():
        keep = np.flatnonzero(n_relevant > 0)
        judged = [judged[i] for i in keep.tolist()]
        ideal, n_relevant = ideal[keep], n_relevant[keep]
    if not judged:
        return
    queries, qrels, runs = map(list, zip(*judged, strict=True))
    names: list[str] = []
    columns: list[np.ndarray] = []
    for rule in sorted({(m.convention, m.ties) for m in metrics}):
        group = [m for m in metrics if (m.convention, m.ties) == rule]
        pairs = [(m.metric, m.k) for m in group]
        values = _run_values(qrels, runs, pairs, rule, depth, (ideal, n_relevant))
        names += [m.name for m in group]
        columns += [values[pair] for pair in pairs]
    rows = np.column_stack(columns).tolist()  # each query's values together, as Python floats
    scored.update(zip(queries, map(dict, map(zip, repeat(names), rows)), strict=True))


def _run_values(
    qrels: list[Mapping[str, int]],
    runs: list[Mapping[str, float]],
    pairs: list[tuple[MetricName, int]],
    rule: tuple[Convention, Ties],
    depth: int,
    ideal_and_r: tuple[np.ndarray, np.ndarray],
) -> dict[tuple[MetricName, int], np.ndarray]:
    convention, ties = rule
    ideal, n_relevant = ideal_and_r
    if ties == "trec_eval":  # the vectorised path: one stable argsort of all runs
        return score_matrix(ranked_grades(runs, qrels, depth), ideal, n_relevant, pairs, convention)
    judged = [
        _judged(i, q, *ranked_by_rule(list(r), [float(v) for v in r.values()], ties), depth, ties)
        for i, (q, r) in enumerate(zip(qrels, runs, strict=True))
    ]
    return _kernel_values(
        [BeirRetrievalMetric(m, k, convention=convention, ties=ties) for m, k in pairs],
        judged,
        depth,
    )


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

    BEIR metrics sharing a convention and tie rule are computed in one numpy pass; the numbers
    are identical to ``await evaluator.evaluate(...)`` case by case.
    """
    if not evaluators:
        return [() for _ in cases]
    return list(zip(*evaluate_batch_columns(evaluators, cases, responses), strict=True))


def evaluate_batch_columns(
    evaluators: Sequence[Any],
    cases: Sequence[BenchmarkCase],
    responses: Sequence[QueryResponse],
) -> list[Sequence[EvaluationScore]]:
    """``evaluate_batch`` by evaluator: one list of scores (in case order) per evaluator; a
    BEIR metric's is a :class:`ConstructedScores` (records built when read) that a checkpoint
    writes as columns."""
    unsupported = [e for e in evaluators if not supports_batch(e)]
    if unsupported:
        raise TypeError(f"these evaluators have no evaluate_batch: {unsupported!r}")
    columns: dict[int, Sequence[EvaluationScore]] = {}
    beir = [(i, e) for i, e in enumerate(evaluators) if isinstance(e, BeirRetrievalMetric)]
    for rule in dict.fromkeys((e.convention, e.ties) for _, e in beir):
        group = [(i, e) for i, e in beir if (e.convention, e.ties) == rule]
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
