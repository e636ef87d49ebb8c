"""The compact, columnar data the browser explorers run on (synced once from Python).

``encode_report(report)`` turns a report's case results into plain JSON columns: every text
(query, answer, evidence label, result chunk, judge reason, metadata) is stored ONCE in a
string table and referenced by index, long texts are cut to ``max_text`` characters with
their full length kept, numbers are rounded to what the page shows. Above ``max_cases`` case
results the most informative ones are embedded first (query errors, failed verdicts, the
lowest headline scores, the ``priority`` case ids a comparison asks for) and ``left_out`` says
how many were not, so a page can say so; nothing is dropped silently.

Two parts: the **index** of every embedded case (what the list, filters and sort need), read
from the frames' columns, and the **details** of chosen cases (answer, evidence, results,
reasons), so a large report's first page needs little (``widgets.report_data``); a page
fetches other details with :func:`encode_details`. The details themselves are read in
``display._explorer_details`` (records or a stored report's tables, one payload), the string
table and cells in ``display._explorer_cells``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from heta_notebook._util.gc import paused_gc
from heta_notebook.analysis._case_rows import case_evidence, expected_in
from heta_notebook.display._explorer_cells import (
    MAX_TEXT,
    StringTable,
    score_note,
)
from heta_notebook.display._explorer_details import (
    details_into,
    found_index,
    miss_index,
    parsed,
    records_at,
    score_notes,
)
from heta_notebook.reports._columns import ReportColumns
from heta_notebook.schema._headline import headline_score
from heta_notebook.schema._records import (
    EvaluationCaseResult,
    EvaluationError,
    EvaluationReport,
)
from heta_notebook.schema._status import STATUSES

FORMAT_VERSION = 1
DEFAULT_MAX_CASES = 20_000


def case_labels(result: EvaluationCaseResult) -> list[str]:
    """The case's labels (slices) as ``key=value`` strings (``metadata["labels"]``)."""
    return _labels_of(result.metadata)


def informative_order(report: EvaluationReport, priority: Sequence[str] = ()) -> np.ndarray:
    """Report rows, most informative first: ``priority`` case ids, query errors, failed
    verdicts, then the lowest headline score; ties in report order.

    Read from the report's frames (the case columns and the flat score arrays), so no
    record is built: a few vectorised passes."""
    frames = report.frames()
    case_ids = frames.case_column("case_id")
    n = len(case_ids)
    first = {str(c): i for i, c in enumerate(priority)}
    keys = np.zeros((4, n))
    if first:
        keys[0] = [first.get(c, len(first)) for c in case_ids.tolist()]
    keys[1] = np.where(_present(frames.case_column("error")), 0, 1)
    arrays = frames.score_arrays()
    failed = np.bincount(arrays["rows"][arrays["passed"] == 0], minlength=n)[:n] > 0
    keys[2] = np.where(failed, 0, 1)
    keys[3] = math.inf  # NaN unless scored (and for text values): last
    headline = headline_score(frames.score_names)
    if headline in arrays["names"]:
        picked = arrays["name_codes"] == arrays["names"].index(headline)
        values = arrays["values"][picked]
        keys[3][arrays["rows"][picked]] = np.where(np.isnan(values), math.inf, values)
    return np.lexsort((np.arange(n), keys[3], keys[2], keys[1], keys[0]))


def _present(values: np.ndarray) -> np.ndarray:
    """True where a column holds a value (not None / NaN)."""
    return np.fromiter((v is not None and v == v for v in values), dtype=bool, count=len(values))


def embedded_rows(
    report: EvaluationReport, max_cases: int | None, priority: Sequence[str] = ()
) -> np.ndarray:
    """The report rows to embed (in report order): all, or the ``max_cases`` most informative."""
    n = len(report.case_results)
    if max_cases is None or n <= max_cases:
        return np.arange(n)
    return np.sort(informative_order(report, priority)[: max(0, int(max_cases))])


DETAIL_COLUMNS = (
    "answer",
    "abstained",
    "abstain_reason",
    "expected",
    "expects_abstention",
    "evidence",
    "results",
    "trace",
    "response_meta",
)


def encode_report(
    report: EvaluationReport,
    *,
    max_cases: int | None = DEFAULT_MAX_CASES,
    priority: Sequence[str] = (),
    max_text: int = MAX_TEXT,
    details: Sequence[int] | None = None,
) -> dict[str, Any]:
    """The columnar payload of one report for the browser explorers (see module docstring).

    Two parts: the **index** of every embedded case (ids, modes, queries, errors, labels,
    latency, score values / statuses / verdicts: what the list, filters and sort need), read
    from the report's columns, and the **details** (answer, expected, evidence, results,
    reasons, metadata) of the report rows ``details`` (None: every embedded case), read
    from the report's columns (``report.frames().columns``, in memory or stored). A case
    without details holds ``null`` in every detail column; the page asks for them (:func:`encode_details`) or says they are not embedded."""
    with paused_gc():  # millions of small lists: no collector passes over them
        return _encode_report(report, max_cases, priority, max_text, details)


def _encode_report(
    report: EvaluationReport,
    max_cases: int | None,
    priority: Sequence[str],
    max_text: int,
    details: Sequence[int] | None,
) -> dict[str, Any]:
    strings = StringTable(max_text)
    rows = embedded_rows(report, max_cases, priority)
    names = list(report.frames().score_names)
    cols, scores = case_index(report, rows, names, strings)
    cols["misses"] = miss_index(report, rows, strings)
    found = found_index(report, rows, strings)
    if found is not None:  # absent past MAX_MISS_CASES: the page counts from loaded details
        cols["found"] = found
    wanted = rows if details is None else np.intersect1d(rows, np.asarray(details, dtype=np.int64))
    position = {int(row): i for i, row in enumerate(rows.tolist())}
    for col in DETAIL_COLUMNS:
        cols[col] = [None] * len(rows)
    for col in scores.values():  # type: ignore[assignment]
        col["r"], col["m"] = [None] * len(rows), [None] * len(rows)  # type: ignore[index]
    details_into(report, wanted, strings, cols, scores, [position[r] for r in wanted.tolist()])
    return _payload(
        report,
        rows,
        names,
        cols,
        scores,
        strings,
        left_out=len(report.case_results) - len(rows),
        max_cases=max_cases,
        n_detailed=len(wanted),
    )


def _payload(
    report: EvaluationReport,
    rows: np.ndarray,
    names: list[str],
    cols: dict[str, list[Any]],
    scores: dict[str, Any],
    strings: StringTable,
    **counts: Any,
) -> dict[str, Any]:
    """The payload envelope around an index (and details): what the page reads first."""
    return {
        "version": FORMAT_VERSION,
        "label": report.label,
        "report_id": report.report_id,
        "n_total": len(report.case_results),
        "rows": rows.tolist(),
        **counts,
        "modes": list(report.frames().modes),
        "score_names": names,
        "headline": headline_score(names),
        "judges": judge_scores(report),
        "cases": cols,
        "scores": scores,
        "strings": strings.texts,
        "full_length": strings.full_length,
    }


def encode_preview(report: EvaluationReport, rows: Sequence[int]) -> dict[str, Any]:
    """A first page at once for a large report: the index of the report rows
    ``rows`` only (read from the row groups holding them, not whole columns), no details,
    and ``preview`` saying how many case results the full payload will hold."""
    columns = report.frames().columns
    strings = StringTable()
    picked = np.unique(np.asarray(rows, dtype=np.int64))
    names = list(report.frames().score_names)
    cases = columns.read_rows("cases", picked, PREVIEW_CASE_COLUMNS, one_per_row=True)
    cols: dict[str, list[Any]] = {}
    cols["case_id"] = [strings.add(v) for v in cases.column("case_id").to_pylist()]
    cols["mode"] = [strings.add(v) for v in cases.column("query_mode").to_pylist()]
    cols["query"] = [strings.add(v) for v in cases.column("query").to_pylist()]
    cols["latency"] = _rounded(cases.column("latency_ms").to_numpy(zero_copy_only=False), 1)
    errors = cases.column("error_json").to_pylist()
    cols["error"] = [
        strings.add(None if e is None else error_text(EvaluationError.model_validate_json(e)))
        for e in errors
    ]
    cols["labels"] = [
        [strings.add(label) for label in _labels_of(json.loads(text))] if text else []
        for text in cases.column("metadata").to_pylist()
    ]
    score_rows = columns.read_rows("scores", picked, PREVIEW_SCORE_COLUMNS, one_per_row=False)
    arrays = _score_rows(score_rows)
    scores = _score_index(arrays, len(report.case_results), picked, names, strings)
    for col in DETAIL_COLUMNS:
        cols[col] = [None] * len(picked)
    for col in scores.values():  # type: ignore[assignment]
        col["r"], col["m"] = [None] * len(picked), [None] * len(picked)  # type: ignore[index]
    return _payload(
        report,
        picked,
        names,
        cols,
        scores,
        strings,
        left_out=0,
        max_cases=None,
        n_detailed=0,
        preview=True,
    )


PREVIEW_CASE_COLUMNS = ("case_id", "query_mode", "query", "latency_ms", "error_json", "metadata")
PREVIEW_SCORE_COLUMNS = ("row", "name", "kind", "status", "value", "passed", "text")


def _score_rows(table: Any) -> dict[str, Any]:
    """A few rows of ``scores.parquet`` as the flat arrays of ``frames.score_arrays``."""
    names = table.column("name").combine_chunks().dictionary_encode()
    kinds = table.column("kind").to_numpy(zero_copy_only=False)
    status_names = table.column("status").to_pylist()
    status = np.asarray([STATUSES.index(v) for v in status_names], dtype=np.int8)
    values = table.column("value").to_numpy(zero_copy_only=False).astype(float)
    values[status != 0] = np.nan
    passed = np.asarray([2 if v is None else int(v) for v in table.column("passed").to_pylist()])
    texts = table.column("text").to_pylist()
    return {
        "rows": table.column("row").to_numpy(zero_copy_only=False).astype(np.int64),
        "names": names.dictionary.to_pylist(),
        "name_codes": names.indices.to_numpy(zero_copy_only=False).astype(np.int64),
        "values": values,
        "texts": [t if k == 2 else None for t, k in zip(texts, kinds.tolist(), strict=True)],
        "passed": passed,
        "status": status,
    }


def encode_details(
    report: EvaluationReport, rows: Sequence[int], *, max_text: int = MAX_TEXT
) -> dict[str, Any]:
    """The details of the report rows ``rows`` (what a live page fetches on selection), with
    their own string table: the page appends it to its own and shifts the indexes."""
    strings = StringTable(max_text)
    wanted = np.unique(np.asarray(rows, dtype=np.int64))
    wanted = wanted[(wanted >= 0) & (wanted < len(report.case_results))]
    names = list(report.frames().score_names)
    cols: dict[str, list[Any]] = {col: [None] * len(wanted) for col in DETAIL_COLUMNS}
    scores = {name: {"r": [None] * len(wanted), "m": [None] * len(wanted)} for name in names}
    with paused_gc():
        details_into(report, wanted, strings, cols, scores, list(range(len(wanted))))
    return {
        "rows": wanted.tolist(),
        "cases": cols,
        "scores": scores,
        "strings": strings.texts,
        "full_length": strings.full_length,
    }


def case_index(
    report: EvaluationReport, rows: np.ndarray, names: list[str], s: StringTable
) -> tuple[dict[str, list[Any]], dict[str, dict[str, Any]]]:
    """The index columns of the report rows ``rows``, read from the frames' case columns and
    flat score arrays (no record built)."""
    frames = report.frames()
    cols: dict[str, list[Any]] = {}
    cols["case_id"] = [s.add(v) for v in frames.case_column("case_id")[rows].tolist()]
    cols["mode"] = [s.add(v) for v in frames.case_column("query_mode")[rows].tolist()]
    cols["query"] = [s.add(v) for v in frames.case_column("query")[rows].tolist()]
    cols["latency"] = _rounded(frames.case_column("latency_ms")[rows].astype(float), 1)
    cols["error"] = [s.add(v) for v in error_texts(report, rows)]
    cols["labels"] = [[s.add(label) for label in labels] for labels in row_labels(report, rows)]
    return cols, _score_index(frames.score_arrays(), len(report.case_results), rows, names, s)


def _rounded(values: np.ndarray, digits: int) -> list[float | None]:
    """Finite values rounded for the page, None for NaN / inf."""
    out = np.round(values, digits)
    return [v if math.isfinite(v) else None for v in out.tolist()]


def _score_index(
    arrays: dict[str, Any], n: int, rows: np.ndarray, names: list[str], s: StringTable
) -> dict[str, dict[str, Any]]:
    """Per score name: value (``v``), status code (``s``, -1 absent), verdict (``p``) of the
    embedded rows, and text values (``t``, sparse by position)."""
    position = np.full(n, -1, dtype=np.int64)
    position[rows] = np.arange(len(rows))
    at = position[arrays["rows"]]
    keep = np.flatnonzero(at >= 0)
    at = at[keep]
    code = np.full(max(len(arrays["names"]), 1), -1, dtype=np.int64)
    for k, name in enumerate(names):  # names these rows may not all have
        if name in arrays["names"]:
            code[arrays["names"].index(name)] = k
    which = code[arrays["name_codes"][keep]]
    known = which >= 0
    keep, at, which = keep[known], at[known], which[known]
    shape = (len(names), len(rows))
    values, status, passed = np.full(shape, np.nan), np.full(shape, -1, np.int8), np.full(shape, 2)
    values[which, at] = arrays["values"][keep]
    status[which, at] = arrays["status"][keep]
    passed[which, at] = arrays["passed"][keep]
    texts = arrays["texts"]
    out: dict[str, dict[str, Any]] = {}
    for k, name in enumerate(names):
        verdicts = passed[k].tolist()
        out[name] = {
            "v": _rounded(values[k], 4),
            "s": status[k].tolist(),
            "p": [None if v == 2 else v for v in verdicts],
        }
    for i in np.flatnonzero(np.asarray([t is not None for t in texts], dtype=bool)[keep]).tolist():
        flat = int(keep[i])
        out[names[int(which[i])]].setdefault("t", {})[str(int(at[i]))] = s.add(texts[flat])
    return out


def judge_scores(report: EvaluationReport, sample: int = 50) -> list[str]:
    """The scores an LLM judge gave: their reasons are a judge's, the others' an evaluator's.
    The run's evaluator list says so; a report without one (an older or heta-framework report)
    is read from its first ``sample`` case results (a judge's score names its prompt version)."""
    described = report.metadata.get("evaluators")
    if isinstance(described, list):
        return [str(d.get("name")) for d in described if isinstance(d, dict) and is_judge(d)]
    sample = min(sample, len(report.case_results))
    if sample <= 0:
        return []
    scores = report.frames().columns.score_metadata(np.arange(sample, dtype=np.int64))
    return sorted({name for name, meta in scores if meta and "prompt_version" in json.loads(meta)})


def is_judge(described: dict[str, Any]) -> bool:
    """Whether an evaluator description (``metadata["evaluators"][i]``) is an LLM judge's."""
    manifest = described.get("manifest")
    return str(described.get("type", "")).endswith("Judge") or (
        isinstance(manifest, dict) and "prompt_version" in manifest
    )


def error_texts(report: EvaluationReport, rows: np.ndarray) -> list[str | None]:
    """``"Type: message"`` (`` (retryable)``) of each row's query error, None without one."""
    messages = report.frames().case_column("error")[rows]
    erred = [i for i, m in enumerate(messages.tolist()) if m is not None]
    out: list[str | None] = [None] * len(rows)
    if not erred:
        return out
    column = report.frames().columns.column("cases", "error_json")
    raw = column.take(np.asarray(rows[erred], dtype=np.int64)).to_pylist()
    errors = [EvaluationError.model_validate_json(text) for text in raw]
    for i, error in zip(erred, errors, strict=True):
        out[i] = error_text(error)
    return out


def error_text(error: Any) -> str | None:
    """How the explorers show a query error."""
    if error is None:
        return None
    return f"{error.error_type}: {error.message}" + (" (retryable)" if error.retryable else "")


def row_labels(report: EvaluationReport, rows: np.ndarray) -> list[list[str]]:
    """Each row's labels (``case_labels``), parsing only the case metadata that names labels."""
    raw = (
        report.frames()
        .columns.column("cases", "metadata")
        .take(np.asarray(rows, dtype=np.int64))
        .to_pylist()
    )
    return [
        _labels_of(json.loads(text)) if text is not None and '"labels"' in text else []
        for text in raw
    ]


def _labels_of(metadata: Any) -> list[str]:
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    if isinstance(labels, dict):
        return [f"{k}={v}" for k, v in labels.items()]
    if isinstance(labels, (list, tuple)):
        return [str(v) for v in labels]
    return []


def search_texts(report: EvaluationReport) -> list[str]:
    """Per report row, the lower-cased text the explorers search: case id, query, evidence
    labels, judge reasons (and evaluator errors / skip reasons)."""
    with paused_gc():
        return _search_texts_of(report, report.frames().columns)


def _search_text(r: EvaluationCaseResult) -> str:
    parts: list[Any] = [r.case_id, r.query]
    parts += [e["label"] for e in case_evidence(r) if e["label"]]
    parts += [score_note(s) for s in r.scores]
    return "\n".join(str(p) for p in parts if p).casefold()


_SCORE_EVIDENCE_KEYS = ("matched_evidence", "missing_evidence", "matched_reference_ids")


def _search_texts_of(report: EvaluationReport, columns: ReportColumns) -> list[str]:
    """:func:`search_texts` from the report's columns: evidence labels from each case's expected
    evidence, notes once per distinct score metadata; a case whose evidence is named only
    in score metadata is read as a record."""
    frames = report.frames()
    n = len(report.case_results)
    metadata = columns.column("scores", "metadata").combine_chunks().dictionary_encode()
    notes = [score_notes(md)[0] for md in metadata.dictionary.to_pylist()]
    named = [
        any(k in parsed(md) for k in _SCORE_EVIDENCE_KEYS) for md in metadata.dictionary.to_pylist()
    ]
    codes = metadata.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    rows = columns.numpy("scores", "row").astype(np.int64)
    per_row: list[list[str]] = [[] for _ in range(n)]
    scored_named = np.zeros(n, dtype=bool)
    for row, code in zip(rows.tolist(), codes.tolist(), strict=True):
        if code >= 0:
            if notes[code]:
                per_row[row].append(notes[code])
            scored_named[row] |= named[code]
    case_ids = frames.case_column("case_id").tolist()
    queries = frames.case_column("query").tolist()
    out: list[str] = []
    records: list[int] = []
    for row, text in enumerate(columns.column("cases", "metadata").to_pylist()):
        expected = expected_in(text)
        evidence = expected.evidence if expected is not None else ()
        if not evidence and scored_named[row]:
            records.append(row)
        labels = [item.label() for item in evidence]
        parts = [case_ids[row], queries[row], *labels, *per_row[row]]
        out.append("\n".join(str(p) for p in parts if p).casefold())
    for row, record in zip(records, records_at(report, np.asarray(records)), strict=True):
        out[row] = _search_text(record)
    return out


def unique(items: Iterable[str]) -> list[str]:
    """Items in first-seen order without repeats."""
    return list(dict.fromkeys(items))


__all__ = [
    "DEFAULT_MAX_CASES",
    "case_labels",
    "embedded_rows",
    "encode_details",
    "encode_preview",
    "encode_report",
    "informative_order",
    "search_texts",
]
