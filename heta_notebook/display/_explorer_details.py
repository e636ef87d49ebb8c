"""The explorers' details of chosen cases (answer, expected, evidence with its miss class,
results, trace, score notes), from records or from a stored report's tables with the same
rules (``evaluators.matching``), giving the same payload (tests/test_display_explorer_data.py).
Also the index columns that need evidence: each case's miss classes and found evidence."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook._util.gc import paused_gc
from heta_notebook.analysis._case_rows import case_evidence, case_results, expected_of
from heta_notebook.benchmarks._texts import shown_text
from heta_notebook.display._explorer_cells import (
    MAX_META,
    StringTable,
    json_text,
    metadata_note,
    num,
    response_meta,
    score_note,
)
from heta_notebook.evaluators import _matching as matching
from heta_notebook.evaluators._matching import match_evidence
from heta_notebook.reports._columns import ReportColumns
from heta_notebook.schema._abstain import abstention_expected
from heta_notebook.schema._records import EvaluationCaseResult, EvaluationReport
from heta_notebook.schema._status import REASON_KEYS

__all__ = [
    "MAX_MISS_CASES",
    "abstain_reason",
    "answer_state",
    "details_into",
    "found_index",
    "miss_index",
    "miss_rows",
    "records_at",
]


def details_into(
    report: EvaluationReport,
    rows: np.ndarray,
    s: StringTable,
    cols: dict[str, list],
    scores: dict,
    at: list[int],
) -> None:
    """The details of the ascending report ``rows`` into positions ``at`` of the columns, read
    from the report's columns, in memory or stored (no records for what the fast rules
    decide, evidence matched on parsed source keys; tests/test_display_explorer_data.py)."""
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
    if not len(rows):
        return
    columns = report.frames().columns
    starts = columns.group_start_rows("cases")
    groups = np.searchsorted(starts, rows, side="right") - 1
    if len(rows) > 1000 or len(np.unique(groups)) > 2:  # texts: one read of the column
        columns.texts()
    where = np.asarray(at, dtype=np.int64)
    for group in np.unique(groups).tolist():
        picked = groups == group
        _RowDetails(report, columns, rows[picked]).encode(s, cols, scores, where[picked])


# past this the explorers leave miss classes out (classified from the report's columns:
# a few seconds per 100,000 case results, bench/misses.py)
MAX_MISS_CASES = 1_000_000
WHOLE_MISSES = 20_000  # up to this many case results, the whole report is classified at once


_MISS_CELL_COLUMNS = ("case_id", "query_mode", "miss_class", "stage", "rank", "document_rank")
_MISS_CELL_COLUMNS += ("stage_ranks", "label", "matched")  # type: ignore[assignment]


def miss_rows(report: EvaluationReport, rows: np.ndarray) -> MissRows | None:
    """Per (case id, mode), its evidence rows of ``report.misses(level="evidence")`` in item
    order (``analysis._misses``), for at least the report ``rows``; None for a report too
    large to classify here. A report past ``WHOLE_MISSES`` case results of which ``rows``
    are under half has only those rows classified (an explorer embeds a capped subset:
    their row groups only), kept with the frames for the next call on the same rows. A
    stored report whose save kept its miss rows (``ReportColumns.saved_misses``) is read,
    not classified."""
    n = len(report.case_results)
    if n > MAX_MISS_CASES:
        return None
    frames = report.frames()
    if n <= WHOLE_MISSES or 2 * len(rows) >= n:
        return frames._cached("explorer_miss_rows", lambda: _miss_rows_of(report, None))
    kept = frames._cached("explorer_miss_subset", dict)
    wanted = np.unique(np.asarray(rows, dtype=np.int64))
    if "rows" not in kept or not np.isin(wanted, kept["rows"]).all():
        kept.update(rows=wanted, found=_miss_rows_of(report, wanted))
    return kept["found"]


def _miss_rows_of(report: EvaluationReport, rows: np.ndarray | None) -> MissRows:
    from heta_notebook.analysis._misses import evidence_misses

    saved = report.frames().columns.saved_misses(rows)
    if saved is not None:  # kept by its save: the rows classifying gives (not classified again)
        return MissRows(_saved_frame(report, saved))
    if rows is None:
        frame = report.frames().misses(level="evidence")
    else:
        frame = evidence_misses(report, rows=rows)
    return MissRows(frame[list(_MISS_CELL_COLUMNS)])


def _saved_frame(report: EvaluationReport, saved: dict[str, list[Any]]) -> pd.DataFrame:
    """The saved miss rows as ``_miss_rows_of``'s frame (case ids and modes from their rows)."""
    rows = np.asarray(saved["row"], dtype=np.int64)
    frames = report.frames()
    data = {
        "case_id": frames.case_column("case_id")[rows],
        "query_mode": frames.case_column("query_mode")[rows],
        **saved,
        "stage_ranks": [None if v is None else json.loads(v) for v in saved["stage_ranks"]],
    }
    return pd.DataFrame({name: data[name] for name in _MISS_CELL_COLUMNS}, dtype=object)


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
    by_case = miss_rows(report, rows)
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

    by_case = miss_rows(report, rows)
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
    """Per embedded row, the labels of the expected evidence it found (matched by a returned
    result at any rank: ``frames.evidence()``'s ``matched``, what ``Comparison.evidence_changes``
    reads), from the miss rows the class filter reads too (a stored report's columns, no
    record per case): the "found by A, missed by B" filters count from it for every embedded
    case. None past ``MAX_MISS_CASES`` (the page then counts from loaded details and says so)."""
    by_case = miss_rows(report, rows)
    if by_case is None:
        return None
    frames = report.frames()
    case_ids, modes = frames.case_column("case_id"), frames.case_column("query_mode")
    out = []
    for row in rows.tolist():
        items = by_case.get((case_ids[row], modes[row]), [])
        found = dict.fromkeys(str(m["label"]) for m in items if m["matched"])  # type: ignore[union-attr]
        out.append([s.add(label) for label in found])
    return out


class _RowDetails:
    """The details of some report rows (one cases row group) read from the tables.

    Per case the envelope (query, response without results, metadata) is validated as a
    record is; its results and scores stay columns. Evidence is matched with the rules of
    ``evaluators.matching`` on each distinct source once. A case the fast rules cannot
    decide (evidence with a locator or a text, evidence only in score metadata) is built as
    a record and encoded like one."""

    def __init__(self, report: EvaluationReport, columns: ReportColumns, rows: np.ndarray) -> None:
        self.report, self.rows = report, rows
        cases, first = columns.row_range("cases", int(rows[0]), int(rows[-1]) + 1)
        self.cases = cases.take(np.asarray(rows - first, dtype=np.int64)).to_pylist()
        self.results = _grouped(
            columns, "results", rows, ("id", "text", "score", "source", "metadata")
        )
        self.scores = _grouped(columns, "scores", rows, ("name", "metadata"))
        ids = [t for r in self.results.values() for t in r["text"]]
        self.texts = columns.texts_of(ids)

    def encode(self, s: StringTable, cols: dict, scores: dict, at: np.ndarray) -> None:
        for row, case, i in zip(self.rows.tolist(), self.cases, at.tolist(), strict=True):
            record = _envelope(case, row)
            expected = expected_of(record)
            evidence = expected.evidence if expected is not None else ()
            found = self.results.get(row)
            if not self._fast(row, evidence):
                full = next(iter(records_at(self.report, np.asarray([row]))))
                _encode_details(full, s, cols, scores, i)
                continue
            response = record.response
            cols["answer"][i] = s.add(response.answer if response is not None else None)
            cols["abstained"][i] = answer_state(record)
            cols["abstain_reason"][i] = s.add(abstain_reason(record))
            cols["expected"][i] = [s.add(a) for a in (expected.answers if expected else ())]
            cols["expects_abstention"][i] = int(bool(abstention_expected(expected)))
            hits = found if response is not None and found is not None else _NO_RESULTS
            matches, by_result = _match(evidence, hits)
            cols["evidence"][i] = [
                [
                    s.add(m[0]),
                    int(m[1]),
                    m[2],
                    s.add(m[3]),
                    num(m[4]),
                    s.add(m[5]),
                ]
                for m in matches
            ]
            cols["results"][i] = (
                self._results(hits, evidence, by_result, s) if response is not None else []
            )
            trace = response.trace if response is not None else ()
            cols["trace"][i] = s.add(_trace_text(trace), MAX_META)
            cols["response_meta"][i] = s.add(response_meta(response), MAX_META)
            notes = self.scores.get(row)
            by_name = dict(zip(notes["name"], notes["metadata"], strict=True)) if notes else {}
            for name, col in scores.items():
                if name not in by_name:
                    col["r"][i], col["m"][i] = -1, -1
                    continue
                note, meta = score_notes(by_name[name])
                col["r"][i], col["m"][i] = s.add(note), s.add(meta, MAX_META)

    def _fast(self, row: int, evidence: Sequence[Any]) -> bool:
        """Whether the fast rules decide this case as ``frames.case_evidence`` would."""
        if any(item.locator or item.text is not None for item in evidence):
            return False
        if not evidence:  # case_evidence falls back to evidence named in score metadata
            notes = self.scores.get(row)
            keys = ("matched_evidence", "missing_evidence", "matched_reference_ids")
            return not notes or not any(
                parsed(md) and any(k in parsed(md) for k in keys) for md in notes["metadata"]
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
                    num(score),
                    s.add(rid),
                    s.add(_result_text(self.texts[text], docs[0] if docs else None)),
                    num(grade),
                    int(bool((grade or 0) > 0 or matched)),
                    [s.add(m) for m in matched],
                ]
            )
        return out


_NO_RESULTS: dict[str, list] = {"id": [], "text": [], "score": [], "source": [], "metadata": []}


def _grouped(columns: ReportColumns, table: str, rows: np.ndarray, names: tuple[str, ...]) -> dict:
    """Columns ``names`` of ``table`` for the ascending report ``rows``, as lists per row."""
    data = columns.read_rows(table, rows, ["row", *names], one_per_row=False)
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
def parsed(metadata: str | None) -> dict[str, Any]:
    return json.loads(metadata) if metadata else {}


@functools.lru_cache(maxsize=4096)
def score_notes(metadata: str | None) -> tuple[str | None, str | None]:
    """A score's note and its metadata block (reason keys left out), once per distinct
    metadata JSON (scores of a run repeat it)."""
    md = parsed(metadata)
    meta = {k: v for k, v in md.items() if k not in REASON_KEYS}
    return metadata_note(md), json_text(meta)


def _trace_text(trace: Sequence[Any]) -> str | None:
    """A response's trace as the detail pane's JSON block."""
    return json_text(
        [
            {
                "stage": e.stage,
                "message": e.message,
                **({"metadata": e.metadata} if e.metadata else {}),
            }
            for e in trace
        ]
    )


def records_at(report: EvaluationReport, rows: np.ndarray) -> Iterable[EvaluationCaseResult]:
    """The records at the ascending ``rows`` (a stored report builds them one row group at a
    time: indexing one by one re-reads a group per record)."""
    return report.frames().columns.records_at(np.asarray(rows, dtype=np.int64))


def answer_state(result: EvaluationCaseResult) -> int:
    """1 when the response abstained (a system's ``Abstain`` or the answer step's), else 0
    (no answer at all: retrieval only)."""
    return int(result.response is not None and result.response.abstained)


def abstain_reason(result: EvaluationCaseResult) -> str | None:
    """Why the response abstained, as the explorers' badge says it (None unless it did)."""
    return result.response.abstain_reason if result.response is not None else None


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
    cols["expects_abstention"][i] = int(bool(abstention_expected(expected)))
    cols["evidence"][i] = [
        [
            s.add(e["label"]),
            int(bool(e["matched"])),
            e["rank"],
            s.add(e["result_id"]),
            num(e["relevance"]),
            s.add(e["matched_by"]),
        ]
        for e in case_evidence(result, expected, matches=matches)
    ]
    cols["results"][i] = [
        [
            s.add(r["document_id"]),
            num(r["score"]),
            s.add(r["result_id"]),
            s.add(_result_text(r["text"], r["document_id"])),
            num(r["relevance"]),
            int(r["relevant"]),
            [s.add(m) for m in r["matched_evidence"]],
        ]
        for r in case_results(result, expected, matches=matches)
    ]
    trace = response.trace if response is not None else ()
    cols["trace"][i] = s.add(_trace_text(trace), MAX_META)
    cols["response_meta"][i] = s.add(response_meta(response), MAX_META)
    by_name = {score.name: score for score in result.scores}
    for name, col in scores.items():
        score = by_name.get(name)
        if score is None:
            col["r"][i], col["m"][i] = -1, -1
            continue
        col["r"][i] = s.add(score_note(score))
        meta = {k: v for k, v in score.metadata.items() if k not in REASON_KEYS}
        col["m"][i] = s.add(json_text(meta), MAX_META)
