"""The compact, columnar data the browser explorers run on (synced once from Python).

``encode_report(report)`` turns a report's case results into plain JSON columns: every text
(query, answer, evidence label, result chunk, judge reason, metadata) is stored ONCE in a
string table and referenced by index, long texts are cut to ``max_text`` characters with
their full length kept, numbers are rounded to what the page shows. Above ``max_cases`` case
results the most informative ones are embedded first (query errors, failed verdicts, the
lowest headline scores, the ``priority`` case ids a comparison asks for) and ``left_out`` says
how many were not, so a page can say so; nothing is dropped silently.

The per-case pieces come from the frames API (``case_evidence``, ``case_results``,
``expected_of``), so what the page shows is what ``report.frames()`` says.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from heta_notebook.analysis.frames import case_evidence, case_results, expected_of
from heta_notebook.analysis.headline import headline_score
from heta_notebook.evaluators.matching import match_evidence
from heta_notebook.schema import REASON_KEYS, EvaluationCaseResult, EvaluationReport

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


def score_note(score: Any) -> str | None:
    """What explains a score: the judge's reason, an evaluator error or a skip reason."""
    if score.status == "error":
        error = score.metadata.get("error")
        return str(error.get("message") if isinstance(error, dict) else error)
    if score.status == "skipped":
        return str(score.metadata.get("skip_reason") or "skipped")
    return score.reason


def case_labels(result: EvaluationCaseResult) -> list[str]:
    """The case's labels (slices) as ``key=value`` strings (``metadata["labels"]``)."""
    labels = result.metadata.get("labels")
    if isinstance(labels, dict):
        return [f"{k}={v}" for k, v in labels.items()]
    if isinstance(labels, (list, tuple)):
        return [str(v) for v in labels]
    return []


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


def encode_report(
    report: EvaluationReport,
    *,
    max_cases: int | None = DEFAULT_MAX_CASES,
    priority: Sequence[str] = (),
    max_text: int = MAX_TEXT,
) -> dict[str, Any]:
    """The columnar payload of one report for the browser explorers (see module docstring)."""
    strings = StringTable(max_text)
    rows = embedded_rows(report, max_cases, priority)
    names = list(report.frames().score_names)
    cols: dict[str, list[Any]] = {
        k: []
        for k in (
            "case_id",
            "mode",
            "query",
            "answer",
            "abstained",
            "expected",
            "expects_abstention",
            "latency",
            "error",
            "labels",
            "evidence",
            "results",
            "trace",
            "response_meta",
        )
    }
    scores = {name: {"v": [], "s": [], "p": [], "r": [], "m": []} for name in names}
    for result in _records(report, rows):
        _encode_case(result, strings, cols)
        _encode_scores(result, strings, scores)
    return {
        "version": FORMAT_VERSION,
        "label": report.label,
        "report_id": report.report_id,
        "n_total": len(report.case_results),
        "rows": rows.tolist(),
        "left_out": len(report.case_results) - len(rows),
        "max_cases": max_cases,
        "modes": list(report.frames().modes),
        "score_names": names,
        "headline": headline_score(names),
        "cases": cols,
        "scores": scores,
        "strings": strings.texts,
        "full_length": strings.full_length,
    }


def _records(report: EvaluationReport, rows: np.ndarray) -> Iterable[EvaluationCaseResult]:
    """The records at the ascending ``rows``: a columnar report builds them one row group at
    a time (indexing one by one re-reads a group per record)."""
    take = getattr(report.case_results, "take", None)
    if take is not None:
        return take(rows)
    return (report.case_results[int(row)] for row in rows)


def answer_state(result: EvaluationCaseResult) -> int:
    """1 when the recipe's answer step abstained, 0 when there was no answer step."""
    meta = result.response.metadata.get("answer") if result.response is not None else None
    return int(isinstance(meta, dict) and bool(meta.get("abstained")))


def expects_abstention(expected: Any) -> int:
    """1 for a case that expects an abstention (SQuAD 2.0's unanswerable questions)."""
    return int(expected is not None and bool(expected.metadata.get("abstain")))


def _encode_case(result: EvaluationCaseResult, s: StringTable, cols: dict[str, list]) -> None:
    expected = expected_of(result)
    response = result.response
    matches = None  # matched once, shown twice (evidence table and results)
    if expected is not None and expected.evidence and response is not None:
        matches = match_evidence(expected.evidence, response.results)
    cols["case_id"].append(s.add(result.case_id))
    cols["mode"].append(s.add(result.query_mode))
    cols["query"].append(s.add(result.query))
    cols["answer"].append(s.add(response.answer if response is not None else None))
    cols["abstained"].append(answer_state(result))
    cols["expected"].append([s.add(a) for a in (expected.answers if expected else ())])
    cols["expects_abstention"].append(expects_abstention(expected))
    cols["latency"].append(_num(result.latency_ms, 1))
    error = result.error
    text = (
        f"{error.error_type}: {error.message}" + (" (retryable)" if error.retryable else "")
        if error is not None
        else None
    )
    cols["error"].append(s.add(text))
    cols["labels"].append([s.add(label) for label in case_labels(result)])
    cols["evidence"].append(
        [
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
    )
    cols["results"].append(
        [
            [
                s.add(r["document_id"]),
                _num(r["score"]),
                s.add(r["result_id"]),
                s.add(r["text"]),
                _num(r["relevance"]),
                int(r["relevant"]),
                [s.add(m) for m in r["matched_evidence"]],
            ]
            for r in case_results(result, expected, matches=matches)
        ]
    )
    trace = response.trace if response is not None else ()
    cols["trace"].append(
        s.add(
            _json_text(
                [
                    {
                        "stage": e.stage,
                        "message": e.message,
                        **({"metadata": e.metadata} if e.metadata else {}),
                    }
                    for e in trace
                ]
            ),
            MAX_META,
        )
    )
    cols["response_meta"].append(
        s.add(_json_text(response.metadata if response is not None else None), MAX_META)
    )


def _encode_scores(result: EvaluationCaseResult, s: StringTable, scores: dict) -> None:
    by_name = {score.name: score for score in result.scores}
    for name, col in scores.items():
        score = by_name.get(name)
        if score is None:
            col["v"].append(None)
            col["s"].append(-1)
            col["p"].append(None)
            col["r"].append(-1)
            col["m"].append(-1)
            continue
        value = score.value
        if isinstance(value, str):  # a text-valued score: kept sparsely, by position
            col.setdefault("t", {})[str(len(col["v"]))] = s.add(value)
        col["v"].append(_num(value) if not isinstance(value, bool) else float(value))
        col["s"].append(STATUS_CODES[score.status])
        col["p"].append(None if score.passed is None else int(score.passed))
        col["r"].append(s.add(score_note(score)))
        meta = {k: v for k, v in score.metadata.items() if k not in REASON_KEYS}
        col["m"].append(s.add(_json_text(meta), MAX_META))


def payload_size(payload: dict[str, Any]) -> int:
    """Bytes of the payload as compact JSON (what a saved notebook stores)."""
    return len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def search_texts(report: EvaluationReport) -> list[str]:
    """Per report row, the lower-cased text the explorers search: case id, query, evidence
    labels, judge reasons (and evaluator errors / skip reasons)."""
    out = []
    for r in report.case_results:
        parts: list[Any] = [r.case_id, r.query]
        parts += [e["label"] for e in case_evidence(r) if e["label"]]
        parts += [score_note(s) for s in r.scores]
        out.append("\n".join(str(p) for p in parts if p).casefold())
    return out


def unique(items: Iterable[str]) -> list[str]:
    """Items in first-seen order without repeats."""
    return list(dict.fromkeys(items))


__all__ = [
    "DEFAULT_MAX_CASES",
    "StringTable",
    "case_labels",
    "embedded_rows",
    "encode_report",
    "informative_order",
    "payload_size",
    "score_note",
    "search_texts",
]
