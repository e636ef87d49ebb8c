"""Per case: its expected answers and evidence, each evidence item matched (found, at which
rank, by which rule) and each retrieved result with its grade: the rows the frames, the
explorers' details and the case detail all show (``evaluators.matching``'s rules)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from heta_notebook.evaluators import _matching as matching
from heta_notebook.reports._columns import ReportColumns
from heta_notebook.schema._records import (
    BenchmarkEvidence,
    BenchmarkExpected,
    EvaluationCaseResult,
)

EVIDENCE_FIELDS = (
    "index",
    "label",
    "reference_id",
    "relevance",
    "matched",
    "rank",
    "result_id",
    "matched_by",
    "source",
)
RESULT_FIELDS = (
    "rank",
    "result_id",
    "document_id",
    "score",
    "kind",
    "text",
    "relevance",
    "relevant",
    "matched_evidence",
)


def expected_of(result: EvaluationCaseResult) -> BenchmarkExpected | None:
    """The case's expected answers/evidence from ``metadata["expected"]`` (None if absent)."""
    data = result.metadata.get("expected")
    if not isinstance(data, dict):
        return None
    try:
        return BenchmarkExpected.from_dict(data)
    except ValueError:
        return None


def case_evidence(
    result: EvaluationCaseResult,
    expected: BenchmarkExpected | None = None,
    *,
    matches: Sequence[matching.EvidenceMatch] | None = None,
) -> list[dict[str, Any]]:
    """Each expected evidence item of one case result: matched (rank, result id) or missing.

    Uses ``metadata["expected"]`` and ``matching.match_evidence``; reports without it
    (e.g. heta-framework's) fall back to an evidence-recall score's matched/missing metadata.
    """
    expected = expected if expected is not None else expected_of(result)
    if expected is not None and expected.evidence:
        if matches is None:  # ``matches``: already computed by the caller (the explorers)
            results = result.response.results if result.response is not None else ()
            matches = matching.match_evidence(expected.evidence, results)
        return [_evidence_row(m, expected.evidence[m.index], "match") for m in matches]
    return _evidence_from_scores(result)


def _evidence_row(match: matching.EvidenceMatch, item: BenchmarkEvidence, source: str) -> dict:
    return {
        "index": match.index,
        "label": match.label,
        "reference_id": item.reference_id,
        "relevance": match.relevance,
        "matched": match.matched,
        "rank": match.rank,
        "result_id": match.result_id,
        "matched_by": match.matched_by,
        "source": source,
    }


def _evidence_from_scores(result: EvaluationCaseResult) -> list[dict[str, Any]]:
    for score in result.scores:
        md = score.metadata
        if "matched_reference_ids" in md and "matched_evidence" not in md:
            return _evidence_from_reference_ids(result, score.name, md)
        if "matched_evidence" not in md and "missing_evidence" not in md:
            continue
        rows = [_score_evidence_row(e, True, score.name) for e in md.get("matched_evidence") or []]
        rows += [
            _score_evidence_row(e, False, score.name) for e in md.get("missing_evidence") or []
        ]
        return sorted(rows, key=lambda r: (r["index"] is None, r["index"] or 0))
    return []


def _evidence_from_reference_ids(
    result: EvaluationCaseResult, score_name: str, md: dict[str, Any]
) -> list[dict[str, Any]]:
    """heta-framework's evidence recall names only matched ids (plus counts): matched rows get
    their rank from the results' documents; missing items are anonymous (label None)."""
    results = result.response.results if result.response is not None else ()
    ranks: dict[str, tuple[int, str]] = {}
    for rank, r in enumerate(results, start=1):
        for doc in matching.document_ids(r):
            ranks.setdefault(doc, (rank, r.id))
    rows = []
    for index, ref in enumerate(md.get("matched_reference_ids") or []):
        ref_rank, result_id = ranks.get(str(ref), (None, None))
        rows.append(
            _score_evidence_row(
                {
                    "index": index,
                    "label": str(ref),
                    "reference_id": ref,
                    "rank": ref_rank,
                    "result_id": result_id,
                    "matched_by": "reference_id",
                },
                True,
                score_name,
            )
        )
    expected = md.get("expected")
    missing = max(0, int(expected) - len(rows)) if isinstance(expected, (int, float)) else 0
    for index in range(len(rows), len(rows) + missing):
        rows.append({**_score_evidence_row({"index": index}, False, score_name), "label": None})
    return rows


def _score_evidence_row(item: Any, matched: bool, score_name: str) -> dict[str, Any]:
    item = item if isinstance(item, dict) else {"label": str(item)}
    label = item.get("label") or item.get("reference_id") or str(item.get("index", "?"))
    return {
        "index": item.get("index"),
        "label": str(label),
        "reference_id": item.get("reference_id"),
        "relevance": item.get("relevance", 1),
        "matched": matched,
        "rank": item.get("rank") if matched else None,
        "result_id": item.get("result_id") if matched else None,
        "matched_by": item.get("matched_by") if matched else None,
        "source": f"score:{score_name}",
    }


def case_results(
    result: EvaluationCaseResult,
    expected: BenchmarkExpected | None = None,
    *,
    matches: Sequence[matching.EvidenceMatch] | None = None,
) -> list[dict[str, Any]]:
    """The ranked results of one case result with document id and relevance grade.

    ``relevance`` is the qrels grade of the result's document (None when the case has no
    expected evidence); ``matched_evidence`` lists labels of evidence items it matched.
    """
    if result.response is None:
        return []
    expected = expected if expected is not None else expected_of(result)
    evidence = expected.evidence if expected is not None else ()
    qrels = matching.qrels_of(evidence)
    by_result: dict[str, list[str]] = {}
    if evidence:
        if matches is None:
            matches = matching.match_evidence(evidence, result.response.results)
        for m in matches:
            if m.matched and m.result_id is not None:
                by_result.setdefault(m.result_id, []).append(m.label)
    else:  # reports without expected data: an evidence score may still name matched items
        for row in _evidence_from_scores(result):
            if row["matched"] and row["result_id"] is not None:
                by_result.setdefault(row["result_id"], []).append(row["label"])
    return [
        _result_row(rank, r, qrels, by_result, bool(evidence))
        for rank, r in enumerate(result.response.results, start=1)
    ]


def _result_row(rank: int, r: Any, qrels: dict, by_result: dict, judged: bool) -> dict[str, Any]:
    docs = matching.document_ids(r)
    grades = [qrels[d] for d in docs if d in qrels]
    grade = max(grades) if grades else (0 if judged else None)
    matched = by_result.get(r.id, [])
    return {
        "rank": rank,
        "result_id": r.id,
        "document_id": docs[0] if docs else None,
        "score": r.score,
        "kind": r.kind,
        "text": r.text,
        "relevance": grade,
        "relevant": bool((grade or 0) > 0 or matched),
        "matched_evidence": matched,
    }


def report_evidence_rows(columns: ReportColumns) -> list[tuple]:
    """``(row, case_id, query_mode, *EVIDENCE_FIELDS)`` of every case row of a report, in
    report order, from its columns (``reports.ReportColumns``): evidence named by
    ``reference_id`` alone is matched on each result's stored keys
    (``matching.match_stored``, the rule ``case_evidence`` applies), so a stored report
    builds no record for it; a case with a locator or a text to match, or no expected
    evidence (its score metadata may name some), is read as a record by ``case_evidence``.
    In-memory and stored reports take the same path."""
    n = columns.n_rows
    case_ids, modes = columns.numpy("cases", "case_id"), columns.numpy("cases", "query_mode")
    meta_codes, meta_values = columns.codes("cases", "metadata")
    expected = [expected_in(v) for v in meta_values] + [None]  # code -1: no metadata
    ends = columns.numpy("results", "row").astype(np.int64)
    bounds = np.searchsorted(ends, np.arange(n + 1))
    hits = [_decoded(*columns.codes("results", name)) for name in ("id", "source", "metadata")]
    out: list[tuple] = []
    slow: list[int] = []
    for row, code in enumerate(meta_codes.tolist()):
        items = _matchable(expected[code])
        if items is None:
            slow.append(row)
            continue
        a, b = int(bounds[row]), int(bounds[row + 1])
        ids, sources, metas = (column[a:b].tolist() for column in hits)
        head = (row, case_ids[row], modes[row])
        for m in matching.match_stored(items, ids, sources, metas):
            out.append((*head, *_evidence_row(m, items[m.index], "match").values()))
    for row, record in zip(slow, columns.records_at(np.asarray(slow, dtype=np.int64)), strict=True):
        head = (row, record.case_id, record.query_mode)
        out += [(*head, *e.values()) for e in case_evidence(record, expected[meta_codes[row]])]
    if slow:
        out.sort(key=_first)  # stable: each case's items keep their order
    return out


def _matchable(found: BenchmarkExpected | None) -> Sequence[BenchmarkEvidence] | None:
    """A case's expected evidence when its columns can match it (every item named by
    ``reference_id`` alone), else None: a locator or a text to match, or no expected
    evidence (its score metadata may name matched items), is read from the record."""
    items = found.evidence if found is not None else ()
    if not items or any(item.locator or item.text is not None for item in items):
        return None
    return items


def report_result_rows(columns: ReportColumns) -> list[tuple]:
    """``(row, case_id, query_mode, *RESULT_FIELDS)`` of every ranked result of a report, in
    report order, from its columns: each result's documents come from its stored keys
    (``matching.stored_keys``) and evidence named by ``reference_id`` alone is matched on
    them (``matching.match_stored``), as ``case_results`` does on records, so a stored
    report builds no record for it. A case whose evidence has a locator or a text to match,
    or that has no expected evidence (its score metadata may name matched items), is read
    as a record by ``case_results``. A case's expected data is its first row's (per case id)."""
    n = columns.n_rows
    case_ids, modes = columns.numpy("cases", "case_id"), columns.numpy("cases", "query_mode")
    meta_codes, meta_values = columns.codes("cases", "metadata")
    first_code: dict[str, int] = {}
    for case_id, code in zip(case_ids.tolist(), meta_codes.tolist(), strict=True):
        first_code.setdefault(case_id, code)
    parsed: dict[int, BenchmarkExpected | None] = {}
    bounds = np.searchsorted(columns.numpy("results", "row").astype(np.int64), np.arange(n + 1))
    hits = [_decoded(*columns.codes("results", name)) for name in ("id", "source", "metadata")]
    kinds = _decoded(*columns.codes("results", "kind"))
    scores = columns.column("results", "score").to_pylist()
    texts = columns.texts().to_pylist()
    text_ids = columns.numpy("results", "text").tolist()
    out: list[tuple] = []
    slow: list[int] = []
    for row in np.flatnonzero(bounds[1:] > bounds[:-1]).tolist():  # cases with results
        code = first_code[case_ids[row]]
        if code not in parsed:
            parsed[code] = expected_in(meta_values[code]) if code >= 0 else None
        items = _matchable(parsed[code])
        if items is None:
            slow.append(row)
            continue
        a, b = int(bounds[row]), int(bounds[row + 1])
        ids, sources, metas = (column[a:b].tolist() for column in hits)
        by_result: dict[str, list[str]] = {}
        for m in matching.match_stored(items, ids, sources, metas):
            if m.matched and m.result_id is not None:
                by_result.setdefault(m.result_id, []).append(m.label)
        qrels = matching.qrels_of(items)
        for at, (hit, source, metadata) in enumerate(zip(ids, sources, metas, strict=True)):
            docs = matching.stored_keys(source, metadata)[0]
            grades = [qrels[d] for d in docs if d in qrels]
            grade = max(grades) if grades else 0
            matched = by_result.get(hit, [])
            i = a + at
            out.append(
                (
                    *(row, case_ids[row], modes[row], at + 1, hit, docs[0] if docs else None),
                    *(scores[i], kinds[i], texts[text_ids[i]], grade, grade > 0 or bool(matched)),
                    matched,
                )
            )
    records = columns.records_at(np.asarray(slow, dtype=np.int64))
    for row, record in zip(slow, records, strict=True):
        head = (row, record.case_id, record.query_mode)
        code = first_code[record.case_id]
        expected = parsed[code]
        out += [(*head, *item.values()) for item in case_results(record, expected)]
    if slow:
        out.sort(key=_first)  # stable: each case's results keep their rank order
    return out


def expected_in(metadata: str | None) -> BenchmarkExpected | None:
    """``expected_of`` for a case's metadata JSON, as a report's columns hold it (parsed
    only when it names ``expected``)."""
    data = json.loads(metadata) if metadata and '"expected"' in metadata else {}
    return expected_of(SimpleNamespace(metadata=data))  # type: ignore[arg-type]


def _decoded(codes: np.ndarray, values: list[str]) -> np.ndarray:
    """A coded string column as an object array (null: None)."""
    return np.asarray([*values, None], dtype=object)[codes]


def _first(row: tuple) -> int:
    return row[0]


__all__ = [
    "EVIDENCE_FIELDS",
    "RESULT_FIELDS",
    "case_evidence",
    "case_results",
    "expected_in",
    "expected_of",
    "report_evidence_rows",
    "report_result_rows",
]
