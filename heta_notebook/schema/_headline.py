"""The headline rule: which score a report shows first, wherever it is shown.

nDCG@10 when a report has it (under any of its spellings: ``ndcg@10``, ``beir_ndcg@10``,
``ndcg_cut_10``), else a preferred @10 score (evidence recall, MAP, MRR), else any @10
score, else the first ``metric@k`` at its largest k, else the first score. The report's
repr, its card, charts and explorers, comparisons and a run's progress line all follow it;
it lives beside the records so that each of them, the runner included, can import it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

_AT_K = re.compile(r"^(?P<metric>.+?)(?:@|_cut_|_at_)(?P<k>\d+)$")
PREFERRED_AT_10 = ("evidence_recall", "map", "mrr")


def parse_at_k(name: str) -> tuple[str, int] | None:
    """``"ndcg@10"`` → ``("ndcg", 10)`` (also ``ndcg_cut_10``, ``recall_at_5``); else None."""
    match = _AT_K.match(str(name))
    return (match["metric"], int(match["k"])) if match else None


def headline_score(names: Sequence[str]) -> str | None:
    """The score to show first among ``names`` (see the module docstring); None if empty."""
    names = list(names)
    if "ndcg@10" in names:
        return "ndcg@10"
    at_k = [(n, p) for n in names if (p := parse_at_k(n))]
    ten = [(n, p[0]) for n, p in at_k if p[1] == 10]
    for name, metric in ten:
        if metric.endswith("ndcg"):
            return name
    for wanted in PREFERRED_AT_10:
        for name, metric in ten:
            if metric == wanted or metric.endswith(f"_{wanted}"):
                return name
    if ten:
        return ten[0][0]
    if at_k:
        metric = at_k[0][1][0]
        return max((p[1], n) for n, p in at_k if p[0] == metric)[1]
    return names[0] if names else None


def headline_first(summary: Mapping[str, float]) -> list[tuple[str, float]]:
    """A score summary's ``mode.score`` entries, the headline score's first (in every mode),
    the rest in their order: what a report's repr shows."""

    def score(key: str) -> str:
        return key.partition(".")[2] or key

    headline = headline_score(list(dict.fromkeys(map(score, summary))))
    return sorted(summary.items(), key=lambda kv: score(kv[0]) != headline)


__all__ = ["PREFERRED_AT_10", "headline_first", "headline_score", "parse_at_k"]
