"""``resolve_report``: the one place that decides what report a source holds.

Every way a user may hand over a report ends here: an ``EvaluationReport``, a run result
(anything with a ``.report``), JSON text or bytes, a dict, a ``report.json`` path, a
columnar folder or its ``header.json``, a folder holding ``report.json``, or a
heta-framework report object. ``EvaluationReport.load``, ``compare``, the CLI, the
regression gates and the store all ask it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heta_notebook._util.sums import NO_SUM, SUM_KEY, damaged_sum_key, unseal_text
from heta_notebook.reports._folder import is_columnar, open_report
from heta_notebook.reports._tables import HEADER
from heta_notebook.schema._records import EvaluationReport, ReportFormatError

REPORT_JSON = "report.json"


class NoReportError(FileNotFoundError):
    """A path that holds no report (neither a columnar folder nor a ``report.json``)."""


def report_file(source: str | os.PathLike[str]) -> Path:
    """The main file or folder of the report at ``source``: a columnar folder (also given
    by its ``header.json``) or a ``report.json`` (also given by its folder)."""
    path = Path(source)
    folder = path.parent if path.name == HEADER else path
    if folder.is_dir() and is_columnar(folder):
        return folder
    if path.is_dir():
        path = path / REPORT_JSON
    if not path.is_file():
        raise NoReportError(f"no report at {path}")
    return path


def resolve_report(source: Any) -> EvaluationReport:
    """The report ``source`` holds (any form above); errors name the file and field."""
    if isinstance(source, EvaluationReport):
        return source
    if isinstance(getattr(source, "report", None), EvaluationReport):  # a run result
        return source.report
    if isinstance(source, Mapping):  # e.g. a report.json parsed: its sum is for its bytes
        return EvaluationReport.model_validate({k: v for k, v in source.items() if k != SUM_KEY})
    if isinstance(source, bytes) or (isinstance(source, str) and source.lstrip().startswith("{")):
        try:
            return _from_json(source if isinstance(source, bytes) else source.encode("utf-8"))
        except _SumError as exc:
            raise ReportFormatError(None, exc) from None
    if isinstance(source, (str, os.PathLike)):
        path = report_file(source)
        if path.is_dir():
            return open_report(path)
        try:
            return _from_json(path.read_bytes())
        except ValueError as exc:
            raise ReportFormatError(path, exc) from exc
    if type(source).__module__.startswith("heta_framework"):
        from heta_notebook.reports._heta_json import from_heta_report

        return from_heta_report(source)
    raise TypeError(
        f"cannot read a report from a {type(source).__name__}; pass an EvaluationReport, a run "
        "result, JSON text, a dict, a report.json path, a report folder or a heta report"
    )


def _from_json(data: bytes) -> EvaluationReport:
    """A ``report.json``'s report, its sum checked when it has one (``stored_json`` seals it;
    heta-framework's and older files have none and are read as they are)."""
    body, problem = unseal_text(data)
    if problem not in (None, NO_SUM):
        raise _SumError(problem + _EDITED)
    report = EvaluationReport.model_validate_json(body)
    if problem == NO_SUM and damaged_sum_key(report.model_extra or ()):
        raise _SumError("its checksum member is damaged" + _EDITED)
    return report


class _SumError(ValueError):
    """A ``report.json`` whose sum does not hold (named with its file by the caller)."""


_EDITED = f': it changed after it was written (on purpose? delete its "{SUM_KEY}" member to read it as it is)'
