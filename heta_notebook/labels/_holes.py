"""Scores that admit holes in the labels: which convention counts an unjudged document how.

Three conventions for unjudged documents (each score states its own in ``unjudged``):

- ``"nonrelevant"``: trec_eval's: unjudged = not relevant. The plain ``beir_*`` scores; the
  lower bound.
- ``"condensed"`` (Sakai 2007): unjudged documents are removed from the ranking before
  scoring. Known to **overestimate** systems that retrieve many unjudged documents (their
  judged ones move up); state it when showing it. Name ``beir_{metric}_condensed@{k}``.
- ``"relevant"``: every unjudged document in the top k counts as relevant with grade 1 (and
  joins the ideal ranking): the upper bound. Name ``beir_{metric}_upper@{k}``.

Implemented by transforming the run and the qrels handed to the existing metric kernels
(``evaluate_run``), never by changing a kernel; ties follow the metric's own tie rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from heta_notebook.evaluators._retrieval import (
    NO_QRELS,
    NO_RELEVANT,
    BeirRetrievalMetric,
    beir_default_metrics,
    evaluate_run,
    make_score,
    ranked_by_rule,
)
from heta_notebook.labels._judged import case_qrels, judged_share, ranked_run, warn_unjudged
from heta_notebook.schema._records import BenchmarkCase, EvaluationScore, QueryResponse

Unjudged = Literal["nonrelevant", "condensed", "relevant"]
UNJUDGED: tuple[Unjudged, ...] = ("nonrelevant", "condensed", "relevant")
UPPER_GRADE = 1
_SUFFIX = {"condensed": "_condensed", "relevant": "_upper", "nonrelevant": ""}
CONDENSED_NOTE = (
    "condensed lists drop unjudged documents before scoring, which overestimates systems "
    "that retrieve many unjudged documents (Sakai 2007)"
)


def transformed(
    qrels: Mapping[str, int],
    run: Mapping[str, float],
    unjudged: Unjudged,
    k: int,
    ties: Any = "trec_eval",
) -> tuple[dict[str, int], dict[str, float]]:
    """One query's ``(qrels, run)`` as the kernels must see them under ``unjudged`` at ``k``."""
    if unjudged == "condensed":
        return dict(qrels), {d: s for d, s in run.items() if d in qrels}
    if unjudged == "relevant":
        ids, _ = ranked_by_rule(list(run), [float(v) for v in run.values()], ties)
        extra = {d: UPPER_GRADE for d in ids[:k] if d not in qrels}
        return {**qrels, **extra}, dict(run)
    if unjudged != "nonrelevant":
        raise ValueError(f"unjudged must be one of {UNJUDGED}, got {unjudged!r}")
    return dict(qrels), dict(run)


def score_with_labels(
    run: Mapping[str, Mapping[str, float]],
    labels: Any,
    metrics: Sequence[BeirRetrievalMetric] | None = None,
    *,
    unjudged: Unjudged = "nonrelevant",
    judged_k: int = 10,
) -> dict[str, dict[str, float]]:
    """Score a plain run ``{query: {doc: score}}`` against a label set (or plain qrels)
    under one convention for unjudged documents, with ``judged@{judged_k}`` per query.

    Warns (:class:`UnjudgedWarning`) when any query's top ``judged_k`` holds unjudged documents.
    """
    qrels = labels.qrels() if hasattr(labels, "qrels") else {q: dict(d) for q, d in labels.items()}
    metrics = list(metrics or beir_default_metrics())
    out: dict[str, dict[str, float]] = {}
    for k in sorted({m.k for m in metrics}):
        group = [m for m in metrics if m.k == k]
        pairs = {
            q: transformed(qrels[q], run.get(q, {}), unjudged, k, group[0].ties) for q in qrels
        }
        values = evaluate_run(
            {q: p[0] for q, p in pairs.items()}, {q: p[1] for q, p in pairs.items()}, group
        )
        for q, row in values.items():
            named = {f"{_name(m, unjudged)}": row[m.name] for m in group}
            out.setdefault(q, {}).update(named)
    holes = 0
    for q, row in out.items():
        row[f"judged@{judged_k}"] = share = judged_share(run.get(q, {}), qrels[q], judged_k)
        holes += share < 1.0 and len(run.get(q, {})) > 0
    warn_unjudged(holes, len(out), judged_k)
    return out


def _name(metric: BeirRetrievalMetric, unjudged: Unjudged) -> str:
    return f"beir_{metric.metric}{_SUFFIX[unjudged]}@{metric.k}"


@dataclass(frozen=True)
class HoleAwareMetric:
    """A BEIR metric under another convention for unjudged documents (``"condensed"`` or
    ``"relevant"``, the upper bound); batch-capable like the metric itself."""

    base: BeirRetrievalMetric
    unjudged: Unjudged = "condensed"

    def __post_init__(self) -> None:
        if self.unjudged not in UNJUDGED:
            raise ValueError(f"unjudged must be one of {UNJUDGED}, got {self.unjudged!r}")

    @property
    def name(self) -> str:
        """``beir_{metric}_condensed@{k}`` or ``beir_{metric}_upper@{k}``."""
        return _name(self.base, self.unjudged)

    def manifest(self) -> dict[str, Any]:
        """The base metric's manifest plus the convention for unjudged documents."""
        return {**self.base.manifest(), "unjudged": self.unjudged}

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Score one response."""
        return self.evaluate_batch([case], [response])[0]

    def evaluate_batch(
        self, cases: Sequence[BenchmarkCase], responses: Sequence[QueryResponse]
    ) -> list[EvaluationScore]:
        """Score many responses: transform each case's run and qrels, then the base kernel."""
        qrels: dict[str, dict[str, int]] = {}
        runs: dict[str, dict[str, float]] = {}
        skipped: dict[str, str] = {}
        for i, (case, response) in enumerate(zip(cases, responses, strict=True)):
            key = str(i)
            labels = case_qrels(case)
            if not labels:
                skipped[key] = NO_QRELS
            elif not any(g > 0 for g in labels.values()):
                skipped[key] = NO_RELEVANT
            else:
                run = ranked_run(response, labels)
                qrels[key], runs[key] = transformed(
                    labels, run, self.unjudged, self.base.k, self.base.ties
                )
        values = evaluate_run(qrels, runs, [self.base])
        meta: dict[str, Any] = {"k": self.base.k, "unjudged": self.unjudged, "ties": self.base.ties}
        if self.unjudged == "condensed":
            meta["note"] = CONDENSED_NOTE
        scores = []
        for i in range(len(cases)):
            key = str(i)
            if key in skipped:
                scores.append(EvaluationScore.skipped_score(self.name, skipped[key]))
                continue
            value = values.get(key, {}).get(self.base.name, 0.0)  # an empty run scores 0
            scores.append(make_score(self.name, value, dict(meta), self.base.settings))
        return scores


def hole_metrics(
    metrics: Sequence[BeirRetrievalMetric], unjudged: Sequence[Unjudged] = ("condensed", "relevant")
) -> tuple[HoleAwareMetric, ...]:
    """The condensed and upper-bound twins of ``metrics`` (the plain ones are the lower bound)."""
    return tuple(HoleAwareMetric(m, u) for u in unjudged if u != "nonrelevant" for m in metrics)


__all__ = [
    "CONDENSED_NOTE",
    "UNJUDGED",
    "HoleAwareMetric",
    "Unjudged",
    "hole_metrics",
    "score_with_labels",
    "transformed",
]
