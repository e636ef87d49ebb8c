"""Vectorised ranking-metric kernels: every (metric, k) for every query in one numpy pass.

Input is two padded matrices, one row per query: ``grades`` (the qrels grade of the
document at each rank; 0 for unjudged or missing ranks, negative labels kept) and
``ideal`` (the query's relevant grades sorted descending), plus ``n_relevant`` (R, the
number of judged documents with grade > 0).

Two conventions:

- ``"trec_eval"`` (default; what pytrec_eval and BEIR's published numbers use): nDCG gain is
  the grade (negative grades count 0), MAP@k divides by R.
- ``"heta"`` (heta-framework 0.1.2): nDCG gain is ``2**grade - 1``, MAP@k divides by min(R, k).

Precision@k divides by k, recall@k by R, MRR@k is 1/rank of the first relevant document
within k (BEIR's MRR@k) in both.

Tie rules (``Ties``) say how documents with equal scores are ordered before scoring:

- ``"trec_eval"``: score descending, ties by document id descending compared as bytes, as
  trec_eval / pytrec_eval rank a run;
- ``"as_returned"``: the order the system returned (what an LLM sees as its context);
- ``"expected"``: the expected value over every ordering of each group of tied documents
  (McSherry & Najork, 2008), exact and in closed form: pass ``groups`` to ``score_matrix``.

Below the kernel: builders of those matrices from plain ``{doc: score}`` runs and qrels
(``ranked_grades``, ``ideal_grades``), trec_eval's ranking order, and ``paused_gc``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from typing import Any, Literal

import numpy as np

from heta_notebook._util.gc import paused_gc  # noqa: F401 - re-exported for retrieval

Convention = Literal["trec_eval", "heta"]
MetricName = Literal["ndcg", "map", "recall", "precision", "mrr"]
METRICS: tuple[MetricName, ...] = ("ndcg", "map", "recall", "precision", "mrr")
CONVENTIONS: tuple[Convention, ...] = ("trec_eval", "heta")
Ties = Literal["trec_eval", "as_returned", "expected"]
TIES: tuple[Ties, ...] = ("trec_eval", "as_returned", "expected")


def padded(rows: Sequence[Sequence[float]], depth: int) -> np.ndarray:
    """Rows of different lengths as a zero-padded float matrix of ``depth`` columns (the
    rows read in one pass, placed with one mask: a batch's hundreds of rows)."""
    lengths = np.fromiter(map(len, rows), np.int64, len(rows))
    if len(rows) and int(lengths.max()) > depth:
        rows = [row[:depth] for row in rows]
        lengths = np.minimum(lengths, depth)
    matrix = np.zeros((len(rows), depth), dtype=float)
    flat = np.fromiter(chain.from_iterable(rows), float, int(lengths.sum()))
    matrix[np.arange(depth) < lengths[:, None]] = flat  # row-major: each row's first cells
    return matrix


def score_matrix(
    grades: np.ndarray,
    ideal: np.ndarray,
    n_relevant: np.ndarray,
    metrics: Iterable[tuple[MetricName, int]],
    convention: Convention = "trec_eval",
    groups: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[tuple[MetricName, int], np.ndarray]:
    """Every requested ``(metric, k)`` for every row, as arrays of one value per query.

    ``groups``: for the tie-aware rule, each rank's tied group as ``(start, end)`` matrices
    (0-based, end exclusive) over ``grades``, which then runs to the end of the group that
    holds the deepest cutoff; the values are expectations over all orderings of each group.
    """
    metrics = list(metrics)
    depth = max(k for _, k in metrics)
    n_relevant = np.asarray(n_relevant, dtype=float)
    if groups is not None:
        parts: _Parts = _ExpectedParts(grades, ideal, n_relevant, convention, groups, depth)
    else:  # the ideal ranking as wide as its longest row: zeros past it add exactly 0.0
        grades, ideal = _to_depth(grades, depth), ideal[:, :depth]
        parts = _Parts(grades, ideal, n_relevant, convention)
    scores = {(metric, k): parts.metric(metric, k) for metric, k in metrics}
    for (metric, k), values in scores.items():
        if not np.isfinite(values).all():  # a score that could not be saved and read back
            raise ValueError(f"{metric}@{k} is not finite for some queries: check the qrels grades")
    return scores


def _to_depth(matrix: np.ndarray, depth: int) -> np.ndarray:
    if matrix.shape[1] >= depth:
        return matrix[:, :depth]
    return np.pad(matrix, ((0, 0), (0, depth - matrix.shape[1])))


class _Parts:
    """Cumulative sums shared by all metrics, computed lazily once per batch."""

    def __init__(
        self, grades: np.ndarray, ideal: np.ndarray, n_relevant: np.ndarray, convention: Convention
    ) -> None:
        if convention not in CONVENTIONS:
            raise ValueError(f"unknown convention {convention!r}; use one of {CONVENTIONS}")
        self.grades, self.ideal, self.n_relevant = grades, ideal, n_relevant
        self.convention = convention
        self.relevant = grades > 0
        self.hits = np.cumsum(self.relevant, axis=1, dtype=np.int32)  # half the bytes of int64
        self.ranks = np.arange(1, grades.shape[1] + 1, dtype=float)
        self._cache: dict[str, np.ndarray] = {}

    def metric(self, metric: MetricName, k: int) -> np.ndarray:
        if metric == "precision":
            return self.hits[:, k - 1] / k
        if metric == "recall":
            return _safe_divide(self.hits[:, k - 1], self.n_relevant)
        if metric == "map":
            return _safe_divide(self._cumulative("ap")[:, k - 1], self._map_denominator(k))
        if metric == "ndcg":
            idcg = self._cumulative("idcg")
            ideal = idcg[:, min(k, idcg.shape[1]) - 1]  # past its width the sum stays
            return _safe_divide(self._cumulative("dcg")[:, k - 1], ideal)
        if metric == "mrr":
            first = self._first_relevant_rank()
            return np.where(first <= k, 1.0 / first, 0.0)
        raise ValueError(f"unknown metric {metric!r}; use one of {METRICS}")

    def _map_denominator(self, k: int) -> np.ndarray:
        if self.convention == "heta":
            return np.minimum(self.n_relevant, k)
        return self.n_relevant

    def _cumulative(self, what: str) -> np.ndarray:
        if what not in self._cache:
            terms = self._terms(what)  # a fresh array: summed in place
            self._cache[what] = np.cumsum(terms, axis=1, out=terms)
        return self._cache[what]

    def _terms(self, what: str) -> np.ndarray:
        # Whole-matrix passes, no ``where=`` (numpy's masked loops run once per stretch of
        # True: 2-3x slower on sparse relevance). Each term is bit for bit the masked one's:
        # x * 1.0 = x and (finite x >= 0) * 0.0 = +0.0; ``np.where`` gives +0.0 for a grade
        # that is not positive (NaN, -0.0 and negative grades included).
        if what == "ap":
            terms = np.divide(self.hits, self.ranks)
            return np.multiply(terms, self.relevant, out=terms)
        grades = self.grades if what == "dcg" else self.ideal
        discount = np.log2(self.ranks[: grades.shape[1]] + 1.0)
        if self.convention != "heta":  # gain = the grade where positive, else 0
            relevant = self.relevant if what == "dcg" else grades > 0
            gains = np.where(relevant, grades, 0.0)
            return np.divide(gains, discount, out=gains)
        return self._gain(grades) / discount

    def _gain(self, grades: np.ndarray) -> np.ndarray:
        positive = np.maximum(grades, 0.0)
        if self.convention != "heta":
            return positive
        # 2**grade - 1 overflows to inf (and nDCG to inf/inf = NaN) from grade 1024 on. nDCG is
        # a ratio, so rows with huge grades are scaled by 2**-top: 2**(g - top) - 2**-top.
        # Ordinary rows keep shift 0, i.e. exactly 2**g - 1 as before.
        shift = self._gain_shift()
        return np.exp2(positive - shift) - np.exp2(-shift)

    def _gain_shift(self) -> np.ndarray:
        if "shift" not in self._cache:
            top = np.maximum(
                self.ideal.max(axis=1, initial=0.0), self.grades.max(axis=1, initial=0.0)
            )
            self._cache["shift"] = np.where(top > _GAIN_SAFE_GRADE, top, 0.0)[:, None]
        return self._cache["shift"]

    def _first_relevant_rank(self) -> np.ndarray:
        if "first" not in self._cache:
            any_relevant = self.relevant.any(axis=1)
            first = self.relevant.argmax(axis=1) + 1.0
            self._cache["first"] = np.where(any_relevant, first, np.inf)
        return self._cache["first"]


class _ExpectedParts(_Parts):
    """The same metrics as expectations over every ordering of each tied group.

    Linear parts use the group's mean: gain for DCG, share of relevant documents for hits.
    AP at rank i of a group with n documents, r relevant, h relevant before it and offset t
    adds ``(r/n) * (h + 1 + (t-1)(r-1)/(n-1)) / i``; reciprocal rank sums P(first relevant
    at i) / i, where P comes from the chance ``1 - r/(n-t+1)`` that rank i is not relevant
    given the group's earlier ranks were not. One-document groups give the plain metrics.
    """

    def __init__(
        self,
        grades: np.ndarray,
        ideal: np.ndarray,
        n_relevant: np.ndarray,
        convention: Convention,
        groups: tuple[np.ndarray, np.ndarray],
        depth: int,
    ) -> None:
        start, end = (np.asarray(g, dtype=np.int64) for g in groups)
        grades = np.asarray(grades, dtype=float)
        super().__init__(_to_depth(grades, depth), _to_depth(ideal, depth), n_relevant, convention)
        rows = np.arange(len(grades))[:, None]
        size = (end - start).astype(float)
        relevant, gain = _prefix(grades > 0), _prefix(self._gain(grades))
        self._group = {
            name: _to_depth(np.asarray(values, dtype=float), depth)
            for name, values in {
                "start": start,
                "size": size,
                "r": relevant[rows, end] - relevant[rows, start],
                "before": relevant[rows, start],
                "mean_gain": (gain[rows, end] - gain[rows, start]) / size,
            }.items()
        }
        self.mean_relevant = self._group["r"] / self._group["size"]
        self.hits = np.cumsum(self.mean_relevant, axis=1)

    def _terms(self, what: str) -> np.ndarray:
        g = self._group
        if what == "dcg":
            return g["mean_gain"] / np.log2(self.ranks + 1.0)
        if what == "ap":
            offset = self.ranks - 1.0 - g["start"]  # t - 1
            pairs = np.divide(
                offset * (g["r"] - 1.0),
                g["size"] - 1.0,
                out=np.zeros_like(offset),
                where=g["size"] > 1,
            )
            return self.mean_relevant * (g["before"] + 1.0 + pairs) / self.ranks
        return super()._terms(what)

    def _first_relevant_rank(self) -> np.ndarray:
        raise NotImplementedError  # reciprocal rank is an expectation here: see metric()

    def metric(self, metric: MetricName, k: int) -> np.ndarray:
        if metric != "mrr":
            return super().metric(metric, k)
        if "rr" not in self._cache:
            g = self._group
            left = g["size"] - (self.ranks - 1.0 - g["start"])  # n - t + 1
            miss = 1.0 - np.divide(g["r"], left, out=np.ones_like(left), where=left > 0)
            miss = np.clip(miss, 0.0, 1.0)
            survive = np.cumprod(np.hstack([np.ones((len(miss), 1)), miss[:, :-1]]), axis=1)
            self._cache["rr"] = np.cumsum(survive * (1.0 - miss) / self.ranks, axis=1)
        return self._cache["rr"][:, k - 1]


def _prefix(matrix: np.ndarray) -> np.ndarray:
    """Row-wise cumulative sums with a leading zero column (sum of [a, b) = p[b] - p[a])."""
    return np.hstack([np.zeros((len(matrix), 1)), np.cumsum(matrix, axis=1, dtype=float)])


_GAIN_SAFE_GRADE = 64.0  # 2**64 * depth stays far from float overflow


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    numerator = np.asarray(numerator, dtype=float)
    out = np.zeros_like(numerator)
    np.divide(numerator, denominator, out=out, where=np.asarray(denominator) > 0)
    return out


# --------------------------------------------------------------------------- building the matrices


def judged_values(
    judged: Sequence[Any],
    pairs: list[tuple[MetricName, int]],
    convention: Convention,
    depth: int,
    grades: np.ndarray | None = None,
) -> dict[tuple[MetricName, int], np.ndarray]:
    """``score_matrix`` of judged cases, each with its ``qrels``, its ``grades`` in rank order
    and its tie ``groups`` (``(start, end)`` per rank, for the tie-aware rule) or None;
    ``grades``: their :func:`grade_matrix`, when the caller has it."""
    if not judged:
        return {pair: np.zeros(0) for pair in pairs}
    ideal, n_relevant = ideal_grades([item.qrels for item in judged], depth)
    grades = grade_matrix(judged, depth) if grades is None else grades
    tied = any(item.groups for item in judged)
    groups = _group_matrices(judged, grades.shape[1]) if tied else None
    return score_matrix(grades, ideal, n_relevant, pairs, convention, groups)


def grade_matrix(judged: Sequence[Any], depth: int) -> np.ndarray:
    """Judged cases' grades in rank order, zero-padded to ``depth`` columns, or to the end of
    the longest tie-aware ranking (it runs to the end of the tied group at ``depth``)."""
    tied = any(item.groups for item in judged)
    width = max(depth, *(len(item.groups or ()) for item in judged)) if tied else depth
    return padded([item.grades for item in judged], width)


def positive_ranks(grades: np.ndarray) -> list[list[int]]:
    """Per row of a grade matrix, the 0-based ranks whose grade is > 0: one pass over a
    batch instead of a comparison per ranked document."""
    rows, columns = np.nonzero(grades > 0)
    ends = np.cumsum(np.bincount(rows, minlength=len(grades))).tolist()
    ranks = columns.tolist()
    return [ranks[start:end] for start, end in zip([0, *ends][:-1], ends, strict=True)]


def _group_matrices(judged: Sequence[Any], width: int) -> tuple[np.ndarray, np.ndarray]:
    """Each rank's tied group as ``(start, end)`` matrices; untied ranks are groups of one."""
    start = np.tile(np.arange(width), (len(judged), 1))
    end = start + 1
    for row, item in enumerate(judged):
        if item.groups:
            start[row, : len(item.groups)] = [a for a, _ in item.groups]
            end[row, : len(item.groups)] = [b for _, b in item.groups]
    return start, end


def ranked_grades(
    runs: Sequence[Mapping[str, float]], qrels: Sequence[Mapping[str, int]], depth: int
) -> np.ndarray:
    """Grades in trec_eval rank order: one stable argsort of a padded score matrix; rows with
    tied scores are re-ranked in Python to break ties by document id."""
    lengths = np.fromiter(map(len, runs), dtype=np.int64, count=len(runs))
    total = int(lengths.sum())
    scores = np.fromiter(chain.from_iterable(map(_values, runs)), float, total)
    # the default is a float: numpy converts an int (even 0) by a slower path
    looked_up = chain.from_iterable(
        map(q.get, r, repeat(0.0)) for q, r in zip(qrels, runs, strict=True)
    )
    flat_grades = np.fromiter(looked_up, float, total)
    # Everything in place: each temporary costs a pass over memory, and a large one page
    # faults too (three such arrays in all: the scores, the grades and the order; evaluate_run
    # calls this on blocks of RUN_BLOCK queries so that they stay in the CPU cache).
    neg_scores = _pad_flat(np.negative(scores, out=scores), lengths, np.inf)
    # Rows with tied scores are re-ranked below, so with distinct finite scores any sort
    # gives the one order (quicksort: ~4x faster); a NaN or infinity keeps the stable sort.
    kind: Any = None if np.isfinite(scores).all() else "stable"
    order = np.argsort(neg_scores, axis=1, kind=kind)
    neg_scores.sort(axis=1)  # the scores in rank order (the same values as by ``order``)
    tied = ((neg_scores[:, 1:] == neg_scores[:, :-1]) & np.isfinite(neg_scores[:, 1:])).any(axis=1)
    width = neg_scores.shape[1]
    order += (np.arange(len(order), dtype=np.int64) * width)[:, None]  # flat positions
    padded_grades = _pad_flat(flat_grades, lengths, 0.0).reshape(-1)
    grades = np.take(padded_grades, order, out=neg_scores, mode="clip")[:, :depth]
    for i in np.flatnonzero(tied).tolist():
        ranked = trec_ranking(runs[i])[:depth]
        grades[i] = 0.0
        grades[i, : len(ranked)] = [qrels[i].get(d, 0) for d in ranked]
    return grades


def ideal_grades(qrels: Sequence[Mapping[str, int]], depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Each query's positive grades sorted descending (the ideal ranking), and R (their count)."""
    lengths = np.fromiter(map(len, qrels), dtype=np.int64, count=len(qrels))
    values = np.fromiter(chain.from_iterable(map(_values, qrels)), float, int(lengths.sum()))
    positive = _pad_flat(np.maximum(values, 0.0), lengths, 0.0)
    ideal = -np.sort(-positive, axis=1)[:, :depth]
    return ideal, (positive > 0).sum(axis=1).astype(float)


def _pad_flat(flat: np.ndarray, lengths: np.ndarray, fill: float) -> np.ndarray:
    """Concatenated rows (``lengths`` long each) as a matrix padded with ``fill``."""
    if len(lengths) and int(lengths.min()) == int(lengths.max()) > 0:  # one length: a view
        return flat.reshape(len(lengths), int(lengths[0]))
    matrix = np.full((len(lengths), max(int(lengths.max(initial=0)), 1)), fill)
    rows = np.repeat(np.arange(len(lengths)), lengths)
    starts = np.cumsum(lengths) - lengths
    matrix[rows, np.arange(len(flat)) - starts[rows]] = flat
    return matrix


def _values(mapping: Mapping[str, Any]) -> Any:
    return mapping.values()


def trec_ranking(scores: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval's order: score descending, ties by id descending as bytes."""
    return [d for d, _ in sorted(scores.items(), key=_trec_key, reverse=True)]


def _trec_key(item: tuple[str, float]) -> tuple[float, bytes]:
    return item[1], item[0].encode()
