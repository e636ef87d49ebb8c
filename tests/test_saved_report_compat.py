"""A report folder written by the previous version (``tests/fixtures/report_v2``, made by
commit 0c94aa7 before the ``reports/`` package existed) still opens, whole and unchanged."""

from __future__ import annotations

import shutil
from pathlib import Path

from heta_notebook import EvaluationReport, ReportStore

FIXTURE = Path(__file__).parent / "fixtures" / "report_v2"


def test_a_report_saved_by_the_last_version_opens(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE / "_heta", tmp_path / "_heta")  # a store may write a lock file
    expected = EvaluationReport.load((FIXTURE / "expected.json").read_text())
    opened = ReportStore(tmp_path).load("kb", "synthetic")
    assert len(opened.case_results) == len(expected.case_results) == 12
    assert opened.report_key == "_heta/knowledge_bases/kb/evaluations/synthetic/report.json"
    assert opened.model_dump(mode="json", exclude={"report_key"}) == expected.model_dump(
        mode="json", exclude={"report_key"}
    )
