"""What the miss classes read, for a whole report at once: ranks by reference id, deep ranks,
citations and answer scores.

``analysis._misses`` defines the classes; this module gathers, for every case result, the
facts its rules read, as arrays: each expected evidence item's first rank by the reference
rule of ``evaluators._matching`` (its id, a document or source key it names, or the document
a ``doc#n`` chunk id names), how many results beyond k match it, and whether a result the
answer cites matches it, counted for all cases in a few numpy sorts; and, for cases with an
answer step, whether their answer score failed (``answer_failed``). They are read from the
report's ``ReportColumns`` (distinct source and metadata JSON parsed once, no record built),
in memory or stored alike.

Only cases the columns decide are gathered here (``fast``): every evidence item named by a
``reference_id`` alone and no recorded stages. The others are classified record by record
(``classify_case``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
from pydantic_core import from_json

from heta_notebook.analysis._case_rows import expected_of
from heta_notebook.evaluators import _matching as matching
from heta_notebook.reports._columns import ReportColumns
from heta_notebook.schema._records import evidence_grade


@dataclass(frozen=True)
class Items:
    """One case's expected evidence as the classes read it: reference ids, grades, whether
    every item is named by its reference id alone, whether the case expects an answer."""

    refs: list[str | None]
    relevance: list[int]
    by_reference: bool
    expects_answer: bool


def items_of(data: Any) -> Items | None:
    """``metadata["expected"]`` read as ``expected_of`` reads it: directly when it has the
    plain shape of reference ids (the common case, no model built), else through the model
    (None when it is not valid expected data)."""
    plain = _plain_items(data)
    if plain is not None:
        return plain
    expected = expected_of(SimpleNamespace(metadata={"expected": data}))  # type: ignore[arg-type]
    if expected is None:
        return None
    evidence = expected.evidence
    return Items(
        refs=[e.reference_id for e in evidence],
        relevance=[e.relevance for e in evidence],
        by_reference=all(not e.locator and e.text is None and e.reference_id for e in evidence),
        expects_answer=bool(expected.answers or expected.value is not None),
    )


_EXPECTED_KEYS = frozenset(("answers", "evidence", "value", "metadata"))
_EVIDENCE_KEYS = frozenset(("reference_id", "locator", "text", "metadata"))


def _plain_items(data: Any) -> Items | None:
    """``Items`` of expected data whose every field is one ``BenchmarkExpected`` accepts as
    it is (evidence: a non-blank ``reference_id``, no locator, no text); None for any other."""
    if type(data) is not dict or not data.keys() <= _EXPECTED_KEYS:
        return None
    answers, evidence = data.get("answers", ()), data.get("evidence", ())
    if type(answers) not in (list, tuple) or type(evidence) not in (list, tuple):
        return None
    if not _json_dict(data.get("metadata", {})):
        return None
    if not all(type(a) is str and a.strip() for a in answers):
        return None
    refs, grades = [], []
    for item in evidence:
        if type(item) is not dict or not item.keys() <= _EVIDENCE_KEYS:
            return None
        ref, locator, meta = (
            item.get("reference_id"),
            item.get("locator", {}),
            item.get("metadata", {}),
        )
        if type(ref) is not str or not ref.strip() or item.get("text") is not None:
            return None
        if type(locator) is not dict or locator or not _json_dict(meta):
            return None
        refs.append(ref.strip())
        grades.append(evidence_grade(meta))
    return Items(refs, grades, True, bool(answers) or data.get("value") is not None)  # type: ignore[arg-type]


_STR = frozenset((str,))


def _json_dict(value: Any) -> bool:
    """A dict with text keys, as the model's ``metadata`` fields accept without a change."""
    return type(value) is dict and set(map(type, value)) <= _STR


@dataclass
class MissFacts:
    """Per case row: ids, expected evidence, response metadata and result count; ``fast``
    marks the rows these facts decide; ``answer_step`` the rows whose found items are checked
    against the answer (the case expects one and the response has an answer step);
    ``firsts`` the first ranks of reference keys (and whether a cited result matches)."""

    case_id: np.ndarray
    query_mode: np.ndarray
    expected: list[Items | None]
    metadata: list[Mapping[str, Any] | None]  # the response's metadata (None: no response)
    n_results: np.ndarray
    fast: np.ndarray
    answer_step: np.ndarray
    firsts: FirstRanks
    case_metadata: list[Mapping[str, Any]]  # each case's metadata


class FirstRanks:
    """Per (case row, key): the first rank whose result matches the key by the reference rule,
    every rank that does (the results beyond k that match count chunks seen), and whether
    any of those results is cited (``cited``: per matching result, its id is one the
    case's answer cites)."""

    def __init__(
        self,
        rows: np.ndarray,
        ranks: np.ndarray,
        keys: np.ndarray,
        codes: dict,
        cited: np.ndarray | None = None,
    ) -> None:
        self.codes = codes
        self.width = max(len(codes), 1)
        pair = rows.astype(np.int64) * self.width + keys
        order = np.lexsort((ranks, pair))
        pair, ranks = pair[order], ranks[order].astype(np.int64)
        distinct = np.ones(len(pair), dtype=bool)  # a result matching by two keys counts once
        distinct[1:] = (pair[1:] != pair[:-1]) | (ranks[1:] != ranks[:-1])
        self.pair, self.ranks = pair[distinct], ranks[distinct]
        starts = np.flatnonzero(np.r_[True, self.pair[1:] != self.pair[:-1]]) if len(pair) else []  # type: ignore[var-annotated]
        self.starts = np.asarray(starts, dtype=np.int64)
        self.keys = self.pair[self.starts]
        marks = np.zeros(len(order), bool) if cited is None else cited[order][distinct]
        self.cited = (
            np.logical_or.reduceat(marks, self.starts) if len(self.starts) else marks[:0]
        )  # per key: some result matching it is cited

    def lookup(
        self, rows: np.ndarray, refs: Sequence[str], k: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per item (case row, reference id): its first rank (0: none), the number of
        matching results ranked beyond ``k`` (per item) and whether a matching result (at
        any rank) is cited."""
        codes = np.fromiter((self.codes.get(r, -1) for r in refs), np.int64, len(refs))
        wanted = rows.astype(np.int64) * self.width + codes
        at = np.searchsorted(self.keys, wanted)
        at = np.minimum(at, max(len(self.keys) - 1, 0))
        hit = (codes >= 0) & (len(self.keys) > 0)
        hit &= self.keys[at] == wanted if len(self.keys) else False
        first = np.zeros(len(refs), dtype=np.int64)
        beyond = np.zeros(len(refs), dtype=np.int64)
        cited = np.zeros(len(refs), dtype=bool)
        if hit.any():
            cited[hit] = self.cited[at[hit]]
            start = self.starts[at[hit]]
            ends = np.r_[self.starts[1:], len(self.pair)][at[hit]]
            first[hit] = self.ranks[start]
            # ranks ascend within a key, so (key, rank) sorts as one number: the matches
            # within k are those up to (key, k), the rest are beyond k
            depth = int(self.ranks.max()) + 1
            flat = (self.pair - self.pair.min()) * depth + self.ranks
            cut = (self.pair[start] - self.pair.min()) * depth + np.minimum(k[hit], depth - 1)
            beyond[hit] = ends - np.searchsorted(flat, cut, side="right")
        return first, beyond, cited


# --------------------------------------------------------------------------- the rule


def decided(items: Items | None, response: Mapping[str, Any] | None, trace: Sequence[Any]) -> bool:
    """Whether the reference rule and the response metadata decide a case's classes: every
    evidence item named by a ``reference_id`` alone, no stages recorded (in the metadata or
    the trace) and deep ranks that are mappings (an answer step's citations and scores are
    read from the columns too)."""
    if response is None or items is None or not items.refs:
        return True  # no rows
    if not items.by_reference:
        return False
    if response.get("stages") is not None or any(isinstance(ids, list) for ids in trace):
        return False
    deep = response.get("deep_ranks")
    return not (
        isinstance(deep, Mapping) and not all(isinstance(v, Mapping) for v in deep.values())
    )


# --------------------------------------------------------------------------- columns


# What ``report_facts`` reads: a subset of a large report's rows reads only these columns.
MISS_COLUMNS = {
    "cases": (
        "case_id", "query_mode", "metadata", "has_response", "answer", "response_json",
        "n_results",
    ),
    "results": ("row", "rank", "id", "source", "metadata"),
}  # fmt: skip
MISS_ENCODED = ("id", "source", "metadata")  # of the results: read only as codes


def report_facts(columnar: ReportColumns) -> MissFacts:
    """The facts of every case row of a report, read from its tables."""
    n = columnar.n_rows
    meta_codes, meta_values = columnar.codes("cases", "metadata")
    parsed = [from_json(v) for v in meta_values]
    distinct = [items_of(m.get("expected")) if isinstance(m, dict) else None for m in parsed]
    expected = [distinct[c] if c >= 0 else None for c in meta_codes.tolist()]
    case_metadata = [parsed[c] if c >= 0 else {} for c in meta_codes.tolist()]
    has_response = columnar.numpy("cases", "has_response")
    answers = columnar.numpy("cases", "answer")
    metadata: list[Mapping[str, Any] | None] = [None] * n
    fast = np.ones(n, dtype=bool)
    step = np.zeros(n, dtype=bool)
    cited: dict[int, list[str]] = {}  # per answer-step row: the result ids its answer cites
    for row, text in enumerate(columnar.numpy("cases", "response_json").tolist()):
        if not has_response[row]:
            continue
        data = from_json(text) if text is not None else {}
        meta = metadata[row] = data.get("metadata") or {}
        trace = [(e.get("metadata") or {}).get("ids") for e in data.get("trace") or ()]
        items, citations = expected[row], data.get("citations") or ()
        fast[row] = decided(items, meta, trace)
        if items is not None and items.expects_answer:  # ``_answer_facts``'s answer step
            step[row] = answers[row] is not None or bool(citations) or "answer" in meta
            if step[row] and citations:
                cited[row] = [c.get("result_id") or c.get("id") for c in citations]
    return MissFacts(
        case_id=columnar.numpy("cases", "case_id"),
        query_mode=columnar.numpy("cases", "query_mode"),
        expected=expected,
        metadata=metadata,
        n_results=columnar.numpy("cases", "n_results").astype(np.int64),
        fast=fast,
        answer_step=step,
        firsts=_firsts(columnar, _references(distinct), cited),
        case_metadata=case_metadata,
    )


def _references(expected: list[Items | None]) -> dict[str, int]:
    """Each reference id the expected evidence names, numbered in first-seen order: the
    only keys whose first ranks are ever looked up."""
    codes: dict[str, int] = {}
    for items in expected:
        for ref in items.refs if items is not None else ():
            if ref is not None:
                codes.setdefault(ref, len(codes))
    return codes


def _firsts(
    columnar: ReportColumns, codes: dict[str, int], cited: Mapping[int, Sequence[str]]
) -> FirstRanks:
    """``FirstRanks`` of the results table of any report (in memory or stored), for the
    reference ids ``codes`` only: each distinct (source, metadata) JSON pair's reference
    keys read once (``matching.stored_keys``), spread to its rows by numpy; a key no
    evidence names is dropped at once, so only the results matching some evidence are
    ranked. ``cited``: per case row, the result ids its answer cites (marks its results
    with those ids, at any rank)."""
    rows = columnar.numpy("results", "row").astype(np.int64)
    ranks = columnar.numpy("results", "rank").astype(np.int64)
    id_codes, ids = columnar.codes("results", "id")
    src_codes, sources = columnar.codes("results", "source")
    meta_codes, metas = columnar.codes("results", "metadata")
    meta_codes = matching.keyed_only(meta_codes, metas)
    pairs, pair_of = np.unique(
        (src_codes.astype(np.int64) + 1) * (len(metas) + 1) + meta_codes + 1, return_inverse=True
    )
    code = codes.get
    id_code = np.fromiter((code(i, -1) for i in ids), np.int64, len(ids))
    heads = [i.rpartition("#") for i in ids]
    head_code = np.asarray([code(h, -1) if s else -1 for h, s, _ in heads], np.int64)
    pair_keys: list[list[int]] = []
    named = np.zeros(len(pairs), dtype=bool)
    for p, value in enumerate(pairs.tolist()):
        s, m = divmod(value, len(metas) + 1)
        documents, direct = matching.stored_keys(
            sources[s - 1] if s else None, metas[m - 1] if m else None
        )
        named[p] = bool(documents)
        found = (code(key, -1) for key in dict.fromkeys([*direct, *documents]))
        pair_keys.append([c for c in found if c >= 0])
    keys = _ragged(pair_keys, pair_of.reshape(-1))
    own = id_code[id_codes]  # the result's own id (ids are never null)
    mine = own >= 0
    heads_at = ~named[pair_of.reshape(-1)] & (head_code[id_codes] >= 0)  # ``doc#n`` → doc
    marks = _cited(rows, id_codes, ids, cited)
    return FirstRanks(
        np.concatenate([rows[mine], rows[keys[0]], rows[heads_at]]),
        np.concatenate([ranks[mine], ranks[keys[0]], ranks[heads_at]]),
        np.concatenate([own[mine], keys[1], head_code[id_codes][heads_at]]),
        codes,
        np.concatenate([marks[mine], marks[keys[0]], marks[heads_at]]),
    )


def _cited(
    rows: np.ndarray, id_codes: np.ndarray, ids: list[str], cited: Mapping[int, Sequence[str]]
) -> np.ndarray:
    """Per result: whether its case's answer cites its id (``_answer_facts``' ``cited``)."""
    if not cited:
        return np.zeros(len(rows), dtype=bool)
    number: dict[str, int] = {}  # each cited id, numbered
    for i in (i for c in cited.values() for i in c):
        number.setdefault(i, len(number))
    width = len(number)
    wanted = [row * width + number[i] for row, c in cited.items() for i in c]
    of_id = np.fromiter((number.get(i, -1) for i in ids), np.int64, len(ids))[id_codes]
    return (of_id >= 0) & np.isin(rows * width + of_id, np.asarray(wanted, dtype=np.int64))


# --------------------------------------------------------------------------- answer scores

# answer scores tried, in order, for "found, answer wrong" (the first present and not
# skipped counts)
ANSWER_SCORES: tuple[str, ...] = (
    "squad_f1",
    "squad_exact_match",
    "answer_token_f1",
    "answer_exact_match",
)
ANSWER_SCORES += ("answer_contains", "answer")
# what ``answer_failed`` reads (a subset of a large report's rows: only these columns)
ANSWER_SCORE_COLUMNS = {
    "cases": ("case_id",),
    "scores": ("row", "name", "value", "passed", "metadata"),
}


def answer_failed(columnar: ReportColumns, rows: np.ndarray) -> np.ndarray:
    """Per case row of the ascending ``rows``: whether its answer score failed, by
    ``_answer_facts``' rule: the first of ``ANSWER_SCORES`` whose (first) score the case has
    and did not skip counts; it failed when ``passed`` is False, or None with a value of 0
    (False, 0.0; a text value never is). No answer score: False."""
    out = np.zeros(len(rows), dtype=bool)
    if not len(rows) or not columnar.num_rows("scores"):
        return out
    name_codes, names = columnar.codes("scores", "name")
    order_of = {name: i for i, name in enumerate(ANSWER_SCORES)}
    which = np.asarray([order_of.get(x, -1) for x in names] + [-1], np.int64)[name_codes]
    owner = columnar.numpy("scores", "row").astype(np.int64)
    at = np.flatnonzero(which >= 0)
    at = at[np.isin(owner[at], rows)]
    at = at[np.lexsort((at, which[at], owner[at]))]  # by case row, then name order
    at = at[_firsts_of(owner[at], which[at])]  # ``result.score(name)``: the first of a name
    meta_codes, metas = columnar.codes("scores", "metadata")
    skipped: dict[int, bool] = {}
    for code in np.unique(meta_codes[at]).tolist():
        meta = from_json(metas[code]) if code >= 0 else {}
        skipped[code] = isinstance(meta, dict) and bool(meta.get("skipped"))
    at = at[np.fromiter((not skipped[c] for c in meta_codes[at].tolist()), bool, len(at))]
    at = at[_firsts_of(owner[at])]  # the first name in order counts
    passed = columnar.numpy("scores", "passed")[at].tolist()
    values = columnar.numpy("scores", "value")[at].tolist()
    failed = [p is False or (p is None and v == 0) for p, v in zip(passed, values, strict=True)]
    out[np.searchsorted(rows, owner[at])] = failed
    return out


def _firsts_of(*keys: np.ndarray) -> np.ndarray:
    """Where a run of equal ``keys`` (sorted) starts."""
    first = np.ones(len(keys[0]), dtype=bool)
    first[1:] = False
    for key in keys:
        first[1:] |= key[1:] != key[:-1]
    return first


def _ragged(lists: list[list[int]], which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each position i, ``lists[which[i]]`` spread out: (position of each value, value)."""
    lengths = np.asarray([len(x) for x in lists], dtype=np.int64)
    flat = np.asarray([v for x in lists for v in x], dtype=np.int64)
    offsets = np.r_[0, np.cumsum(lengths)[:-1]] if len(lists) else np.zeros(0, np.int64)
    counts = lengths[which] if len(lists) else np.zeros(len(which), np.int64)
    positions = np.repeat(np.arange(len(which)), counts)
    within = np.arange(len(positions)) - np.repeat(np.cumsum(counts) - counts, counts)
    return positions, flat[offsets[which][positions] + within] if len(positions) else flat[:0]


__all__ = [
    "ANSWER_SCORES",
    "ANSWER_SCORE_COLUMNS",
    "FirstRanks",
    "Items",
    "MissFacts",
    "answer_failed",
    "decided",
    "items_of",
    "report_facts",
]
