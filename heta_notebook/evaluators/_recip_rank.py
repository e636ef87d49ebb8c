"""trec_eval's unbounded ``recip_rank``: 1 / rank of the first relevant document, over the
whole ranking (``beir_mrr@k`` stops at k).

Documents are ranked by the tie rule ``ties`` (default ``"trec_eval"``: score descending,
ties by document id descending as bytes, as trec_eval and ``beir_mrr@k`` do; ``"as_returned"``:
the system's order, which is how BEIR's own ``mrr`` treats ties, file order). A case with no
relevant judged document is skipped (``missing="drop"``); a ranking with no relevant
document scores 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from heta_notebook.evaluators._protocol import EvaluatorSettings, SyncScorer
from heta_notebook.schema._records import BenchmarkCase, EvaluationScore, QueryResponse

TIES = ("trec_eval", "as_returned")


@dataclass(frozen=True)
class RecipRank(SyncScorer):
    """1 / rank of the first relevant document over the whole ranking (trec_eval's
    ``recip_rank``); ``ties`` as the module docstring says."""

    ties: str = "trec_eval"
    settings: EvaluatorSettings | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.ties not in TIES:
            raise ValueError(f"ties must be one of {', '.join(TIES)} (got {self.ties!r})")

    @property
    def name(self) -> str:
        """``recip_rank`` (``recip_rank_as_returned`` with the system's order)."""
        return "recip_rank" if self.ties == "trec_eval" else f"recip_rank_{self.ties}"

    def score(self, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Score one response."""
        from heta_notebook.evaluators._matching import document_scores, qrels_of
        from heta_notebook.evaluators._retrieval import make_score
        from heta_notebook.evaluators._tie_rules import ranked_by_rule

        qrels = qrels_of(case.expected.evidence)
        if not any(grade > 0 for grade in qrels.values()):
            return EvaluationScore.skipped_score(self.name, "case has no relevant judged document")
        ids, scores = document_scores(response.results, qrels)
        ranked, _ = ranked_by_rule(ids, scores, self.ties)  # type: ignore[arg-type]
        rank = next((i for i, doc in enumerate(ranked, start=1) if qrels.get(doc, 0) > 0), None)
        value = 0.0 if rank is None else 1.0 / rank
        metadata = {"first_relevant_rank": rank, "ranked": len(ranked), "ties": self.ties}
        return make_score(self.name, value, metadata, self.settings)


__all__ = ["RecipRank"]
