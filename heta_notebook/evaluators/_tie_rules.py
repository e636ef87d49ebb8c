"""Tie rules: a ranking under each rule (:func:`ranked_by_rule`, where its ties are), and when
a tied case's value under another tie rule is its main rule's, bit for bit (:func:`same_values`).

A case whose top k holds equal scores reports each metric under every tie rule
(``metadata["by_tie_rule"]``): ``_retrieval._values_by_rule`` ranks it again under each other
rule and scores it. Most tied cases gain nothing from that second pass: their tied
documents share one grade (Cranfield: 35 of 38), so every order of a tied group gives the
same grade row, and the metric kernels (``_kernels.score_matrix``), which read nothing of a
case but its grade row, its ideal grades and R, give the same values. :func:`same_values`
tells those cases apart from their grades and scores, so that they keep the values the main
rule's kernel pass gave them and only the others are scored again (no kernel pass at all when
none is left).

Only the exact cases, and only after the main rule ``"trec_eval"`` (the default of its
convention; its kernel pass has no tie groups); after another main rule every tied case is
scored again:

- **``"as_returned"``**: its top-``depth`` grades equal the main rule's. The kernel's input
  row is then the same, and rows are independent (``tests/test_kernels_ranking.py``: any
  block size gives the same values).
- **``"expected"``** (the mean over every order of each tied group, ``_ExpectedParts``; it
  sorts as trec_eval does): every tied group up to the end of the one at ``depth`` holds
  one grade, the convention is ``"trec_eval"`` (gain = the grade where positive) and every
  grade is a Python ``int`` below ``2**31`` (or the 0.0 of an unjudged document). Then each
  of its sums is of whole numbers far below ``2**53``, so exact: a group's mean gain
  ``(n·g)/n`` is ``g``,
  its share of relevant documents ``n/n`` or ``0/n`` is 1.0 or 0.0, AP's
  ``before + 1 + t(r-1)/(n-1)`` is the hit count, the chance that a rank is not the first
  relevant one is 0.0 or 1.0; each term is then the plain kernel's term computed by the
  same operations on the same numbers (``1.0·h/i`` = ``(h/i)·1``, ``0·x`` = ``+0.0``), and
  the cumulative sums add the same terms in the same order. Any other case (a float or
  huge grade, the ``"heta"`` convention's ``2**g - 1`` gains, a group of mixed grades) is
  scored again, as before. ``tests/test_tie_rules.py`` compares both ways on random tied
  batches, bit for bit.
"""

from __future__ import annotations

import operator
from itertools import chain, compress, repeat
from typing import Any

from heta_notebook.evaluators._kernels import Ties


def ranked_by_rule(
    ids: list[str], scores: list[float] | None, ties: Ties
) -> tuple[list[str], list[float] | None]:
    """Documents (and scores) in the order ``ties`` ranks them: trec_eval's order (score
    descending, ties by id descending as bytes) unless ``"as_returned"`` or unscored."""
    if scores is None or ties == "as_returned" or _decreasing(scores):
        return ids, scores
    # sorted by (score, id as bytes), compared in C; the id itself decides only between two
    # equal keys (the same id twice), which a stable sort keeps in order either way
    ranked = sorted(zip(scores, map(str.encode, ids), ids, strict=True), reverse=True)
    return list(map(_THIRD, ranked)), list(map(_FIRST, ranked))


_FIRST, _THIRD = operator.itemgetter(0), operator.itemgetter(2)


def _decreasing(scores: list[float]) -> bool:
    return all(map(operator.gt, scores, scores[1:]))


def _first_tie(scores: list[float] | None) -> int | None:
    """0-based rank i of the first result whose score equals the next one's, or None."""
    if scores is None:
        return None
    try:  # one C-level pass: each score against the next one's
        return list(map(operator.eq, scores, scores[1:])).index(True)
    except ValueError:  # no two neighbours equal
        return None


def _tie_groups(scores: list[float], depth: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each rank's tied group, up to the end of the group at ``depth``."""
    groups: list[tuple[int, int]] = []
    start = 0
    n = len(scores)  # a group ends where a score differs from the one before it (NaN: alone)
    for end in chain(compress(range(1, n), map(operator.ne, scores, scores[1:])), (n,)):
        groups += [(start, end)] * (end - start)
        if end >= depth:
            break
        start = end
    return groups


_EXACT_GRADE = 2**31  # grades below it: every sum of a row's gains is a whole number < 2**53


def same_values(item: Any, rule: str, depth: int, convention: str) -> bool:
    """Whether a case tied under ``"trec_eval"`` (``item``: a ``_retrieval._Judged`` that
    kept its ``returned`` and ``sorted`` documents and scores) scores under ``rule`` exactly
    the values it scored under ``"trec_eval"`` (module doc), read from what it kept: no
    ranking or judged case built."""
    if rule == "as_returned":  # the same grades in the system's order
        top = item.returned[0][:depth]
        return top == item.ranked or list(map(item.qrels.get, top, repeat(0.0))) == item.grades
    if rule != "expected" or convention != "trec_eval":
        return False
    ids, scores = item.sorted  # expected's order too: each group's mean over its orders
    end = min(depth, len(scores))  # to the end of the group at depth, as _tie_groups reads
    while end < len(scores) and scores[end] == scores[end - 1]:
        end += 1
    grades = item.grades + list(map(item.qrels.get, ids[len(item.grades) : end], repeat(0.0)))
    if set(map(type, item.qrels.values())) != {int} or max(grades, default=0) >= _EXACT_GRADE:
        return False  # (grades are the qrels' or 0.0, unjudged)
    tied = map(operator.eq, scores[: end - 1], scores[1:end])  # NaN: alone, as in _tie_groups
    mixed = map(operator.ne, grades[:-1], grades[1:])
    return not any(map(operator.and_, tied, mixed))  # no tied neighbours of two grades


__all__ = ["ranked_by_rule", "same_values"]
