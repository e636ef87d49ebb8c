"""The records a report is made of and their rules: data and rules only.

``_records`` (cases, evidence, responses, scores, reports: frozen pydantic records that say
which field is wrong), ``_status`` (scored / skipped / error and the one reason rule) and
``_construct`` (scores built in bulk) and ``_abstain`` (``Abstain``, what a system returns to
abstain). A report's stored forms live in ``reports/``;
``CheckpointWarning``, ``CorruptReportError`` and ``from_heta_report`` are still named here, as
the last version named them (lazily: declared doors of docs/architecture.md's import table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_notebook._util.lazy import lazy_exports

_EXPORTS = {
    "Abstain": "heta_notebook.schema._abstain",
    "BenchmarkCase": "heta_notebook.schema._records",
    "BenchmarkDocument": "heta_notebook.schema._records",
    "BenchmarkEvidence": "heta_notebook.schema._records",
    "BenchmarkExpected": "heta_notebook.schema._records",
    "BenchmarkManifest": "heta_notebook.schema._records",
    "EVALUATION_SCHEMA_VERSION": "heta_notebook.schema._records",
    "EvaluationCaseResult": "heta_notebook.schema._records",
    "EvaluationError": "heta_notebook.schema._records",
    "EvaluationReport": "heta_notebook.schema._records",
    "EvaluationScore": "heta_notebook.schema._records",
    "QueryCitation": "heta_notebook.schema._records",
    "QueryResponse": "heta_notebook.schema._records",
    "QueryResult": "heta_notebook.schema._records",
    "QueryTraceEvent": "heta_notebook.schema._records",
    "Record": "heta_notebook.schema._records",
    "ReportFormatError": "heta_notebook.schema._records",
    "check_schema_version": "heta_notebook.schema._records",
    "report_folder": "heta_notebook.schema._records",
    "report_key": "heta_notebook.schema._records",
    "CheckpointWarning": "heta_notebook.reports._checkpoint",
    "CorruptReportError": "heta_notebook.reports._tables",
    "REASON_KEYS": "heta_notebook.schema._status",
    "STATUSES": "heta_notebook.schema._status",
    "status_and_reason": "heta_notebook.schema._status",
    "status_code": "heta_notebook.schema._status",
    "status_name": "heta_notebook.schema._status",
    "from_heta_report": "heta_notebook.reports._heta_json",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the lazy exports, spelled out for type checkers
    from heta_notebook.reports._checkpoint import CheckpointWarning  # noqa: F401
    from heta_notebook.reports._heta_json import from_heta_report  # noqa: F401
    from heta_notebook.reports._tables import CorruptReportError  # noqa: F401
    from heta_notebook.schema._abstain import Abstain  # noqa: F401
    from heta_notebook.schema._records import (  # noqa: F401
        EVALUATION_SCHEMA_VERSION,
        BenchmarkCase,
        BenchmarkDocument,
        BenchmarkEvidence,
        BenchmarkExpected,
        BenchmarkManifest,
        EvaluationCaseResult,
        EvaluationError,
        EvaluationReport,
        EvaluationScore,
        QueryCitation,
        QueryResponse,
        QueryResult,
        QueryTraceEvent,
        Record,
        ReportFormatError,
        check_schema_version,
        report_folder,
        report_key,
    )
    from heta_notebook.schema._status import (  # noqa: F401
        REASON_KEYS,
        STATUSES,
        status_and_reason,
        status_code,
        status_name,
    )
