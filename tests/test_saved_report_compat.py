"""A report folder written by the previous version (``tests/fixtures/report_v2``, made by
commit 0c94aa7 before the ``reports/`` package existed) still opens, whole and unchanged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from heta_notebook import EvaluationReport, ReportStore
from heta_notebook.schema import ReportFormatError

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


def test_a_saved_report_json_is_sealed_and_a_changed_byte_is_refused(tmp_path: Path) -> None:
    expected = EvaluationReport.load((FIXTURE / "expected.json").read_text())
    path = expected.save(tmp_path / "report.json")
    text = path.read_text(encoding="utf-8")
    assert text.rstrip().endswith('"\n}') and '"_sha256": "' in text[-100:]
    assert EvaluationReport.load(path).model_dump(mode="json") == expected.model_dump(mode="json")
    parsed = EvaluationReport.load(json.loads(text))  # a parsed copy: the sum is for bytes
    assert parsed.model_dump(mode="json") == expected.model_dump(mode="json")
    score = '"value": 0.015146737332727533'
    assert score in text
    path.write_text(text.replace(score, '"value": 0.015146737332727534', 1), encoding="utf-8")
    with pytest.raises(
        ReportFormatError,
        match=r"report\.json: .*checksum does not match.*delete its \"_sha256\" member",
    ):
        EvaluationReport.load(path)


def test_a_report_json_without_a_sum_is_read_as_it_is(tmp_path: Path) -> None:
    """heta-framework writes report.json without our sum, as did earlier versions."""
    expected = EvaluationReport.load((FIXTURE / "expected.json").read_text())
    data = json.loads(expected.stored_json())
    assert data.pop("_sha256")
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    assert EvaluationReport.load(path).model_dump(mode="json") == expected.model_dump(mode="json")
