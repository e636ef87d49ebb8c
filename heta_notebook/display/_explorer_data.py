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
fetches other details with :func:`encode_details`. On records the details come from the
frames API (``case_evidence``, ``case_results``, ``expected_of``); on a columnar report
from its tables with the same rules (``matching``), giving the same payload.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook._util.gc import paused_gc
from heta_notebook.analysis._frames import case_evidence, case_results, expected_of
from heta_notebook.analysis._headline import headline_score
from heta_notebook.benchmarks._texts import shown_text
from heta_notebook.evaluators import _matching as matching
from heta_notebook.evaluators._matching import match_evidence
from heta_notebook.schema._records import (
    EvaluationCaseResult,
    EvaluationError,
    EvaluationReport,
)
from heta_notebook.schema._status import REASON_KEYS, SKIPPED, STATUSES, status_and_reason

FORMAT_VERSION = 1
DEFAULT_MAX_CASES = 20_000
MAX_TEXT = 600  # characters of a result chunk / answer / reason kept (the length is shown)
MAX_META = 1_500  # characters of a JSON metadata block kept
STATUS_CODES = {"scored": 0, "skipped": 1, "error": 2}


class StringTable:
    """Texts stored once, referenced by position; long texts cut with their length recorded."""

    def __init__(self, limit: int = MAX_TEXT) -> None:
        self.limit = limit
        self.texts: list[str] = []
        self.full_length: dict[str, int] = {}
        self._index: dict[str, int] = {}

    def add(self, text: Any, limit: int | None = None) -> int:
        """Index of ``text`` (-1 for None / empty)."""
        if text is None or text == "":
            return -1
        text = str(text)
        found = self._index.get(text)
        if found is not None:
            return found
        cut = limit if limit is not None else self.limit
        index = len(self.texts)
        self._index[text] = index
        if len(text) > cut:
            self.full_length[str(index)] = len(text)
            text = text[: cut - 1] + "…"
        self.texts.append(text)
        return index


def _num(value: Any, digits: int = 4) -> float | None:
    """A rounded finite float for the page (None for missing / text values)."""
    if value is None or isinstance(value, str):
        return None
    value = float(value)
    return round(value, digits) if math.isfinite(value) else None


def _json_text(data: Any) -> str | None:
    return json.dumps(data, default=str, ensure_ascii=False, sort_keys=True) if data else None


# Response metadata the explorers already show in their own place: each evidence item's miss
# class and deep rank (its badge) and its rank at every recorded stage (and the trace).
_SHOWN_ELSEWHERE = frozenset(("deep_ranks", "stages"))


def _response_meta(response: Any) -> str | None:
    """The response's metadata block for the detail pane, without what is shown elsewhere."""
    if response is None or not response.metadata:
        return None
    return _json_text({k: v for k, v in response.metadata.items() if k not in _SHOWN_ELSEWHERE})


def score_note(score: Any) -> str | None:
    """What explains a score: the judge's reason, an evaluator error or a skip reason."""
    return metadata_note(score.metadata)


def metadata_note(metadata: dict[str, Any]) -> str | None:
    """:func:`score_note` from a score's metadata (its status and reason come from it)."""
    code, reason = status_and_reason(metadata)
    return reason or ("skipped" if code == SKIPPED else None)


def case_labels(result: EvaluationCaseResult) -> list[str]:
    """The case's labels (slices) as ``key=value`` strings (``metadata["labels"]``)."""
    return _labels_of(result.metadata)


def informative_order(report: EvaluationReport, priority: Sequence[str] = ()) -> np.ndarray:
    """Report rows, most informative first: ``priority`` case ids, query errors, failed
    verdicts, then the lowest headline score; ties in report order.

    Read from the report's frames (the case columns and the flat score arrays), so no
    record is built: on a columnar report this is a few vectorised passes."""
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


INDEX_COLUMNS = ("case_id", "mode", "query", "latency", "error", "labels")
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
    from the tables of a columnar report, else from records (the same payload). A case without details holds ``null`` in every detail column; the page
    asks for them (:func:`encode_details`) or says they are not embedded."""
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
    _details_into(report, wanted, strings, cols, scores, [position[r] for r in wanted.tolist()])
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
    """A first page at once for a large columnar report: the index of the report rows
    ``rows`` only (read from the row groups holding them, not whole columns), no details,
    and ``preview`` saying how many case results the full payload will hold."""
    columnar = report.case_results.columnar  # type: ignore[attr-defined]
    strings = StringTable()
    picked = np.unique(np.asarray(rows, dtype=np.int64))
    names = list(report.frames().score_names)
    cases = columnar.read_rows("cases", picked, PREVIEW_CASE_COLUMNS, one_per_row=True)
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
    score_rows = columnar.read_rows("scores", picked, PREVIEW_SCORE_COLUMNS, one_per_row=False)
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
        _details_into(report, wanted, strings, cols, scores, list(range(len(wanted))))
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
    flat score arrays (on a columnar report: from the tables, no record built)."""
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
    results = report.case_results
    columnar = getattr(results, "columnar", None)
    if columnar is not None:  # a stored report: its scores' names and metadata, no records
        return _stored_judge_scores(columnar, min(sample, len(results)))
    found = {
        s.name
        for r in (results[i] for i in range(min(sample, len(results))))
        for s in r.scores
        if "prompt_version" in s.metadata
    }
    return sorted(found)


def _stored_judge_scores(columnar: Any, sample: int) -> list[str]:
    """:func:`judge_scores` from the score rows of a stored report's first ``sample`` case
    results (the row groups holding them), reading only their names and metadata."""
    if sample <= 0:
        return []
    rows = np.arange(sample, dtype=np.int64)
    table = columnar.read_rows("scores", rows, ("row", "name", "metadata"), one_per_row=False)
    names, metadata = table.column("name").to_pylist(), table.column("metadata").to_pylist()
    found = {
        name
        for name, meta in zip(names, metadata, strict=True)
        if meta and "prompt_version" in json.loads(meta)
    }
    return sorted(found)


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
    columnar = getattr(report.case_results, "columnar", None)
    if columnar is not None:
        raw = columnar.column("cases", "error_json").take(np.asarray(rows[erred], dtype=np.int64))
        errors = [EvaluationError.model_validate_json(text) for text in raw.to_pylist()]
    else:
        errors = [report.case_results[int(rows[i])].error for i in erred]  # type: ignore[misc]
    for i, error in zip(erred, errors, strict=True):
        out[i] = error_text(error)
    return out


def error_text(error: Any) -> str | None:
    """How the explorers show a query error."""
    if error is None:
        return None
    return f"{error.error_type}: {error.message}" + (" (retryable)" if error.retryable else "")


def row_labels(report: EvaluationReport, rows: np.ndarray) -> list[list[str]]:
    """Each row's labels (``case_labels``); a columnar report parses only the case metadata
    that names labels."""
    columnar = getattr(report.case_results, "columnar", None)
    if columnar is None:
        return [case_labels(report.case_results[int(row)]) for row in rows.tolist()]
    raw = columnar.column("cases", "metadata").take(np.asarray(rows, dtype=np.int64)).to_pylist()
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


def _details_into(
    report: EvaluationReport,
    rows: np.ndarray,
    s: StringTable,
    cols: dict[str, list],
    scores: dict,
    at: list[int],
) -> None:
    """The details of the ascending report ``rows`` into positions ``at`` of the columns: from
    the tables for a columnar report (no records, evidence matched on parsed source keys),
    else from records. Both give the same payload (tests/test_display_explorer_data.py)."""
    token = _BENCHMARK_KEY.set(report.benchmark.key)  # texts for bare ids (benchmarks._texts)
    try:
        _details_only(report, rows, s, cols, scores, at)
    finally:
        _BENCHMARK_KEY.reset(token)
    _misses_into(report, rows, s, cols, at)


_BENCHMARK_KEY: ContextVar[str | None] = ContextVar("hn_explorer_benchmark", default=None)


def _result_text(text: str | None, document_id: str | None) -> str | None:
    """A result's text, or the benchmark's (marked) for a bare id (``benchmarks._texts``)."""
    return shown_text(text, _BENCHMARK_KEY.get(), document_id)


def _details_only(
    report: EvaluationReport,
    rows: np.ndarray,
    s: StringTable,
    cols: dict[str, list],
    scores: dict,
    at: list[int],
) -> None:
    columnar = getattr(report.case_results, "columnar", None)
    if columnar is None or not len(rows):
        for i, result in zip(at, _records(report, rows), strict=True):
            _encode_details(result, s, cols, scores, i)
        return
    starts = columnar.group_start_rows("cases")
    groups = np.searchsorted(starts, rows, side="right") - 1
    if len(rows) > 1000 or len(np.unique(groups)) > 2:  # texts: one read of the column
        columnar.texts()
    where = np.asarray(at, dtype=np.int64)
    for group in np.unique(groups).tolist():
        picked = groups == group
        _ColumnarDetails(report, columnar, rows[picked]).encode(s, cols, scores, where[picked])


# past this the explorers leave miss classes out (classified from the report's columns:
# a few seconds per 100,000 case results, bench/misses.py)
MAX_MISS_CASES = 1_000_000


_MISS_CELL_COLUMNS = ("case_id", "query_mode", "miss_class", "stage", "rank", "document_rank")
_MISS_CELL_COLUMNS += ("stage_ranks",)  # type: ignore[assignment]


def miss_rows(report: EvaluationReport) -> MissRows | None:
    """Per (case id, mode), its evidence rows of ``report.misses(level="evidence")`` in item
    order (``analysis._misses``); None for a report too large to classify here."""
    if len(report.case_results) > MAX_MISS_CASES:
        return None
    return MissRows(report.frames().misses(level="evidence")[list(_MISS_CELL_COLUMNS)])


class MissRows:
    """(case id, mode) → its evidence rows as dicts, built only for the cases asked for (the
    explorers embed a page or a capped subset of a report that may hold 100,000s of rows)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        with paused_gc():  # a list per column: acyclic, no collection needs to rescan them
            self.columns = {name: frame[name].tolist() for name in frame.columns}
            groups = frame.groupby(["case_id", "query_mode"], sort=False)
            self.at = groups.indices if len(frame) else {}

    def get(self, key: tuple[str, str], default: Any = None) -> list[dict[str, Any]] | None:
        """The rows of one case result (``default`` when it has none)."""
        rows = self.at.get(key)
        if rows is None:
            return default
        return [{name: values[i] for name, values in self.columns.items()} for i in rows.tolist()]


def _miss_cell(row: dict[str, Any], s: StringTable) -> list[Any]:
    """``[class, rank, document rank, rank per stage]`` of one evidence item (a miss's rank: its
    deep rank; stages: ``"retrieve #2 → rerank –"`` for systems that record them)."""
    from heta_notebook.analysis._misses import class_label

    rank, document_rank = row["rank"], row["document_rank"]
    stages = row.get("stage_ranks") or {}
    path = " → ".join(f"{name} {'–' if r is None else f'#{r}'}" for name, r in stages.items())
    return [
        s.add(class_label(row)),
        None if pd.isna(rank) else int(rank),
        None if pd.isna(document_rank) else int(document_rank),
        s.add(path or None),
    ]


def _misses_into(
    report: EvaluationReport, rows: np.ndarray, s: StringTable, cols: dict, at: list[int]
) -> None:
    """Each detailed evidence entry gets its miss class and ranks appended (same order)."""
    by_case = miss_rows(report)
    if by_case is None:
        return
    case_ids, modes = (
        report.frames().case_column("case_id"),
        report.frames().case_column("query_mode"),
    )
    for row, i in zip(rows.tolist(), at, strict=True):
        entries, found = cols["evidence"][i], by_case.get((case_ids[row], modes[row]))
        if entries and found and len(found) == len(entries):
            cols["evidence"][i] = [
                e + _miss_cell(m, s) for e, m in zip(entries, found, strict=True)
            ]


def miss_index(report: EvaluationReport, rows: np.ndarray, s: StringTable) -> list[list[int]]:
    """Per embedded row, the distinct miss classes of its evidence (what the class filter reads)."""
    from heta_notebook.analysis._misses import FOUND, class_label

    by_case = miss_rows(report)
    if by_case is None:
        return [[] for _ in rows]
    frames = report.frames()
    case_ids, modes = frames.case_column("case_id"), frames.case_column("query_mode")
    out = []
    for row in rows.tolist():
        found = by_case.get((case_ids[row], modes[row]), [])
        labels = dict.fromkeys(class_label(m) for m in found)  # type: ignore[union-attr]
        out.append([s.add(label) for label in labels if label != FOUND])
    return out


def found_index(
    report: EvaluationReport, rows: np.ndarray, s: StringTable
) -> list[list[int]] | None:
    """Per embedded row, the labels of the expected evidence it found (``frames.evidence()``'s
    ``matched``, what ``Comparison.evidence_changes`` reads): the "found by A, missed by B"
    filters count from it for every embedded case, whether its details are loaded or not.
    None past ``MAX_MISS_CASES`` (the page then counts from loaded details and says so)."""
    if len(report.case_results) > MAX_MISS_CASES:
        return None
    frames = report.frames()
    evidence = frames.evidence()
    hit = evidence[evidence["matched"].fillna(False).astype(bool)]
    found: dict[tuple[str, str], list[str]] = {}
    for case_id, mode, label in zip(
        hit["case_id"].tolist(), hit["query_mode"].tolist(), hit["label"].tolist(), strict=True
    ):
        found.setdefault((str(case_id), str(mode)), []).append(str(label))
    case_ids, modes = frames.case_column("case_id"), frames.case_column("query_mode")
    return [
        [s.add(x) for x in dict.fromkeys(found.get((str(case_ids[r]), str(modes[r])), []))]
        for r in rows.tolist()
    ]


class _ColumnarDetails:
    """The details of some report rows (one cases row group) read from the tables.

    Per case the envelope (query, response without results, metadata) is validated as a
    record is; its results and scores stay columns. Evidence is matched with the rules of
    ``evaluators.matching`` on each distinct source once. A case the fast rules cannot
    decide (evidence with a locator or a text, evidence only in score metadata) is built as
    a record and encoded like one."""

    def __init__(self, report: EvaluationReport, columnar: Any, rows: np.ndarray) -> None:
        self.report, self.rows = report, rows
        cases, first = columnar.row_range("cases", int(rows[0]), int(rows[-1]) + 1)
        self.cases = cases.take(np.asarray(rows - first, dtype=np.int64)).to_pylist()
        self.results = _grouped(
            columnar, "results", rows, ("id", "text", "score", "source", "metadata")
        )
        self.scores = _grouped(columnar, "scores", rows, ("name", "metadata"))
        ids = [t for r in self.results.values() for t in r["text"]]
        self.texts = columnar.texts_of(ids)

    def encode(self, s: StringTable, cols: dict, scores: dict, at: np.ndarray) -> None:
        for row, case, i in zip(self.rows.tolist(), self.cases, at.tolist(), strict=True):
            record = _envelope(case, row)
            expected = expected_of(record)
            evidence = expected.evidence if expected is not None else ()
            found = self.results.get(row)
            if not self._fast(row, evidence):
                full = next(iter(_records(self.report, np.asarray([row]))))
                _encode_details(full, s, cols, scores, i)
                continue
            response = record.response
            cols["answer"][i] = s.add(response.answer if response is not None else None)
            cols["abstained"][i] = answer_state(record)
            cols["abstain_reason"][i] = s.add(abstain_reason(record))
            cols["expected"][i] = [s.add(a) for a in (expected.answers if expected else ())]
            cols["expects_abstention"][i] = expects_abstention(expected)
            hits = found if response is not None and found is not None else _NO_RESULTS
            matches, by_result = _match(evidence, hits)
            cols["evidence"][i] = [
                [
                    s.add(m[0]),
                    int(m[1]),
                    m[2],
                    s.add(m[3]),
                    _num(m[4]),
                    s.add(m[5]),
                ]
                for m in matches
            ]
            cols["results"][i] = (
                self._results(hits, evidence, by_result, s) if response is not None else []
            )
            trace = response.trace if response is not None else ()
            cols["trace"][i] = s.add(_trace_text(trace), MAX_META)
            cols["response_meta"][i] = s.add(_response_meta(response), MAX_META)
            notes = self.scores.get(row)
            by_name = dict(zip(notes["name"], notes["metadata"], strict=True)) if notes else {}
            for name, col in scores.items():
                if name not in by_name:
                    col["r"][i], col["m"][i] = -1, -1
                    continue
                note, meta = _score_notes(by_name[name])
                col["r"][i], col["m"][i] = s.add(note), s.add(meta, MAX_META)

    def _fast(self, row: int, evidence: Sequence[Any]) -> bool:
        """Whether the fast rules decide this case as ``frames.case_evidence`` would."""
        if any(item.locator or item.text is not None for item in evidence):
            return False
        if not evidence:  # case_evidence falls back to evidence named in score metadata
            notes = self.scores.get(row)
            keys = ("matched_evidence", "missing_evidence", "matched_reference_ids")
            return not notes or not any(
                _parsed(md) and any(k in _parsed(md) for k in keys) for md in notes["metadata"]
            )
        return True

    def _results(
        self, hits: dict, evidence: Sequence[Any], by_result: dict, s: StringTable
    ) -> list:
        qrels = matching.qrels_of(evidence)
        judged = bool(evidence)
        out = []
        for rid, text, score, source, metadata in zip(
            hits["id"], hits["text"], hits["score"], hits["source"], hits["metadata"], strict=True
        ):
            docs, _ = matching.stored_keys(source, metadata)
            grades = [qrels[d] for d in docs if d in qrels]
            grade = max(grades) if grades else (0 if judged else None)
            matched = by_result.get(rid, [])
            out.append(
                [
                    s.add(docs[0] if docs else None),
                    _num(score),
                    s.add(rid),
                    s.add(_result_text(self.texts[text], docs[0] if docs else None)),
                    _num(grade),
                    int(bool((grade or 0) > 0 or matched)),
                    [s.add(m) for m in matched],
                ]
            )
        return out


_NO_RESULTS: dict[str, list] = {"id": [], "text": [], "score": [], "source": [], "metadata": []}


def _grouped(columnar: Any, table: str, rows: np.ndarray, names: tuple[str, ...]) -> dict:
    """Columns ``names`` of ``table`` for the ascending report ``rows``, as lists per row."""
    data = columnar.read_rows(table, rows, ["row", *names], one_per_row=False)
    row_ids = data.column("row").to_numpy()
    if not len(row_ids):
        return {}
    values = {name: data.column(name).to_pylist() for name in names}
    bounds = np.flatnonzero(np.diff(row_ids)) + 1
    starts, stops = [0, *bounds.tolist()], [*bounds.tolist(), len(row_ids)]
    return {
        int(row_ids[a]): {name: column[a:b] for name, column in values.items()}
        for a, b in zip(starts, stops, strict=True)
    }


def _envelope(case: dict[str, Any], row: int) -> EvaluationCaseResult:
    """The record of a cases-table row without its results and scores (what the details
    read besides them), validated like ``columnar`` validates it."""
    data: dict[str, Any] = {
        **(json.loads(case["extra"]) if case["extra"] else {}),
        "case_id": case["case_id"],
        "query": case["query"],
        "query_mode": case["query_mode"],
        "latency_ms": case["latency_ms"],
        "metadata": json.loads(case["metadata"]) if case["metadata"] else {},
    }
    if case["error_json"] is not None:
        data["error"] = json.loads(case["error_json"])
    if case["has_response"]:
        response = json.loads(case["response_json"]) if case["response_json"] else {}
        data["response"] = {**response, "mode": case["response_mode"], "answer": case["answer"]}
    return EvaluationCaseResult.model_validate(data)


def _match(evidence: Sequence[Any], hits: dict) -> tuple[list[tuple], dict[str, list[str]]]:
    """The evidence rows of one case from its hit columns (``matching.match_stored``), and
    the labels each result id matched."""
    matches = matching.match_stored(evidence, hits["id"], hits["source"], hits["metadata"])
    out, by_result = [], {}  # type: ignore[var-annotated]
    for m in matches:
        out.append((m.label, m.matched, m.rank, m.result_id, m.relevance, m.matched_by))
        if m.result_id is not None:
            by_result.setdefault(m.result_id, []).append(m.label)
    return out, by_result


@functools.lru_cache(maxsize=4096)
def _parsed(metadata: str | None) -> dict[str, Any]:
    return json.loads(metadata) if metadata else {}


@functools.lru_cache(maxsize=4096)
def _score_notes(metadata: str | None) -> tuple[str | None, str | None]:
    """A score's note and its metadata block (reason keys left out), once per distinct
    metadata JSON (scores of a run repeat it)."""
    md = _parsed(metadata)
    meta = {k: v for k, v in md.items() if k not in REASON_KEYS}
    return metadata_note(md), _json_text(meta)


def _trace_text(trace: Sequence[Any]) -> str | None:
    """A response's trace as the detail pane's JSON block."""
    return _json_text(
        [
            {
                "stage": e.stage,
                "message": e.message,
                **({"metadata": e.metadata} if e.metadata else {}),
            }
            for e in trace
        ]
    )


def _records(report: EvaluationReport, rows: np.ndarray) -> Iterable[EvaluationCaseResult]:
    """The records at the ascending ``rows``: a columnar report builds them one row group at
    a time (indexing one by one re-reads a group per record)."""
    take = getattr(report.case_results, "take", None)
    if take is not None:
        return take(rows)
    return (report.case_results[int(row)] for row in rows)


def answer_state(result: EvaluationCaseResult) -> int:
    """1 when the response abstained (a system's ``Abstain`` or the answer step's), else 0
    (no answer at all: retrieval only)."""
    return int(result.response is not None and result.response.abstained)


def abstain_reason(result: EvaluationCaseResult) -> str | None:
    """Why the response abstained, as the explorers' badge says it (None unless it did)."""
    return result.response.abstain_reason if result.response is not None else None


def expects_abstention(expected: Any) -> int:
    """1 for a case that expects an abstention (SQuAD 2.0's unanswerable questions)."""
    return int(expected is not None and bool(expected.metadata.get("abstain")))


def _encode_details(
    result: EvaluationCaseResult, s: StringTable, cols: dict[str, list], scores: dict, i: int
) -> None:
    """The detail columns and score notes / metadata of one case at position ``i``."""
    expected = expected_of(result)
    response = result.response
    matches = None  # matched once, shown twice (evidence table and results)
    if expected is not None and expected.evidence and response is not None:
        matches = match_evidence(expected.evidence, response.results)
    cols["answer"][i] = s.add(response.answer if response is not None else None)
    cols["abstained"][i] = answer_state(result)
    cols["abstain_reason"][i] = s.add(abstain_reason(result))
    cols["expected"][i] = [s.add(a) for a in (expected.answers if expected else ())]
    cols["expects_abstention"][i] = expects_abstention(expected)
    cols["evidence"][i] = [
        [
            s.add(e["label"]),
            int(bool(e["matched"])),
            e["rank"],
            s.add(e["result_id"]),
            _num(e["relevance"]),
            s.add(e["matched_by"]),
        ]
        for e in case_evidence(result, expected, matches=matches)
    ]
    cols["results"][i] = [
        [
            s.add(r["document_id"]),
            _num(r["score"]),
            s.add(r["result_id"]),
            s.add(_result_text(r["text"], r["document_id"])),
            _num(r["relevance"]),
            int(r["relevant"]),
            [s.add(m) for m in r["matched_evidence"]],
        ]
        for r in case_results(result, expected, matches=matches)
    ]
    trace = response.trace if response is not None else ()
    cols["trace"][i] = s.add(_trace_text(trace), MAX_META)
    cols["response_meta"][i] = s.add(_response_meta(response), MAX_META)
    by_name = {score.name: score for score in result.scores}
    for name, col in scores.items():
        score = by_name.get(name)
        if score is None:
            col["r"][i], col["m"][i] = -1, -1
            continue
        col["r"][i] = s.add(score_note(score))
        meta = {k: v for k, v in score.metadata.items() if k not in REASON_KEYS}
        col["m"][i] = s.add(_json_text(meta), MAX_META)


def search_texts(report: EvaluationReport) -> list[str]:
    """Per report row, the lower-cased text the explorers search: case id, query, evidence
    labels, judge reasons (and evaluator errors / skip reasons)."""
    columnar = getattr(report.case_results, "columnar", None)
    if columnar is not None:
        with paused_gc():
            return _columnar_search_texts(report, columnar)
    return [_search_text(r) for r in report.case_results]


def _search_text(r: EvaluationCaseResult) -> str:
    parts: list[Any] = [r.case_id, r.query]
    parts += [e["label"] for e in case_evidence(r) if e["label"]]
    parts += [score_note(s) for s in r.scores]
    return "\n".join(str(p) for p in parts if p).casefold()


_SCORE_EVIDENCE_KEYS = ("matched_evidence", "missing_evidence", "matched_reference_ids")


def _columnar_search_texts(report: EvaluationReport, columnar: Any) -> list[str]:
    """:func:`search_texts` from the tables: evidence labels from each case's expected
    evidence, notes once per distinct score metadata; a case whose evidence is named only
    in score metadata is read as a record."""
    frames = report.frames()
    n = len(report.case_results)
    metadata = columnar.column("scores", "metadata").combine_chunks().dictionary_encode()
    notes = [_score_notes(md)[0] for md in metadata.dictionary.to_pylist()]
    named = [
        any(k in _parsed(md) for k in _SCORE_EVIDENCE_KEYS)
        for md in metadata.dictionary.to_pylist()
    ]
    codes = metadata.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    rows = columnar.numpy("scores", "row").astype(np.int64)
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
    for row, text in enumerate(columnar.column("cases", "metadata").to_pylist()):
        md = json.loads(text) if text and '"expected"' in text else {}
        expected = expected_of(SimpleNamespace(metadata=md))  # type: ignore[arg-type]
        evidence = expected.evidence if expected is not None else ()
        if not evidence and scored_named[row]:
            records.append(row)
        labels = [item.label() for item in evidence]
        parts = [case_ids[row], queries[row], *labels, *per_row[row]]
        out.append("\n".join(str(p) for p in parts if p).casefold())
    for row, record in zip(records, _records(report, np.asarray(records)), strict=True):
        out[row] = _search_text(record)
    return out


def unique(items: Iterable[str]) -> list[str]:
    """Items in first-seen order without repeats."""
    return list(dict.fromkeys(items))


__all__ = [
    "DEFAULT_MAX_CASES",
    "StringTable",
    "case_labels",
    "embedded_rows",
    "encode_details",
    "encode_preview",
    "encode_report",
    "informative_order",
    "score_note",
    "search_texts",
]
