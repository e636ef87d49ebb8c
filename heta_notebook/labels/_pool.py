"""Pools: the unjudged (query, document) pairs that systems ranked in their top k.

``pool(sources, depth=10, labels=...)`` takes reports (every query mode is a system), run
results, plain runs ``{query: {doc: score}}`` or ranked lists ``{query: [doc, ...]}``; each
ranking is cut at ``depth`` under trec_eval's tie rule. A report is read from its column view
(``report.frames().columns``), in memory or stored alike, its results collapsed to documents
by the metrics' rule: the same rankings as ``document_scores`` of each record gives. The priority order: pairs more systems
ranked first, then the best (smallest) rank any system gave, then the mean rank, then query
and document id (so the order never depends on input order).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook.evaluators._matching import keyed_only, stored_keys
from heta_notebook.evaluators._tie_rules import ranked_by_rule
from heta_notebook.reports._columns import ReportColumns, report_columns

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
    """Every query mode of ``report`` as a system, read from the report's column view (in
    memory or stored alike: no record built). A result is the documents the metrics' rule
    names (``matching.stored_keys``, as ``document_scores`` reads a record), a document is
    scored by its best result and ranked in ``_top``'s order; a case with a result lacking a
    score keeps the order its documents first appear in, as ``document_scores`` says."""
    has_frames = hasattr(report, "frames")
    columns = report.frames().columns if has_frames else report_columns(report.case_results)
    found = _documents(columns)
    unscored = found.unscored[found.rows]
    order = np.lexsort((found.first, np.where(unscored, 0.0, -found.best), found.rows))
    rows, best, unscored = found.rows[order], found.best[order], unscored[order]
    docs = np.asarray(found.names, dtype=object)[found.docs[order]]
    starts = np.searchsorted(rows, np.arange(columns.n_rows + 1))
    place = np.arange(len(rows)) - starts[rows]  # 0-based place in the case's ranking
    limit = len(rows) if depth is None else depth
    tie = (rows[1:] == rows[:-1]) & (best[1:] == best[:-1]) & (place[:-1] < limit)
    tied = set(rows[:-1][tie & ~unscored[:-1]].tolist())  # _top's full rule decides these
    kept = (place < limit) | unscored
    heads = docs[kept].tolist()
    head_starts = (starts - np.searchsorted(np.flatnonzero(~kept), starts)).tolist()
    modes_of, modes = columns.codes("cases", "query_mode")
    cases = zip(
        columns.numpy("cases", "case_id").tolist(),
        modes_of.tolist(),
        columns.numpy("cases", "has_response").astype(bool).tolist(),
        strict=True,
    )
    by_mode: dict[str, Ranked] = {}
    for row, (case_id, mode, answered) in enumerate(cases):
        if not answered:
            continue
        if row in tied:
            lo, hi = int(starts[row]), int(starts[row + 1])
            run = dict(zip(docs[lo:hi].tolist(), best[lo:hi].tolist(), strict=True))
            ranked = _top(run, depth)
        else:
            ranked = heads[head_starts[row] : head_starts[row + 1]]
        by_mode.setdefault(modes[mode], {})[case_id] = ranked
    label = getattr(report, "label", None) or "report"
    return [(f"{label} · {mode}", ranked) for mode, ranked in by_mode.items()]


@dataclass(frozen=True)
class _Documents:
    """Each (case row, document) of a results table once: ``rows``, ``docs`` (codes into
    ``names``), ``best`` (its best result's score) and ``first`` (where it is first seen);
    ``unscored[row]``: a result of that case has no score."""

    rows: np.ndarray
    docs: np.ndarray
    best: np.ndarray
    first: np.ndarray
    names: list[str]
    unscored: np.ndarray


def _documents(columns: ReportColumns) -> _Documents:
    """The results table collapsed to documents (see ``_Documents``): a result's documents
    are what ``matching.stored_keys`` reads from its source and metadata, each distinct pair
    read once (metadata that names no key the rule reads counts as none, so hits differing
    only in a rank or a title share a pair); a result naming no document is left out."""
    rows = columns.numpy("results", "row").astype(np.int64)
    ranks = columns.numpy("results", "rank").astype(np.int64)
    scores = columns.numpy("results", "score").astype(np.float64)  # NaN: no score
    src_of, sources = columns.codes("results", "source")
    meta_of, metas = columns.codes("results", "metadata")
    meta_of = keyed_only(meta_of, metas)  # metadata naming no document key: read as none
    unscored = np.zeros(columns.n_rows, dtype=bool)
    unscored[rows[np.isnan(scores)]] = True
    order = np.lexsort((ranks, rows))  # each case's results in rank order
    rows, scores = rows[order], scores[order]
    pair_keys = (src_of[order].astype(np.int64) + 1) * (len(metas) + 1) + meta_of[order] + 1
    pairs, pair_of = np.unique(pair_keys, return_inverse=True)
    pair_of = pair_of.reshape(-1)
    codes: dict[str, int] = {}
    named = []
    for value in pairs.tolist():
        s, m = divmod(value, len(metas) + 1)
        documents, _ = stored_keys(sources[s - 1] if s else None, metas[m - 1] if m else None)
        named.append([codes.setdefault(doc, len(codes)) for doc in documents])
    widths = np.fromiter(map(len, named), np.int64, len(named))
    flat = np.fromiter(chain.from_iterable(named), np.int64, int(widths.sum()))
    counts = widths[pair_of]
    entry = np.repeat(np.arange(len(rows)), counts)  # one per (result, document it names)
    within = np.arange(len(entry)) - np.repeat(np.cumsum(counts) - counts, counts)
    docs = flat[np.repeat((np.cumsum(widths) - widths)[pair_of], counts) + within]
    key = rows[entry] * max(len(codes), 1) + docs
    grouped = np.argsort(key, kind="stable")  # stable: each group's first entry is seen first
    starts = np.flatnonzero(np.r_[True, key[grouped][1:] != key[grouped][:-1]])[: len(key)]
    firsts = grouped[starts]
    best = np.fmax.reduceat(scores[entry][grouped], starts) if len(key) else np.zeros(0, np.float64)
    return _Documents(rows[entry][firsts], docs[firsts], best, firsts, list(codes), unscored)


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
