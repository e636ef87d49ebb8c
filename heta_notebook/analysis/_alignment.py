"""Line reports up case by case: one score matrix (cases × variants) per score name.

A *variant* is one report label under one query mode. Cases are aligned on
``(case_id, query_mode)``: the row of a matrix is a case id, the column a variant, so two
variants of the same mode pair up case by case, and two modes of one report pair up on
the case ids they share. Cells are NaN where the case is missing from a variant, its query
failed, or the score was skipped or failed (such a score never enters a mean): NaN never enters a paired test.

Cases pair only within one benchmark (name, version, split): when the reports come from
several benchmarks, each benchmark's cases get their own rows (``Aligned.benchmarks`` says
whose), so case "1" of one dataset can never be paired with case "1" of another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook.schema._records import EvaluationReport
from heta_notebook.schema._status import ERROR, SCORED, SKIPPED

SEPARATOR = " · "


@dataclass(frozen=True, order=True)
class Variant:
    """One column of a comparison: a report label under one query mode."""

    report: str
    mode: str

    @property
    def name(self) -> str:
        """``"label · mode"``, the variant's column name."""
        return f"{self.report}{SEPARATOR}{self.mode}"

    def __str__(self) -> str:
        return self.name


@dataclass
class Aligned:
    """Score matrices of several reports on one shared case index."""

    variants: list[Variant]
    case_ids: np.ndarray
    score_names: list[str]
    values: np.ndarray  # scores × cases × variants, float (NaN = no paired value)
    passed: np.ndarray  # scores × cases × variants, 1.0 / 0.0 / NaN
    present: np.ndarray  # cases × variants: a case result exists
    failed: np.ndarray  # cases × variants: the query itself failed
    text_scores: list[str] = field(default_factory=list)
    queries: Mapping[str, str] = field(default_factory=dict)  # case id → query (built lazily)
    rows: Mapping[tuple[int, str], int] = field(default_factory=dict)  # (variant, case id) → row
    counts: dict[str, np.ndarray] = field(default_factory=dict)  # n_skipped / n_error
    benchmarks: np.ndarray | None = None  # per case row its benchmark key (None: only one)

    def rows_of(self, benchmark: str) -> np.ndarray:
        """Mask over the case rows that belong to ``benchmark`` (all rows with one benchmark)."""
        if self.benchmarks is None:
            return np.ones(len(self.case_ids), dtype=bool)
        return self.benchmarks == benchmark

    def variant_index(self, variant: Variant | str) -> int:
        """Position of a variant given as a Variant or its ``"label · mode"`` name."""
        name = variant.name if isinstance(variant, Variant) else str(variant)
        for i, v in enumerate(self.variants):
            if v.name == name:
                return i
        known = ", ".join(v.name for v in self.variants)
        raise KeyError(f"no variant {name!r} in this comparison (variants: {known})")

    def score_index(self, score: str) -> int:
        """Position of a score name; a clear KeyError lists the known ones."""
        try:
            return self.score_names.index(score)
        except ValueError:
            raise KeyError(
                f"no numeric score {score!r} in this comparison "
                f"(scores: {', '.join(self.score_names)})"
            ) from None


def align(reports: Mapping[str, EvaluationReport]) -> Aligned:
    """Build the aligned matrices of several reports, scattering each report's flat score
    columns (``frames().score_arrays()``, shared with the card and plots) straight into them:
    one vectorised pass per report, no long table of every score."""
    variants, cases = _case_table(reports)
    case_codes, case_ids = cases["case_code"], cases["case_ids"]
    columns = [report.frames().score_arrays() for report in reports.values()]
    all_names = list(dict.fromkeys(n for cols in columns for n in cols["names"]))
    text_scores = _text_only(columns, all_names)
    names = [n for n in all_names if n not in text_scores]
    shape = (len(names), len(case_ids), len(variants))
    values, passed = np.full(shape, np.nan), np.full(shape, np.nan)
    counts = {k: np.zeros((shape[0], shape[2]), np.int64) for k in ("n_skipped", "n_error")}
    reported = np.zeros((shape[0], shape[2]), dtype=bool)
    position = {n: i for i, n in enumerate(names)}
    for k, cols in enumerate(columns):
        at, size = cases["offset"][k], cases["size"][k]
        remap = np.asarray([position.get(n, -1) for n in cols["names"]] or [-1], np.int64)
        case_of_row, variant_of_row = case_codes[at : at + size], cases["variant"][at : at + size]
        for part in _slices(len(cols["rows"])):  # bounded temporaries on huge reports
            s_codes = remap[cols["name_codes"][part]]
            keep = np.flatnonzero(s_codes >= 0) if (s_codes < 0).any() else slice(None)
            s_codes, rows = s_codes[keep], cols["rows"][part][keep]
            status = cols["status"][part][keep]
            verdict = cols["passed"][part][keep]
            v_codes = variant_of_row[rows]
            cell = (s_codes * shape[1] + case_of_row[rows]) * shape[2] + v_codes
            values.reshape(-1)[cell] = cols["values"][part][keep]
            passed.reshape(-1)[cell] = np.where(
                (verdict == 2) | (status != SCORED), np.nan, verdict
            )
            pair = s_codes * shape[2] + v_codes
            reported.reshape(-1)[pair] = True
            for key, code in (("n_skipped", SKIPPED), ("n_error", ERROR)):
                hit = pair[status == code]
                counts[key] += np.bincount(hit, minlength=reported.size).reshape(reported.shape)
    present = np.zeros((len(case_ids), len(variants)), dtype=bool)
    failed = np.zeros_like(present)
    present[case_codes, cases["variant"]] = True
    failed[case_codes, cases["variant"]] = cases["failed"]
    counts["n_error"] = counts["n_error"] + reported * failed.sum(axis=0)[None, :]
    return Aligned(
        variants,
        case_ids,
        names,
        values,
        passed,
        present,
        failed,
        text_scores,
        _Lazy(lambda: _queries(reports)),
        _Lazy(lambda: _rows(reports)),
        counts,
        cases["benchmarks"],
    )


_SLICE = 1 << 18  # scores scattered per step (temporaries ~2 MB each)


def _slices(n: int) -> list[slice]:
    return [slice(i, min(i + _SLICE, n)) for i in range(0, n, _SLICE)] or [slice(0, 0)]


class _Lazy(Mapping):
    """A read-only dict built on first use (per-case lookups most comparisons never make)."""

    def __init__(self, build: Callable[[], dict]) -> None:
        self._build = build
        self._data: dict | None = None

    @property
    def data(self) -> dict:
        if self._data is None:
            self._data = self._build()
        return self._data

    def __getitem__(self, key: Any) -> Any:
        return self.data[key]

    def __iter__(self) -> Iterator:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def _queries(reports: Mapping[str, EvaluationReport]) -> dict[str, str]:
    """Case id → query (the last report's wins), from the dictionary-coded columns."""
    out: dict[str, str] = {}
    for report in reports.values():
        frames = report.frames()
        ids, queries = frames.case_codes("case_id"), frames.case_codes("query")
        out.update(zip(_decode(*ids), _decode(*queries), strict=True))
    return out


def _rows(reports: Mapping[str, EvaluationReport]) -> dict[tuple[int, str], int]:
    """(variant position, case id) → row of the case result in its report."""
    _, cases = _case_table(reports)
    rows = np.concatenate([np.arange(n) for n in cases["size"]] or [np.zeros(0, int)])
    keys = zip(
        cases["variant"].tolist(), cases["case_ids"][cases["case_code"]].tolist(), strict=True
    )
    return dict(zip(keys, rows.tolist(), strict=True))


def _decode(codes: np.ndarray, values: np.ndarray) -> list[Any]:
    """Codes back to values (-1 → None), sharing the value objects."""
    return np.append(values, [None])[codes].tolist()


def _case_table(reports: Mapping[str, EvaluationReport]) -> tuple[list[Variant], dict[str, Any]]:
    """Per case result (all reports in order): its case code into ``case_ids`` (first-seen
    order), variant and failed?; ``offset`` and ``size`` say where each report's rows are.
    Case ids and modes are read as dictionary codes: no string per case result."""
    variants: list[Variant] = []
    parts: dict[str, list[Any]] = {k: [] for k in ("ids", "uniques", "variant", "failed")}
    keys = [report.benchmark.key for report in reports.values()]
    several = len(set(keys)) > 1  # then a case row is (benchmark, case id): never shared
    for key, (label, report) in zip(keys, reports.items(), strict=True):
        frames = report.frames()  # case columns come from the shared, cached extraction
        mode_codes, seen = frames.case_codes("query_mode")
        codes = {
            m: len(variants) + i
            for i, m in enumerate(dict.fromkeys([*report.query_modes, *seen.tolist()]))
        }
        variants += [Variant(label, m) for m in codes]
        lookup = np.asarray([codes[m] for m in seen.tolist()] or [0], np.int64)
        parts["variant"].append(lookup[mode_codes])
        ids, uniques = frames.case_codes("case_id")
        parts["ids"].append(ids)
        parts["uniques"].append(_qualified(key, uniques) if several else uniques)
        failed = ~frames.case_column("has_response").astype(bool)
        failed &= pd.notna(frames.case_column("error"))
        parts["failed"].append(failed)
    sizes = np.asarray([len(ids) for ids in parts["ids"]], np.int64)
    global_codes, case_ids = pd.factorize(np.concatenate([np.zeros(0, object), *parts["uniques"]]))
    benchmarks = None
    if several:  # split the qualified keys back into benchmark and case id
        split = [key.split(_QUALIFIER, 1) for key in case_ids.tolist()]
        benchmarks = np.asarray([b for b, _ in split], dtype=object)
        case_ids = np.asarray([c for _, c in split], dtype=object)
    starts = np.concatenate([[0], np.cumsum([len(u) for u in parts["uniques"]])]).astype(np.int64)
    case_code = [
        np.append(global_codes[starts[k] : starts[k + 1]], -1)[ids]
        for k, ids in enumerate(parts["ids"])
    ]
    table = {
        "case_code": np.concatenate([np.zeros(0, np.int64), *case_code]),
        "case_ids": np.asarray(case_ids, dtype=object),
        "failed": np.concatenate([np.zeros(0, bool), *parts["failed"]]).astype(bool),
        "variant": np.concatenate([np.zeros(0, np.int64), *parts["variant"]]),
        "benchmarks": benchmarks,
        "size": sizes,
        "offset": np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64),
    }
    return variants, table


_QUALIFIER = "\x1f"  # joins benchmark key and case id; appears in neither


def _qualified(benchmark: str, uniques: np.ndarray) -> np.ndarray:
    """Case ids made unique per benchmark (``key␟id``), so two benchmarks never share a row."""
    return np.asarray([f"{benchmark}{_QUALIFIER}{c}" for c in uniques.tolist()], dtype=object)


def _text_only(columns: list[dict[str, Any]], names: list[str]) -> list[str]:
    """Scores that never carry a number (labels such as 'good'/'bad'): not compared."""
    if not any(cols.get("has_text", True) for cols in columns):
        return []  # no text value anywhere
    numeric: set[str] = set()
    has_text: set[str] = set()
    for cols in columns:
        local = cols["names"]
        counts = np.bincount(cols["name_codes"][~np.isnan(cols["values"])], minlength=len(local))
        numeric.update(n for n, c in zip(local, counts.tolist(), strict=False) if c)
        if cols.get("has_text", True):
            texts = cols["texts"]
            flags = np.fromiter((t is not None for t in texts), bool, len(texts))
            hits = np.bincount(cols["name_codes"][flags], minlength=len(local))
            has_text.update(n for n, c in zip(local, hits.tolist(), strict=False) if c)
    return [n for n in names if n in has_text and n not in numeric]


__all__ = ["SEPARATOR", "Aligned", "Variant", "align"]
