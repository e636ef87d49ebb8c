"""Slices: the same aggregation per case label or metadata key (query type, topic, difficulty).

A slice key ``by`` names a case label (``BenchmarkCase.labels``, carried by each case result as
``metadata["labels"]``) or a case-result metadata key; it may also be a mapping
``case_id → slice`` or a function of the case result. Cases without a value fall in the
slice ``"(none)"``. The numbers come from ``evaluators.aggregation.grouped_stats``, the engine
behind every other summary, so a slice of everything equals the overall summary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook.evaluators._aggregation import (
    grouped_stats,
    pass_rate,
    text_counts,
)
from heta_notebook.schema._records import EvaluationCaseResult
from heta_notebook.schema._status import STATUSES

NO_SLICE = "(none)"
SliceKey = str | Mapping[str, Any] | Callable[[EvaluationCaseResult], Any]


def slice_name(by: SliceKey) -> str:
    """The column name a slice key gets in frames (``"slice"`` for mappings and functions)."""
    return by if isinstance(by, str) else "slice"


def slice_of(result: EvaluationCaseResult, by: SliceKey) -> str:
    """The slice of one case result: its label ``by``, else its metadata ``by``, else "(none)"."""
    if callable(by):
        value = by(result)
    elif isinstance(by, Mapping):
        value = by.get(result.case_id)
    else:
        labels = result.metadata.get("labels")
        if isinstance(labels, Mapping) and by in labels:
            value = labels[by]
        else:
            value = result.metadata.get(by)
    return NO_SLICE if value is None or value == "" else str(value)


def slice_labels(case_results: Sequence[EvaluationCaseResult], by: SliceKey) -> np.ndarray:
    """The slice of every case result, in report order (object array of str)."""
    if not isinstance(by, (str, Mapping)) and not callable(by):
        raise TypeError(
            f"by= must be a label or metadata key (str), a mapping case_id → slice or a "
            f"function of the case result, not {type(by).__name__}"
        )
    labels = np.asarray([slice_of(r, by) for r in case_results], dtype=object)
    if isinstance(by, str) and len(labels) and (labels == NO_SLICE).all():
        check_slice_key(case_results, by)
    return labels


def check_slice_key(case_results: Sequence[EvaluationCaseResult], by: str) -> None:
    """Refuse a ``by=`` that no case result carries (a typo), naming the keys that exist."""
    labels: dict[str, None] = {}
    metadata: dict[str, None] = {}
    for result in case_results:
        own = result.metadata.get("labels")
        if isinstance(own, Mapping):
            if by in own:
                return
            labels.update(dict.fromkeys(map(str, own)))
        if by in result.metadata:
            return
        metadata.update(dict.fromkeys(k for k in map(str, result.metadata) if k != "labels"))
    raise KeyError(
        f"no case label or metadata key {by!r} in these case results "
        f"(labels: {', '.join(labels) or 'none'}; metadata keys: {', '.join(metadata) or 'none'})"
    )


def slice_summary(frames: Any, by: SliceKey, confidence: float = 0.95) -> pd.DataFrame:
    """Per slice × query mode × score: the summary columns (mean, n, std, CI, pass rate, counts).

    ``frames`` is a report's ``ReportFrames``; its long scores frame is grouped once.
    """
    results = frames.case_results
    slices = slice_labels(results, by)
    slice_codes, slice_names = pd.factorize(slices, sort=False)
    long = frames.scores()
    rows = long["row"].to_numpy()
    modes, names = list(frames.modes), list(frames.score_names)
    mode_code = {m: i for i, m in enumerate(modes)}
    name_code = {n: i for i, n in enumerate(names)}
    m_codes = long["query_mode"].map(mode_code).to_numpy(dtype=np.int64)
    s_codes = long["score"].map(name_code).to_numpy(dtype=np.int64)
    keys = (slice_codes[rows] * len(modes) + m_codes) * max(len(names), 1) + s_codes
    present, groups = np.unique(keys, return_inverse=True)
    groups = groups.reshape(-1)
    status = pd.Categorical(long["status"], categories=list(STATUSES)).codes.astype(np.int8)
    passed = long["passed"].to_numpy(dtype=float, na_value=np.nan)
    stats = grouped_stats(
        groups,
        len(present),
        long["value"].to_numpy(dtype=float),
        status=status,
        passed=passed,
        confidence=confidence,
    )
    texts = long["text"].to_numpy(dtype=object)
    counts = text_counts(groups, status, texts) if pd.notna(texts).any() else {}
    failed = _failed_queries(results, slice_codes, mode_code, rows)
    width = max(len(names), 1)
    sl, rest = np.divmod(present, len(modes) * width)
    mo, sc = np.divmod(rest, width)
    stats["n_error"] = stats["n_error"] + np.asarray(
        [failed[(a, b)] for a, b in zip(sl.tolist(), mo.tolist(), strict=True)], dtype=np.int64
    )
    frame = pd.DataFrame(
        {
            slice_name(by): np.asarray(slice_names, dtype=object)[sl],
            "query_mode": np.asarray(modes, dtype=object)[mo],
            "score": np.asarray(names, dtype=object)[sc],
            "mean": stats["mean"],
            "n": stats["n_scored"],
            "std": stats["std"],
            "ci_low": stats["ci_low"],
            "ci_high": stats["ci_high"],
            "pass_rate": pass_rate(stats["n_passed"], stats["n_judged"]),
            "n_passed": stats["n_passed"],
            "n_skipped": stats["n_skipped"],
            "n_error": stats["n_error"],
            "counts": [dict(counts.get(i, {})) for i in range(len(present))],
        }
    )
    return frame.reset_index(drop=True)


def _failed_queries(
    results: Sequence[EvaluationCaseResult],
    slice_codes: np.ndarray,
    mode_code: Mapping[str, int],
    score_rows: np.ndarray,
) -> Counter:
    """(slice code, mode code) → queries that failed with no scores (an error for each score)."""
    has_scores = np.zeros(len(results), dtype=bool)
    has_scores[score_rows] = True
    out: Counter = Counter()
    for row, result in enumerate(results):
        if result.error is not None and not has_scores[row]:
            out[(int(slice_codes[row]), mode_code[result.query_mode])] += 1
    return out


def case_slices(reports: Mapping[str, Any], case_ids: Sequence[str], by: SliceKey) -> np.ndarray:
    """The slice of each case id across several reports (the first report holding it decides)."""
    found: dict[str, str] = {}
    for report in reports.values():
        for result in report.case_results:
            if result.case_id not in found:
                found[result.case_id] = slice_of(result, by)
    if isinstance(by, str) and found and all(v == NO_SLICE for v in found.values()):
        check_slice_key([r for report in reports.values() for r in report.case_results], by)
    return np.asarray([found.get(c, NO_SLICE) for c in case_ids], dtype=object)


__all__ = [
    "NO_SLICE",
    "SliceKey",
    "case_slices",
    "check_slice_key",
    "slice_labels",
    "slice_name",
    "slice_of",
    "slice_summary",
]
