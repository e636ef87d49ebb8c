"""``resolve_report``: every kind of source a user may hand over reads as the same report.

The one resolver behind ``EvaluationReport.load``, ``compare``, the CLI, the gates and the
store: a report, a run result (alone or from a run collection), JSON text or bytes, a dict,
a ``report.json`` path, a columnar folder or its ``header.json``, a folder holding
``report.json``, and a heta-framework report object.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from heta_notebook.reports._resolve import resolve_report
from heta_notebook.runner._result import BenchmarkRunResult, RunCollection
from heta_notebook.schema import EvaluationReport
from tests.test_schema import make_report


def _report_json(report: EvaluationReport, tmp_path: Path) -> Path:
    return report.save(tmp_path / "report.json")  # sealed with its sum, as a save writes it


def _columnar(report: EvaluationReport, tmp_path: Path) -> Path:
    return report.save(tmp_path / "columnar", format="columnar")


def _folder_with_report_json(report: EvaluationReport, tmp_path: Path) -> Path:
    report.save(tmp_path / "folder" / "report.json")
    return tmp_path / "folder"


def _heta_object(report: EvaluationReport, tmp_path: Path) -> Any:
    pytest.importorskip("heta_framework.evaluation", reason="heta-framework not installed")
    from heta_notebook.integrations.heta import to_heta_report

    heta_report = to_heta_report(report)
    assert type(heta_report).__module__.startswith("heta_framework")  # not one of ours
    return heta_report


SOURCES: dict[str, Callable[[EvaluationReport, Path], Any]] = {
    "report": lambda report, _: report,
    "run result": lambda report, _: BenchmarkRunResult(report=report, label="a"),
    "run collection entry": lambda report, _: RunCollection(
        {"a": BenchmarkRunResult(report=report, label="a")}
    ).results["a"],
    "json text": lambda report, _: report.to_json(),
    "json bytes": lambda report, _: report.to_json().encode("utf-8"),
    "dict of a saved report.json": lambda report, tmp: json.loads(
        _report_json(report, tmp).read_text()
    ),
    "report.json path": _report_json,
    "report.json path as text": lambda report, tmp: str(_report_json(report, tmp)),
    "header.json path": lambda report, tmp: _columnar(report, tmp) / "header.json",
    "columnar folder": _columnar,
    "folder holding report.json": _folder_with_report_json,
    "heta-framework object": _heta_object,
}


@pytest.mark.parametrize("kind", list(SOURCES))
def test_every_kind_of_source_resolves_to_the_same_report(kind: str, tmp_path: Path) -> None:
    report = make_report()
    resolved = resolve_report(SOURCES[kind](report, tmp_path))
    assert isinstance(resolved, EvaluationReport)
    assert resolved.model_dump(mode="json") == report.model_dump(mode="json"), kind
    assert list(resolved.case_results) == list(report.case_results)


def test_a_source_that_holds_no_report_is_named() -> None:
    with pytest.raises(TypeError, match="cannot read a report from a int"):
        resolve_report(42)
