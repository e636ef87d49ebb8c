"""A report as columns, at rest and in a store. Only this package touches pyarrow.

``_tables`` (the column writer: records to Arrow tables, the table schemas), ``_stored``
(a stored report's Parquet columns, lazy case results), ``_folder`` (the folder format:
header, generations, digests, write and open), ``_checkpoint`` (the one checkpoint format:
an Arrow stream with its sums), ``_lazy_results`` (a response's results kept as arrays),
``_heta_json`` (heta-framework's ``report.json`` read back), ``_resolve``
(``resolve_report``: what report a source holds), ``_store`` (``ReportStore``), ``_run``
(the run handle, all a runner holds) and ``_listing`` (what ``heta-notebook ls`` lists).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_notebook._util.lazy import lazy_exports

_EXPORTS = {
    "CheckpointWarning": "heta_notebook.reports._checkpoint",
    "CorruptReportError": "heta_notebook.reports._tables",
    "ReportStore": "heta_notebook.reports._store",
    "RunHandle": "heta_notebook.reports._run",
    "ReportLockedError": "heta_notebook.reports._run",
    "ReportIdCollisionError": "heta_notebook.reports._run",
    "CheckpointMismatchError": "heta_notebook.reports._run",
    "UnverifiedCheckpointError": "heta_notebook.reports._run",
    "OldCheckpointError": "heta_notebook.reports._run",
    "ReportWarning": "heta_notebook.reports._run",
    "from_heta_report": "heta_notebook.reports._heta_json",
    "resolve_report": "heta_notebook.reports._resolve",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the lazy exports, spelled out for type checkers
    from heta_notebook.reports._checkpoint import CheckpointWarning  # noqa: F401
    from heta_notebook.reports._heta_json import from_heta_report  # noqa: F401
    from heta_notebook.reports._resolve import resolve_report  # noqa: F401
    from heta_notebook.reports._run import (  # noqa: F401
        CheckpointMismatchError,
        OldCheckpointError,
        ReportIdCollisionError,
        ReportLockedError,
        ReportWarning,
        RunHandle,
        UnverifiedCheckpointError,
    )
    from heta_notebook.reports._store import ReportStore  # noqa: F401
    from heta_notebook.reports._tables import CorruptReportError  # noqa: F401
