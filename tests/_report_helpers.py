"""Stored reports seen from outside: their table files, and a writer of ready row groups.

Tests and bench scripts corrupt, compare or synthesise a report's Parquet files directly;
the package itself reads them only through ``ReportColumns``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from heta_notebook.reports._columns import ReportColumns
from heta_notebook.reports._folder import TableWriter
from heta_notebook.reports._tables import SCHEMAS, TABLES


def table_paths(folder: str | os.PathLike[str]) -> dict[str, Path]:
    """The file of each table of the report saved in ``folder``, as its header names them."""
    columns = ReportColumns(folder)
    return {table: columns.path(table) for table in TABLES}


class GroupWriter(TableWriter):
    """A ``TableWriter`` fed ready tables a row group at a time: synthetic reports of
    100,000 case results for benchmarks and large-report tests, written without records."""

    def text_id(self, text: str) -> int:
        """The index of ``text`` in the texts table (added once)."""
        return self._text_ids.setdefault(text, len(self._text_ids))

    def add_group(self, tables: dict[str, pa.Table]) -> None:
        """Write ready ``cases``/``results``/``scores`` tables of the next case results as one
        row group; their ``row`` columns count from this writer's rows."""
        self.flush()
        for name in ("cases", "results", "scores"):
            if len(tables[name]):
                self._write(name, tables[name].select(SCHEMAS[name].names).cast(SCHEMAS[name]))
        self.rows += len(tables["cases"])
