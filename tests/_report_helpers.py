"""Stored reports seen from outside: their table files, and a writer of ready row groups.

Tests and bench scripts corrupt, compare or synthesise a report's Parquet files directly;
the package itself reads them only through ``ReportColumns``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from heta_notebook.reports._columns import ReportColumns
from heta_notebook.reports._folder import TableWriter, _file_entry
from heta_notebook.reports._tables import SCHEMAS, TABLES


def table_paths(folder: str | os.PathLike[str]) -> dict[str, Path]:
    """The file of each table of the report saved in ``folder``, as its header names them
    (the optional ones its save wrote too)."""
    columns = ReportColumns(folder)
    return {table: columns.path(table) for table in (*TABLES, *columns.optional_tables())}


def add_saved_misses(folder: Path, header: dict, columns: dict | None) -> None:
    """Write the ``misses`` table of the save ``header`` commits (its generation) and name
    it in the header's files, as ``write_report`` does: for reports written by hand (a
    ``GroupWriter``), whose miss rows are classified only once their tables are readable.
    The caller writes the header again (with its digest)."""
    writer = TableWriter(Path(folder))
    writer.generation = header["generation"]
    writer.add_misses(columns)
    if "misses" in writer._writers:
        writer._writers["misses"].close()
        header["files"]["misses"] = _file_entry(Path(writer._tmp["misses"]))


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
