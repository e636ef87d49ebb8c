"""Pools: the unjudged (query, document) pairs that systems ranked in their top k.

``pool(sources, depth=10, labels=...)`` takes reports (every query mode is a system), run
results, plain runs ``{query: {doc: score}}`` or ranked lists ``{query: [doc, ...]}``; each
ranking is cut at ``depth`` under trec_eval's tie rule. The priority order: pairs more systems
ranked first, then the best (smallest) rank any system gave, then the mean rank, then query
and document id (so the order never depends on input order).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from heta_notebook.evaluators._matching import document_scores
from heta_notebook.evaluators._retrieval import ranked_by_rule

Ranked = dict[str, list[str]]


@dataclass(frozen=True)
class Pool:
    """Unjudged pairs in priority order; ``frame`` has ``query_id, doc_id, systems,
    best_rank, mean_rank`` (ranks 1-based)."""

    frame: pd.DataFrame
    depth: int
    systems: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.frame)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return zip(self.frame["query_id"].tolist(), self.frame["doc_id"].tolist(), strict=True)

    def pairs(self, limit: int | None = None) -> list[tuple[str, str]]:
        """The first ``limit`` pairs (all by default) as ``(query_id, doc_id)``."""
        return list(self)[:limit]

    def __repr__(self) -> str:
        queries = self.frame["query_id"].nunique() if len(self.frame) else 0
        return (
            f"<Pool depth={self.depth}: {len(self)} unjudged pairs over {queries} queries "
            f"from {len(self.systems)} systems>"
        )


def pool(sources: Any, *, depth: int = 10, labels: Any = None) -> Pool:
    """The unjudged pairs in the top ``depth`` of every system in ``sources`` (see module);
    ``labels`` (a label set or ``{query: {doc: grade}}``) says what is judged already."""
    if not isinstance(depth, int) or isinstance(depth, bool) or depth <= 0:
        raise ValueError(f"depth must be a positive integer, got {depth!r}")
    judged = _judged(labels)
    systems = rankings(sources)
    seen: dict[tuple[str, str], list[int]] = {}
    for ranked in systems.values():
        for query, docs in ranked.items():
            known = judged.get(query, ())
            for rank, doc in enumerate(docs[:depth], start=1):
                if doc in known:
                    continue
                entry = seen.get((query, doc))
                if entry is None:
                    seen[(query, doc)] = [1, rank, rank]
                else:
                    entry[0] += 1
                    entry[1] = min(entry[1], rank)
                    entry[2] += rank
    frame = pd.DataFrame(
        [(q, d, n, best, total / n) for (q, d), (n, best, total) in seen.items()],
        columns=["query_id", "doc_id", "systems", "best_rank", "mean_rank"],
    )
    frame = frame.sort_values(
        ["systems", "best_rank", "mean_rank", "query_id", "doc_id"],
        ascending=[False, True, True, True, True],
        kind="stable",
        ignore_index=True,
    )
    return Pool(frame, depth, tuple(systems))


def _judged(labels: Any) -> Mapping[str, Any]:
    if labels is None:
        return {}
    if hasattr(labels, "qrels"):
        return labels.qrels()
    return labels


def rankings(sources: Any) -> dict[str, Ranked]:
    """Every system in ``sources`` as ``{system: {query: [doc, ...]}}`` (trec_eval order)."""
    items: Sequence[Any] = sources if isinstance(sources, (list, tuple)) else [sources]
    out: dict[str, Ranked] = {}
    for n, item in enumerate(items):
        for name, ranked in _systems_of(item, f"run{n}"):
            while name in out:
                name = f"{name}'"
            out[name] = ranked
    return out


def _systems_of(item: Any, default: str) -> list[tuple[str, Ranked]]:
    if hasattr(item, "reports") and isinstance(item.reports, Mapping):
        return [s for r in item.reports.values() for s in _systems_of(r, default)]
    if hasattr(item, "report") and hasattr(item.report, "case_results"):
        return _systems_of(item.report, default)
    if hasattr(item, "case_results"):
        return _report_systems(item)
    if isinstance(item, Mapping):
        return [(default, {str(q): _ranked(docs) for q, docs in item.items()})]
    raise TypeError(
        f"pool() takes reports, run results, runs {{query: {{doc: score}}}} or ranked lists "
        f"{{query: [doc, ...]}}, got {type(item).__name__}"
    )


def _report_systems(report: Any) -> list[tuple[str, Ranked]]:
    by_mode: dict[str, Ranked] = {}
    for result in report.case_results:
        if result.response is None:
            continue
        ids, scores = document_scores(result.response.results)
        ranked = ranked_by_rule(ids, scores, "trec_eval")[0]
        by_mode.setdefault(result.query_mode, {})[result.case_id] = ranked
    label = getattr(report, "label", None) or "report"
    return [(f"{label} · {mode}", ranked) for mode, ranked in by_mode.items()]


def _ranked(docs: Any) -> list[str]:
    if isinstance(docs, Mapping):
        ids = list(docs)
        return ranked_by_rule(ids, [float(v) for v in docs.values()], "trec_eval")[0]
    return [str(d) for d in docs]


__all__ = ["Pool", "pool", "rankings"]
