"""Comparison surfaces read the miss-class counts a saved report keeps in its header, as the
card does: a stored comparison's HTML, figure and ``misses()`` classify nothing, and give the
counts and deltas the per-evidence rows give."""

from __future__ import annotations

import pandas as pd
import pytest

from heta_notebook import ReportStore, compare
from heta_notebook.analysis import _misses
from tests.test_misses import _case, _report, _result


def _pair() -> dict:
    docs, none = [_result("a"), _result("b")], [_result("x")]
    from heta_notebook.schema import EvaluationScore

    recall = (EvaluationScore(name="recall@2", value=0.5),)
    a = _report("docs", [_case(["a", "b"], docs, case_id=f"q{i}", scores=recall) for i in range(3)])
    b_cases = [_case(["a", "b"], none, case_id="q0", scores=recall)]
    b_cases += [_case(["a", "b"], docs[:1], case_id=f"q{i}", scores=recall) for i in (1, 2)]
    return {"docs": a, "chunks": _report("chunks", b_cases)}


def _stored(reports: dict, root) -> dict:
    store = ReportStore(root)
    for report in reports.values():
        store.save(report)
    return {k: store.load(r.knowledge_base_name, r.report_id) for k, r in reports.items()}


def _no_classification(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("a stored report was re-classified to show counts")

    monkeypatch.setattr(_misses, "evidence_misses", refuse)
    monkeypatch.setattr(_misses, "report_misses", refuse)


def test_stored_comparison_shows_saved_counts_without_classifying(tmp_path, monkeypatch):
    reports = _pair()
    memory = compare(reports)
    expected_counts, expected_deltas = _misses.variant_counts(memory), memory.misses()
    stored = _stored(reports, tmp_path)
    _no_classification(monkeypatch)
    comparison = compare(stored)
    pd.testing.assert_frame_equal(_misses.variant_counts(comparison), expected_counts)
    pd.testing.assert_frame_equal(comparison.misses(), expected_deltas)
    html = comparison._repr_html_()
    assert "4 misses: 4 not retrieved" in html and "loses 4 evidences to not retrieved" in html
    assert {t.name for t in comparison.plot.misses().data} == {"found", "not retrieved"}


def test_different_cases_fall_back_to_the_shared_cases_rows(tmp_path):
    reports = _pair()
    b = reports["chunks"]
    reports["chunks"] = b.model_copy(update={"case_results": b.case_results[:2]})  # no q2
    memory = compare(reports).misses()
    stored = compare(_stored(reports, tmp_path)).misses()
    pd.testing.assert_frame_equal(stored, memory)
    found = memory.set_index("miss_class").loc["found"]
    assert (found["count_a"], found["count_b"]) == (4, 1)  # q0 and q1 only: q2 is not in both
