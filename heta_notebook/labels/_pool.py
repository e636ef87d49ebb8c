"""Pools: the unjudged (query, document) pairs that systems ranked in their top k.

``pool(sources, depth=10, labels=...)`` takes reports (every query mode is a system), run
results, plain runs ``{query: {doc: score}}`` or ranked lists ``{query: [doc, ...]}``; each
ranking is cut at ``depth`` under trec_eval's tie rule. The priority order: pairs more systems
ranked first, then the best (smallest) rank any system gave, then the mean rank, then query
and document id (so the order never depends on input order).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
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
    systems = rankings_of(sources, depth)
    queries: list[str] = []
    docs: list[str] = []
    ranks: list[int] = []
    for ranked in systems.values():
        for query, top in ranked.items():
            known = judged.get(query) or ()
            fresh = [(r, d) for r, d in enumerate(top[:depth], start=1) if d not in known]
            queries += [query] * len(fresh)
            ranks += [r for r, _ in fresh]
            docs += [d for _, d in fresh]
    rows = pd.DataFrame({"query_id": queries, "doc_id": docs, "rank": ranks})
    frame = (
        rows.groupby(["query_id", "doc_id"], sort=False)["rank"]
        .agg(systems="size", best_rank="min", mean_rank="mean")
        .reset_index()
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


def rankings_of(sources: Any, depth: int | None = None) -> dict[str, Ranked]:
    """Every system in ``sources`` as ``{system: {query: [doc, ...]}}`` (trec_eval order;
    with ``depth``, only each ranking's first ``depth`` documents are exact)."""
    items: Sequence[Any] = sources if isinstance(sources, (list, tuple)) else [sources]
    out: dict[str, Ranked] = {}
    for n, item in enumerate(items):
        for name, ranked in _systems_of(item, f"run{n}", depth):
            while name in out:
                name = f"{name}'"
            out[name] = ranked
    return out


def _systems_of(item: Any, default: str, depth: int | None) -> list[tuple[str, Ranked]]:
    if hasattr(item, "reports") and isinstance(item.reports, Mapping):
        return [s for r in item.reports.values() for s in _systems_of(r, default, depth)]
    if hasattr(item, "report") and hasattr(item.report, "case_results"):
        return _systems_of(item.report, default, depth)
    if hasattr(item, "case_results"):
        return _report_systems(item, depth)
    if isinstance(item, Mapping):
        return [(default, {str(q): _ranked(docs, depth) for q, docs in item.items()})]
    raise TypeError(
        f"pool() takes reports, run results, runs {{query: {{doc: score}}}} or ranked lists "
        f"{{query: [doc, ...]}}, got {type(item).__name__}"
    )


def _report_systems(report: Any, depth: int | None) -> list[tuple[str, Ranked]]:
    by_mode: dict[str, Ranked] = {}
    for result in report.case_results:
        if result.response is None:
            continue
        ids, scores = document_scores(result.response.results)
        ranked = ids if scores is None else _top(dict(zip(ids, scores, strict=True)), depth)
        by_mode.setdefault(result.query_mode, {})[result.case_id] = ranked
    label = getattr(report, "label", None) or "report"
    return [(f"{label} · {mode}", ranked) for mode, ranked in by_mode.items()]


def _ranked(docs: Any, depth: int | None) -> list[str]:
    if isinstance(docs, Mapping):
        return _top(docs, depth)
    return list(dict.fromkeys(str(d) for d in docs))


def _top(run: Mapping[str, float], depth: int | None) -> list[str]:
    """The first ``depth`` documents in trec_eval's order: a C-level sort by score, and the
    full rule (ties by id descending as bytes) only when a tie reaches into them."""
    items = sorted(run.items(), key=itemgetter(1), reverse=True)
    cut = len(items) if depth is None else depth + 1
    head = [v for _, v in items[:cut]]
    if any(map(operator.eq, head, head[1:])):
        ids = [d for d, _ in items]
        return ranked_by_rule(ids, [float(v) for _, v in items], "trec_eval")[0][: depth or None]
    return [d for d, _ in items[: depth or None]]


__all__ = ["Pool", "pool", "rankings_of"]
