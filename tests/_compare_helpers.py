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
                EvaluationCaseResult(
                    case_id=case_id,
                    query=f"query {case_id}",
                    query_mode=mode,
                    scores=tuple(row),
                    response=QueryResponse(mode=mode),
                )
            )
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


def rerun_report(
    report: EvaluationReport,
    label: str,
    *,
    quality_shift: float = 0.0,
    seed: int = 1,
    recipe: Mapping[str, Any] | None = None,
    drop_cases: Sequence[str] = (),
    n_results: int = 10,
) -> EvaluationReport:
    """The same cases as ``report`` (a ``make_report`` report) "re-run" by another recipe.

    Keeps every case's query and expected evidence, draws new rankings with the given quality
    shift (``n_results`` per query) and recomputes the scores with the display helpers, so evidence gained/lost and
    per-case deltas are meaningful. ``drop_cases`` leaves cases out (missing-case tests).
    """
    import random

    from tests import _display_helpers as dh

    rng = random.Random(seed)
    results = []
    for r in report.case_results:
        if r.case_id in drop_cases:
            continue
        case = _case_dict(r)
        quality = dh.MODE_QUALITY.get(r.query_mode, 0.5) + quality_shift
        if r.error is not None:
            results.append(r)
            continue
        results.append(
            dh._case_result(
                case, r.query_mode, rng, quality, dh.DEFAULT_KS, n_results, True, True, False
            )
        )
    manifest = {**report.recipe_manifest, "name": label, **(recipe or {})}
    return report.model_copy(
        update={
            "case_results": tuple(results),
            "recipe_manifest": manifest,
            "metadata": {**report.metadata, "label": label},
            "report_id": f"rerun-{label}",
        }
    )


def _case_dict(result: EvaluationCaseResult) -> dict[str, Any]:
    from heta_notebook.schema import BenchmarkExpected

    expected = BenchmarkExpected.from_dict(result.metadata["expected"])
    qrels = {e.reference_id: e.relevance for e in expected.evidence}
    return {
        "id": result.case_id,
        "query": result.query,
        "qrels": qrels,
        "expected": expected,
        "labels": result.metadata.get("labels", {}),
        "answer": expected.answers[0] if expected.answers else "answer",
    }
