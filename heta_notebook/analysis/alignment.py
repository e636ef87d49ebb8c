"""Line reports up case by case: one score matrix (cases × variants) per score name.

A *variant* is one report label under one query mode. Cases are aligned on
``(case_id, query_mode)``: the row of a matrix is a case id, the column a variant, so two
variants of the same mode pair up case by case, and two modes of one report pair up on
the case ids they share. Cells are NaN where the case is missing from a variant, its query
failed, or the score was skipped or failed (such a score never enters a mean): NaN never enters a paired test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook.evaluators.aggregation import ERROR, SCORED, SKIPPED
from heta_notebook.schema import EvaluationReport

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
    queries: dict[str, str] = field(default_factory=dict)
    rows: dict[tuple[int, str], int] = field(default_factory=dict)
    counts: dict[str, np.ndarray] = field(default_factory=dict)  # n_skipped / n_error

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
    """Build the aligned matrices of several reports (one pass over their case results)."""
    variants, cases = _case_table(reports)
    long = _long_scores(reports)
    case_codes, case_ids = pd.factorize(cases["case_id"])
    case_ids = np.asarray(case_ids, dtype=object)
    score_case_codes = np.repeat(case_codes, long["per_case"])  # scores follow case order
    long["variant"] = np.repeat(cases["variant"], long["per_case"])
    all_names = long["names"]
    text_scores = _text_only(long, all_names)
    names = [n for n in all_names if n not in text_scores]
    keep = np.isin(long["score"], [all_names.index(n) for n in names])
    remap = np.full(len(all_names) + 1, -1)
    remap[[all_names.index(n) for n in names]] = np.arange(len(names))
    s_codes, c_codes, v_codes = (
        remap[long["score"][keep]],
        score_case_codes[keep],
        long["variant"][keep],
    )
    shape = (len(names), len(case_ids), len(variants))
    values, passed = np.full(shape, np.nan), np.full(shape, np.nan)
    values[s_codes, c_codes, v_codes] = long["value"][keep]
    passed[s_codes, c_codes, v_codes] = long["passed"][keep]
    present = np.zeros((len(case_ids), len(variants)), dtype=bool)
    failed = np.zeros_like(present)
    present[case_codes, cases["variant"]] = True
    failed[case_codes, cases["variant"]] = cases["failed"]
    counts = _status_counts(long, keep, s_codes, v_codes, shape, failed)
    rows = dict(
        zip(zip(cases["variant"], cases["case_id"], strict=True), cases["row"], strict=True)
    )
    queries = dict(zip(cases["case_id"], cases["query"], strict=True))
    return Aligned(
        variants,
        case_ids,
        names,
        values,
        passed,
        present,
        failed,
        text_scores,
        queries,
        rows,
        counts,
    )


def _status_counts(long, keep, s_codes, v_codes, shape, failed) -> dict[str, np.ndarray]:
    """Skipped and error counts per score × variant; a failed query is an error for each score."""
    out = {}
    for status, code in (("n_skipped", SKIPPED), ("n_error", ERROR)):
        hit = long["status"][keep] == code
        flat = s_codes[hit] * shape[2] + v_codes[hit]
        out[status] = np.bincount(flat, minlength=shape[0] * shape[2]).reshape(shape[0], shape[2])
    reported = np.zeros((shape[0], shape[2]), dtype=bool)
    reported[s_codes, v_codes] = True
    out["n_error"] = out["n_error"] + reported * failed.sum(axis=0)[None, :]
    return out


def _long_scores(reports: Mapping[str, EvaluationReport]) -> dict[str, Any]:
    """Every score of every report as flat arrays (score code, value, passed, status, ...).

    Scores are listed in case-result order; ``per_case`` says how many each result has.
    Read from each report's cached frames (``report.frames().score_arrays()``), so a
    comparison shares the extraction with the card and plots (and a columnar report is
    read from its columns); skipped/failed scores get NaN values and a status code.
    """
    names: dict[str, int] = {}
    parts: dict[str, list[Any]] = {
        k: [] for k in ("per_case", "score", "value", "text", "passed", "status")
    }
    for report in reports.values():
        cols = report.frames().score_arrays()
        remap = np.asarray([names.setdefault(n, len(names)) for n in cols["names"]], np.int64)
        status = cols["status"].astype(np.int8)
        passed = cols["passed"].astype(float)
        passed[(cols["passed"] == 2) | (status != SCORED)] = np.nan
        texts = cols["texts"]
        parts["per_case"].append(np.bincount(cols["rows"], minlength=len(report.case_results)))
        parts["score"].append(remap[cols["name_codes"]] if len(remap) else np.zeros(0, np.int64))
        parts["value"].append(cols["values"])
        parts["text"].append(
            np.fromiter((t is not None for t in texts), bool, len(texts))
            if any(texts)
            else np.zeros(len(texts), bool)
        )
        parts["passed"].append(passed)
        parts["status"].append(status)
    empty = {
        "per_case": np.int64,
        "score": np.int64,
        "value": float,
        "text": bool,
        "passed": float,
        "status": np.int8,
    }
    out = {k: np.concatenate(v) if v else np.zeros(0, empty[k]) for k, v in parts.items()}
    out["per_case"] = out["per_case"].astype(np.int64)
    out["score"] = out["score"].astype(np.int64)
    return {**out, "names": list(names)}


def _case_table(reports: Mapping[str, EvaluationReport]) -> tuple[list[Variant], dict[str, Any]]:
    """One row per case result (case id, variant, failed?, query, row) and the variants."""
    variants: list[Variant] = []
    parts: dict[str, list[Any]] = {k: [] for k in ("case_id", "variant", "failed", "query", "row")}
    for label, report in reports.items():
        frames = report.frames()  # case columns come from the shared, cached extraction
        modes = frames.case_column("query_mode").tolist()
        codes = {
            m: len(variants) + i for i, m in enumerate(dict.fromkeys([*report.query_modes, *modes]))
        }
        variants += [Variant(label, m) for m in codes]
        parts["variant"].append(np.fromiter(map(codes.__getitem__, modes), np.int64, len(modes)))
        parts["case_id"] += frames.case_column("case_id").tolist()
        parts["query"] += frames.case_column("query").tolist()
        failed = ~frames.case_column("has_response")
        failed &= np.fromiter(
            (e is not None for e in frames.case_column("error")), bool, len(modes)
        )
        parts["failed"] += failed.tolist()
        parts["row"].append(np.arange(len(modes)))
    table = {
        "case_id": np.asarray(parts["case_id"], dtype=object),
        "query": np.asarray(parts["query"], dtype=object),
        "failed": np.asarray(parts["failed"], dtype=bool),
        "variant": np.concatenate(parts["variant"]) if parts["variant"] else np.zeros(0, int),
        "row": np.concatenate(parts["row"]) if parts["row"] else np.zeros(0, int),
    }
    return variants, table


def _text_only(long: dict[str, Any], names: list[str]) -> list[str]:
    """Scores that never carry a number (labels such as 'good'/'bad'): not compared."""
    numeric = set(np.unique(long["score"][~np.isnan(long["value"])]).tolist())
    has_text = set(np.unique(long["score"][long["text"]]).tolist())
    return [n for i, n in enumerate(names) if i in has_text and i not in numeric]


__all__ = ["SEPARATOR", "Aligned", "Variant", "align"]
