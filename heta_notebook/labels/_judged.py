"""Judged@k: the share of a ranking's top k that has a relevance label (ir_measures' Judged@k).

The denominator is k, as P@k's (a run with fewer than k results cannot be fully judged at k);
documents are ranked by trec_eval's rule (score descending, ties by id descending as bytes),
as the ``beir_*`` metrics rank them. A judged document is any labelled one, grade 0 included:
BEIR cases keep their judged non-relevant documents in ``expected.metadata["judged_nonrelevant"]``.

Scoring against incomplete labels always warns (:class:`UnjudgedWarning`), once per place.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from heta_notebook._util.warn import user_stacklevel
from heta_notebook.evaluators._matching import document_scores, qrels_of
from heta_notebook.evaluators._protocol import EvaluatorSettings
from heta_notebook.evaluators._retrieval import make_score
from heta_notebook.evaluators._tie_rules import ranked_by_rule
from heta_notebook.schema._records import BenchmarkCase, EvaluationScore, QueryResponse

NO_LABELS = "case has no relevance labels"


class UnjudgedWarning(UserWarning):
    """Scores were computed against labels that miss some retrieved documents."""


def case_qrels(case: BenchmarkCase) -> dict[str, int]:
    """Every label of a case: its evidence's grades plus its judged non-relevant documents."""
    qrels = qrels_of(case.expected.evidence)
    extra = case.expected.metadata.get("judged_nonrelevant")
    if isinstance(extra, Mapping):
        for doc, grade in extra.items():
            qrels.setdefault(str(doc), int(grade))
    return qrels


def ranked_run(response: QueryResponse, qrels: Mapping[str, int]) -> dict[str, float]:
    """A response as a ``{doc: score}`` run (a document's best result's score); results
    without scores get descending stand-ins so their order is the ranking."""
    ids, scores = document_scores(response.results, judged=qrels)
    if scores is None:
        scores = [-float(i) for i in range(len(ids))]
    return dict(zip(ids, scores, strict=True))


def top_k(run: Mapping[str, float], k: int) -> list[str]:
    """The run's first ``k`` documents under trec_eval's tie rule."""
    ids, _ = ranked_by_rule(list(run), [float(v) for v in run.values()], "trec_eval")
    return ids[:k]


def judged_share(run: Mapping[str, float], qrels: Mapping[str, Any], k: int) -> float:
    """Judged@k of one ranking (denominator k)."""
    return sum(1 for d in top_k(run, k) if d in qrels) / k


def warn_unjudged(count: int, total: int, k: int, where: str = "") -> None:
    """The one warning for scores computed against incomplete labels."""
    if count:
        warnings.warn(
            f"{where}scored against incomplete labels: {count} of {total} rankings have "
            f"unjudged documents in their top {k} (counted as non-relevant unless a score says "
            f"otherwise; see judged@{k})",
            UnjudgedWarning,
            stacklevel=user_stacklevel(),
        )


@dataclass(frozen=True)
class JudgedAtK:
    """``judged@{k}``: the share of the top ``k`` documents that has a label (see module)."""

    k: int = 10
    settings: EvaluatorSettings | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.k, int) or isinstance(self.k, bool) or self.k <= 0:
            raise ValueError(f"k must be a positive integer, got {self.k!r}")

    @property
    def name(self) -> str:
        """``judged@{k}``."""
        return f"judged@{self.k}"

    def manifest(self) -> dict[str, Any]:
        """What a report records about this score."""
        return {"metric": "judged", "k": self.k, "ties": "trec_eval", "denominator": "k"}

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Score one response."""
        return self.evaluate_batch([case], [response])[0]

    def evaluate_batch(
        self, cases: Sequence[BenchmarkCase], responses: Sequence[QueryResponse]
    ) -> list[EvaluationScore]:
        """Score many responses; warns once when some top k holds unjudged documents."""
        scores, holes = [], 0
        for case, response in zip(cases, responses, strict=True):
            qrels = case_qrels(case)
            if not qrels:
                scores.append(EvaluationScore.skipped_score(self.name, NO_LABELS))
                continue
            top = top_k(ranked_run(response, qrels), self.k)
            judged = sum(1 for d in top if d in qrels)
            holes += judged < len(top)
            meta = {"k": self.k, "judged": judged, "retrieved": len(top)}
            scores.append(make_score(self.name, judged / self.k, meta, self.settings))
        warn_unjudged(holes, len(cases), self.k)
        return scores


__all__ = [
    "JudgedAtK",
    "UnjudgedWarning",
    "case_qrels",
    "judged_share",
    "ranked_run",
    "top_k",
    "warn_unjudged",
]
