"""The explorer's judge scores of a stored report are read from its score columns (no case
records built for the first page) and equal the ones read from its records."""

from __future__ import annotations

from heta_notebook import ReportStore
from heta_notebook.display._explorer_data import judge_scores
from tests._display_helpers import make_report


def test_stored_report_judges_match_the_records(tmp_path):
    report = make_report(8)
    report = report.model_copy(
        update={"metadata": {k: v for k, v in report.metadata.items() if k != "evaluators"}}
    )
    expected = judge_scores(report)
    assert expected  # the helper's reports carry a judge
    store = ReportStore(tmp_path)
    store.save(report)
    stored = store.load(report.knowledge_base_name, report.report_id)
    assert hasattr(stored.case_results, "columnar")
    assert judge_scores(stored) == expected
    assert judge_scores(stored, sample=0) == []
