"""Small reports with exactly the per-case scores a comparison test needs.

``scored_report(label, {"ndcg@10": [...], ...})`` builds an ``EvaluationReport`` whose case
``i`` under every mode carries the given values, so tests know every delta in advance.
The richer synthetic reports (evidence, answers, judge reasons) come from
``tests/_display_helpers.make_report``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from heta_notebook.schema import (
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationReport,
    EvaluationScore,
    QueryResponse,
)


def scored_report(
    label: str,
    scores: Mapping[str, Sequence[float | None]],
    *,
    modes: Sequence[str] = ("bm25",),
    benchmark: tuple[str, str, str] = ("toy", "1", "test"),
    recipe: Mapping[str, Any] | None = None,
    case_ids: Sequence[str] | None = None,
    passed: Mapping[str, Sequence[bool | None]] | None = None,
    report_id: str | None = None,
    set_label: bool = True,
) -> EvaluationReport:
    """A report whose case ``i`` scores ``scores[name][i]`` in every mode (None = skipped)."""
    n = len(next(iter(scores.values())))
    ids = list(case_ids) if case_ids is not None else [f"c{i:03d}" for i in range(n)]
    results = []
    for mode in modes:
        for i, case_id in enumerate(ids):
            row = []
            for name, values in scores.items():
                value = values[i]
                if value is None:
                    row.append(EvaluationScore.skipped_score(name, "nothing to score"))
                    continue
                flag = passed[name][i] if passed and name in passed else None
                row.append(EvaluationScore(name=name, value=float(value), passed=flag))
            results.append(
                EvaluationCaseResult(case_id=case_id, query=f"query {case_id}", query_mode=mode,
                                     scores=tuple(row), response=QueryResponse(mode=mode))
            )  # fmt: skip
    name, version, split = benchmark
    return EvaluationReport(
        report_id=report_id or f"report-{label}",
        benchmark=BenchmarkManifest(name=name, version=version, split=split),
        knowledge_base_name=f"kb-{label}",
        recipe_manifest={"name": label, **(recipe or {})},
        query_modes=tuple(modes),
        case_results=tuple(results),
        started_at="2026-11-29T22:00:00+00:00",
        finished_at="2026-11-29T22:01:00+00:00",
        metadata={"label": label} if set_label else {},
    )
