"""Line reports up case by case: one score matrix (cases × variants) per score name.

A *variant* is one report label under one query mode. Cases are aligned on
``(case_id, query_mode)``: the row of a matrix is a case id, the column a variant, so two
variants of the same mode pair up case by case, and two modes of one report pair up on
the case ids they share. Cells are NaN where the case is missing from a variant, its query
failed, or the score was skipped or failed (contract 1): NaN never enters a paired test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook.schema import EvaluationCaseResult, EvaluationReport

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


def align(reports: Mapping[str, EvaluationReport], frames: Mapping[str, Any]) -> Aligned:
    """Build the aligned matrices from each report's long scores frame (``ReportFrames``)."""
    variants = [Variant(label, m) for label, r in reports.items() for m in _modes(r)]
    v_index = {(v.report, v.mode): i for i, v in enumerate(variants)}
    long = _long_scores(frames, v_index)
    cases = _case_table(reports, v_index)
    case_ids, case_codes = _factorize(cases["case_id"], long["case_id"])
    names = list(dict.fromkeys(long["score"].astype(str)))
    text_scores = _text_only(long, names)
    names = [n for n in names if n not in text_scores]
    long = long[long["score"].astype(str).isin(names)]
    s_codes = pd.Categorical(long["score"].astype(str), categories=names).codes
    c_codes = case_codes[1][long.index.to_numpy()] if len(long) else np.array([], int)
    shape = (len(names), len(case_ids), len(variants))
    values, passed = np.full(shape, np.nan), np.full(shape, np.nan)
    v_codes = long["variant"].to_numpy()
    values[s_codes, c_codes, v_codes] = long["value"].to_numpy(dtype=float)
    flags = long["passed"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    passed[s_codes, c_codes, v_codes] = flags
    present = np.zeros((len(case_ids), len(variants)), dtype=bool)
    failed = np.zeros_like(present)
    present[case_codes[0], cases["variant"]] = True
    failed[case_codes[0], cases["variant"]] = cases["failed"]
    rows = dict(
        zip(zip(cases["variant"], cases["case_id"], strict=True), cases["row"], strict=True)
    )
    queries = dict(zip(cases["case_id"], cases["query"], strict=True))
    return Aligned(variants, case_ids, names, values, passed, present, failed, text_scores,
                   queries, rows)  # fmt: skip


def _modes(report: EvaluationReport) -> list[str]:
    seen = dict.fromkeys(report.query_modes)
    seen.update(dict.fromkeys(r.query_mode for r in report.case_results))
    return list(seen)


def _long_scores(frames: Mapping[str, Any], v_index: dict[tuple[str, str], int]) -> pd.DataFrame:
    parts = []
    for label, frame in frames.items():
        long = frame.scores()[["case_id", "query_mode", "score", "value", "text", "passed"]]
        long = long.assign(variant=[v_index[(label, m)] for m in long["query_mode"]])
        long["score"] = long["score"].astype(str)
        parts.append(long)
    columns = ["case_id", "query_mode", "score", "value", "text", "passed", "variant"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)


def _case_table(
    reports: Mapping[str, EvaluationReport], v_index: dict[tuple[str, str], int]
) -> dict[str, Any]:
    out: dict[str, list[Any]] = {k: [] for k in ("case_id", "variant", "failed", "query", "row")}
    for label, report in reports.items():
        for row, result in enumerate(report.case_results):
            _add_case(out, v_index[(label, result.query_mode)], row, result)
    return {k: np.asarray(v, dtype=object if k in ("case_id", "query") else None)
            for k, v in out.items()}  # fmt: skip


def _add_case(out: dict[str, list[Any]], variant: int, row: int, r: EvaluationCaseResult) -> None:
    out["case_id"].append(r.case_id)
    out["variant"].append(variant)
    out["failed"].append(r.error is not None and r.response is None)
    out["query"].append(r.query)
    out["row"].append(row)


def _factorize(case_col: np.ndarray, score_col: pd.Series) -> tuple[np.ndarray, tuple]:
    """Shared case index over both columns (first-seen order) and the codes of each."""
    both = np.concatenate([case_col, score_col.to_numpy(dtype=object)])
    codes, uniques = pd.factorize(both)
    return np.asarray(uniques, dtype=object), (codes[: len(case_col)], codes[len(case_col) :])


def _text_only(long: pd.DataFrame, names: list[str]) -> list[str]:
    """Scores that never carry a number (labels such as 'good'/'bad'): not compared."""
    numeric = long.loc[long["value"].notna(), "score"].astype(str).unique()
    has_text = long.loc[long["text"].notna(), "score"].astype(str).unique()
    return [n for n in names if n in set(has_text) and n not in set(numeric)]


__all__ = ["SEPARATOR", "Aligned", "Variant", "align"]
