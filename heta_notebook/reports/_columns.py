"""``ReportColumns``: the one column view of any report, in memory or stored.

Case, result, score and text columns as Arrow (``column``), numpy (``numpy``) or
first-seen codes (``codes``), and row-group reads (``row_range``, ``read_rows``,
``texts_of``). A stored report's view opens its folder's Parquet tables and reads each
column once; an in-memory report's view is the column writer's tables of its records
(``reports._tables.record_tables``), built once. Consumers ask ``report_columns`` (or
``report.frames().columns``, which caches it) and never whether a report is stored.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from heta_notebook.reports._stored import (
    LazyCaseResults,
    _checked_name,
    _refuse_symlink,
    read_header,
)
from heta_notebook.reports._tables import (
    HEADER,
    MISSES_SCHEMA,
    OPTIONAL_TABLES,
    SCHEMAS,
    TABLES,
    CorruptReportError,
    record_tables,
)
from heta_notebook.schema._records import EvaluationCaseResult


def report_columns(case_results: Sequence[EvaluationCaseResult]) -> ReportColumns:
    """The column view of a report's case results: a stored report's own (its Parquet
    tables), else built from the records now (``report.frames().columns`` caches it)."""
    if isinstance(case_results, LazyCaseResults):
        return case_results.columnar
    return ReportColumns.of_records(case_results)


def saved_views(case_results: Sequence[EvaluationCaseResult]) -> dict[str, Any]:
    """The small derived views a stored report's header keeps (summary, modes, counts...),
    without building any column; in-memory records have none saved ({})."""
    if isinstance(case_results, LazyCaseResults):
        return dict(case_results.columnar.header.get("views") or {})
    return {}


class ReportColumns:
    """The tables of one report (cases, results, texts, scores), read column by column.

    ``ReportColumns(folder)`` opens a stored report: its header and Parquet tables, each
    column read once and kept, so frames, the card and the explorer share one read (any
    missing, truncated or foreign table raises :class:`CorruptReportError` naming it).
    ``ReportColumns.of_records(results)`` holds in-memory records' tables (no header: no
    saved views). Every read below answers the same for both.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str] | None = None,
        header: dict[str, Any] | None = None,
        sources: dict[str, pa.NativeFile] | None = None,
        *,
        tables: dict[str, pa.Table] | None = None,
        records: Sequence[EvaluationCaseResult] | None = None,
    ):
        self.records = records  # in memory: the records the tables were built from
        self._tables = tables  # in memory: the tables themselves (one row group each;
        # ``results`` and ``texts`` are built from ``records`` when first read)
        self.folder = None if folder is None else Path(folder)
        if tables is not None:
            self.header: dict[str, Any] = dict(header or {})
            self.n_rows = len(tables["cases"])
        elif self.folder is None:
            raise TypeError("ReportColumns needs a report folder or the tables of records")
        else:
            self.header = header if header is not None else read_header(self.folder)
            self.n_rows = int(self.header["n_case_results"])
        self._sources: dict[str, pa.NativeFile] = dict(sources or {})  # open: a re-save
        self._verified: set[str] = set()  # can remove the files, never these handles
        self._files: dict[str, pq.ParquetFile] = {}
        self._columns: dict[tuple[str, str], pa.ChunkedArray] = {}
        self._group_starts: dict[str, np.ndarray] = {}
        self._recent_groups: OrderedDict[tuple[str, int, int], pa.Table] = OrderedDict()
        self._parent: tuple[ReportColumns, np.ndarray] | None = None  # a subset's report, rows

    @classmethod
    def of_records(cls, case_results: Sequence[EvaluationCaseResult]) -> ReportColumns:
        """The columns of in-memory records, by the column writer that saving uses."""
        return cls(tables=record_tables(case_results, with_hits=False), records=case_results)

    def __repr__(self) -> str:
        where = "in memory" if self.folder is None else repr(str(self.folder))
        return f"ReportColumns({where}, rows={self.n_rows})"

    def path(self, table: str) -> Path:
        """The Parquet file of ``table`` (named by the header) of a stored report."""
        if self.folder is None:
            raise ValueError("the columns of an in-memory report have no files")
        return self.folder / _checked_name(self.header, table, self.folder)

    def where(self, table: str) -> str:
        """What holds ``table``, for messages: its file, or the in-memory report."""
        return f"<report in memory>: {table}" if self.folder is None else str(self.path(table))

    def _table(self, table: str) -> pa.Table:
        """An in-memory report's table (``results`` and ``texts``: built when first read,
        since they are most of the work and frames read neither)."""
        tables = self._tables
        assert tables is not None
        if table not in tables:
            assert self.records is not None  # a subset's tables are all there
            built = record_tables(self.records, scores=tables.get("scores"))
            tables.update({name: data for name, data in built.items() if name not in tables})
        return tables[table]

    def num_rows(self, table: str) -> int:
        """How many rows ``table`` holds."""
        if self._tables is not None:
            return self._table(table).num_rows
        return int(self.file(table).metadata.num_rows)

    def records_at(self, rows: np.ndarray) -> Iterator[EvaluationCaseResult]:
        """The records at the ascending report ``rows`` (a stored report builds only those)."""
        if self.records is not None:
            return map(self.records.__getitem__, np.asarray(rows).tolist())
        if self._parent is not None:  # a subset: the report's own rows
            parent, at = self._parent
            return parent.records_at(at[np.asarray(rows, dtype=np.int64)])
        return LazyCaseResults(self).take(np.asarray(rows).tolist())

    def subset(
        self,
        rows: np.ndarray,
        columns: Mapping[str, Sequence[str]] | None = None,
        *,
        encoded: Sequence[str] = (),
    ) -> ReportColumns:
        """The columns of the report rows ``rows`` only, renumbered 0.. in ascending order,
        reading only the row groups that hold them and, with ``columns`` (table -> names;
        default every column of every table), only those. Its records are built by this
        report (``records_at``), so a subset need not hold what they read. The string
        columns named in ``encoded`` (of results and scores) are kept dictionary-encoded:
        what ``codes`` reads, without a string per row held."""
        rows = np.unique(np.asarray(rows, dtype=np.int64))
        if self.records is not None:
            return ReportColumns.of_records([self.records[i] for i in rows.tolist()])
        wanted = columns or {table: SCHEMAS[table].names for table in TABLES}
        tables = {"cases": self.read_rows("cases", rows, wanted["cases"], one_per_row=True)}
        for table, names in wanted.items():
            if table == "texts":
                tables[table] = pa.table({"text": self.texts()})
            elif table != "cases":
                names = list(dict.fromkeys(["row", *names]))
                data = self.read_rows(table, rows, names, one_per_row=False)
                index = data.schema.get_field_index("row")
                renumbered = np.searchsorted(rows, data.column(index).to_numpy())
                row_type = data.schema.field(index).type
                data = data.set_column(index, "row", pa.array(renumbered, row_type))
                for name in (n for n in encoded if n in names):
                    at = data.schema.get_field_index(name)
                    data = data.set_column(at, name, _encoded(data.column(at)))
                tables[table] = data
        found = ReportColumns(tables=tables)
        found._parent = (self, rows)
        return found

    def private_case_results(self) -> Sequence[EvaluationCaseResult]:
        """Case results whose report builds its own caches (for another thread): in memory
        the same records, stored a lazy sequence over a copy of these columns."""
        if self.records is not None:
            return self.records
        return LazyCaseResults(self.copy())

    def copy(self) -> ReportColumns:
        """The same report with its own caches (for another thread), sharing the open files."""
        if self._tables is not None:
            return ReportColumns(tables=self._tables, records=self.records)
        self.open_all()
        return ReportColumns(self.folder, self.header, self._sources)

    def open_all(self) -> None:
        """Open every table file now: a later save removes the files, not these handles."""
        if self._tables is not None:
            return
        for table in (*TABLES, *self.optional_tables()):
            self.source(table)

    def optional_tables(self) -> list[str]:
        """The optional tables (``OPTIONAL_TABLES``) this stored report's save wrote."""
        files = self.header.get("files") if self._tables is None else None
        return [t for t in OPTIONAL_TABLES if isinstance(files, dict) and t in files]

    def saved_misses(self, rows: np.ndarray | None = None) -> dict[str, list[Any]] | None:
        """The miss rows its save kept (the ``misses`` table: ``MISSES_SCHEMA``'s columns as
        lists), of the ascending report ``rows`` only when given; None when the save kept
        none (in memory, saved before this table or by a save that had not classified)."""
        if "misses" not in self.optional_tables():
            return None
        try:
            table = self.file("misses").read(use_threads=False)
        except (OSError, pa.ArrowException) as exc:
            raise CorruptReportError(self.path("misses"), f"cannot read: {exc}") from exc
        if not table.schema.remove_metadata().equals(MISSES_SCHEMA):
            return None  # another layout (a later version's): classified again instead
        if rows is not None:
            keep = np.isin(table.column("row").to_numpy(), np.asarray(rows, dtype=np.int64))
            table = table.filter(pa.array(keep))
        return {name: table.column(name).to_pylist() for name in MISSES_SCHEMA.names}

    def source(self, table: str) -> pa.NativeFile:
        """The open file of ``table`` (opened once; read with positional reads)."""
        if table not in self._sources:
            path = self.path(table)
            _refuse_symlink(path)
            try:
                self._sources[table] = pa.OSFile(str(path))
            except FileNotFoundError:
                raise CorruptReportError(path, "missing table of the report") from None
            except (OSError, pa.ArrowException) as exc:
                raise CorruptReportError(path, f"cannot open the table: {exc}") from exc
        return self._sources[table]

    def verify(self, table: str) -> None:
        """Check ``table``'s size and sha256 against the header (once per opened report)."""
        entry = (self.header.get("files") or {}).get(table)
        if table in self._verified or entry is None:
            return
        source, path = self.source(table), self.path(table)
        digest, size, position = hashlib.sha256(), source.size(), 0
        if size != entry.get("bytes"):
            raise CorruptReportError(
                path, f"has {size} bytes, {HEADER} says {entry.get('bytes')} (truncated or changed)"
            )
        while position < size:
            block = source.read_at(min(1 << 22, size - position), position)
            digest.update(block)
            position += len(block)
        if digest.hexdigest() != entry.get("sha256"):
            raise CorruptReportError(
                path,
                f"sha256 {digest.hexdigest()[:16]}… differs from {HEADER}'s "
                f"{str(entry.get('sha256'))[:16]}… (the file is corrupt or was changed)",
            )
        self._verified.add(table)

    def file(self, table: str) -> pq.ParquetFile:
        """The opened Parquet file of ``table`` (its sha256 and footer checked against the
        header; every page read checks its CRC)."""
        if table not in self._files:
            path = self.path(table)
            self.verify(table)
            try:
                handle = pq.ParquetFile(self.source(table), page_checksum_verification=True)
            except (OSError, pa.ArrowException) as exc:
                raise CorruptReportError(path, f"corrupt or truncated Parquet file: {exc}") from exc
            meta = handle.schema_arrow.metadata or {}
            if meta.get(b"generation", b"").decode() != self.header.get("generation"):
                raise CorruptReportError(
                    path,
                    f"belongs to another save of this report than {HEADER} "
                    "(an interrupted save?); save the report again",
                )
            expected = {"cases": self.n_rows, "texts": self.header.get("n_texts")}.get(table)
            if expected is not None and handle.metadata.num_rows != expected:
                raise CorruptReportError(
                    path, f"has {handle.metadata.num_rows} rows, header says {expected}"
                )
            self._files[table] = handle
        return self._files[table]

    def column(self, table: str, name: str) -> pa.ChunkedArray:
        """One whole column of one table (read once, then cached)."""
        if self._tables is not None:
            return self._table(table).column(name)
        key = (table, name)
        if key not in self._columns:
            handle = self.file(table)
            try:
                read = handle.read(columns=[name], use_threads=False)
            except (OSError, pa.ArrowException) as exc:
                raise CorruptReportError(
                    self.path(table), f"cannot read column {name!r}: {exc}"
                ) from exc
            self._columns[key] = read.column(0)
        return self._columns[key]

    def codes(self, table: str, name: str) -> tuple[np.ndarray, list[str]]:
        """A string column as int32 codes into its distinct values in first-seen order (-1
        for null), like ``pd.factorize``, read dictionary-encoded from Parquet: no Python
        string per row, no string buffer (not cached: the caller keeps the small codes)."""
        column = self._dictionary(table, name).unify_dictionaries()
        if not column.num_chunks:
            return np.zeros(0, np.int32), []
        codes = np.empty(len(column), np.int32)
        start = 0
        for chunk in column.chunks:
            indices = chunk.indices.fill_null(-1) if chunk.null_count else chunk.indices
            codes[start : start + len(chunk)] = indices.to_numpy(zero_copy_only=False)
            start += len(chunk)
        values = column.chunk(0).dictionary.to_pylist()
        if self._tables is not None:  # Arrow encoded one array: already in first-seen order
            return codes, values
        return _first_seen(codes, values)

    def _dictionary(self, table: str, name: str) -> pa.ChunkedArray:
        """A string column dictionary-encoded (a stored one read so from Parquet)."""
        if self._tables is not None:
            return _encoded(self._table(table).column(name))
        handle = self.file(table)
        try:
            reader = pq.ParquetFile(
                self.source(table),
                metadata=handle.metadata,
                read_dictionary=[name],
                page_checksum_verification=True,
            )
            return reader.read(columns=[name], use_threads=False).column(0)
        except (OSError, pa.ArrowException) as exc:
            raise CorruptReportError(
                self.path(table), f"cannot read column {name!r}: {exc}"
            ) from exc

    def forget(self, table: str, *names: str) -> None:
        """Drop cached columns whose values a caller has copied out (read again if needed)."""
        if self._tables is not None:
            return  # the tables are the data: nothing to drop
        for name in names:
            self._columns.pop((table, name), None)
        pa.default_memory_pool().release_unused()  # else mimalloc keeps the pages resident

    def numpy(self, table: str, name: str) -> np.ndarray:
        """A column as numpy (object arrays for text, NaN for null numbers)."""
        column = self.column(table, name)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            return np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)
        if pa.types.is_boolean(column.type):
            return np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)
        if column.null_count and pa.types.is_integer(column.type):
            return column.to_numpy(zero_copy_only=False).astype(float)
        return column.to_numpy(zero_copy_only=False)

    def row_range(self, table: str, start: int, stop: int) -> tuple[pa.Table, int]:
        """The row groups of ``table`` that hold case results ``start:stop``, and the first
        case row of the first of them (reads only those groups)."""
        starts = self.group_start_rows(table)
        if not len(starts):
            return SCHEMAS[table].empty_table(), 0
        lo = max(int(np.searchsorted(starts, start, side="right")) - 1, 0)
        hi = max(int(np.searchsorted(starts, stop - 1, side="right")) - 1, lo)
        key = (table, lo, hi)
        data = self._recent_groups.get(key)
        if data is None:
            data = self._read_groups(table, lo, hi)
            self._recent_groups[key] = data
            if len(self._recent_groups) > 6:  # a page of records reads a group once
                self._recent_groups.popitem(last=False)
        return data, int(starts[lo])

    def read_rows(
        self, table: str, rows: np.ndarray, columns: Sequence[str], *, one_per_row: bool
    ) -> pa.Table:
        """``columns`` of ``table`` for the ascending report ``rows``, read one cases row
        group at a time and only those columns (cases: one table row per report row; other
        tables: every row whose ``row`` is in; ``columns`` then holds "row")."""
        parts = []
        groups = np.searchsorted(self.group_start_rows("cases"), rows, side="right") - 1
        starts = self.group_start_rows(table)
        for group in np.unique(groups).tolist() if len(starts) else []:
            mine = rows[groups == group]
            lo = max(int(np.searchsorted(starts, mine[0], side="right")) - 1, 0)
            hi = max(int(np.searchsorted(starts, mine[-1], side="right")) - 1, lo)
            data = self._read_groups(table, lo, hi, columns)
            if one_per_row:
                parts.append(data.take(pa.array(mine - int(starts[lo]), pa.int64())))
            else:
                parts.append(data.filter(pa.array(np.isin(data.column("row").to_numpy(), mine))))
        return pa.concat_tables(parts) if parts else SCHEMAS[table].empty_table().select(columns)

    def score_metadata(self, rows: np.ndarray) -> list[tuple[str, str | None]]:
        """``(name, metadata JSON)`` of every score of the ascending report ``rows``, read
        from the scores table's two columns (what a score's convention or judge is read from,
        when a report recorded no evaluator list), no record built."""
        table = self.read_rows("scores", rows, ("row", "name", "metadata"), one_per_row=False)
        names, metadata = table.column("name").to_pylist(), table.column("metadata").to_pylist()
        return list(zip(names, metadata, strict=True))

    def _read_groups(
        self, table: str, lo: int, hi: int, columns: Sequence[str] | None = None
    ) -> pa.Table:
        """Row groups ``lo..hi`` of ``table`` (only ``columns``, when given)."""
        if self._tables is not None:  # one row group: the whole table
            data = self._table(table)
            return data if columns is None else data.select(list(columns))
        try:
            return self.file(table).read_row_groups(
                list(range(lo, hi + 1)),
                columns=None if columns is None else list(columns),
                use_threads=False,
            )
        except (OSError, pa.ArrowException) as exc:
            raise CorruptReportError(self.path(table), f"cannot read row group: {exc}") from exc

    def group_start_rows(self, table: str) -> np.ndarray:
        """The first case row of each row group (cases: cumulative counts; others: ``row``;
        an in-memory report's tables are one group each)."""
        if table not in self._group_starts and self._tables is not None:
            self._group_starts[table] = np.zeros(min(self.num_rows(table), 1), dtype=np.int64)
        if table not in self._group_starts:
            meta = self.file(table).metadata
            if table == "cases":
                sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
                starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if sizes else np.zeros(0)
            else:
                index = self.file(table).schema_arrow.get_field_index("row")
                starts = np.asarray(
                    [_min_stat(meta.row_group(i).column(index)) for i in range(meta.num_row_groups)]
                )
            self._group_starts[table] = np.asarray(starts, dtype=np.int64)
        return self._group_starts[table]

    def texts(self) -> pa.ChunkedArray:
        """The texts table's one column (each distinct text once)."""
        return self.column("texts", "text")

    def texts_of(self, ids: list[int]) -> dict[int, str]:
        """Texts by id, reading only the row groups that hold them (all, once cached)."""
        if self._tables is not None or ("texts", "text") in self._columns or not ids:
            column = self.texts()
            return dict(zip(ids, column.take(pa.array(ids, pa.int64())).to_pylist(), strict=True))
        handle = self.file("texts")
        out: dict[int, Any] = {}
        sizes = [
            handle.metadata.row_group(i).num_rows for i in range(handle.metadata.num_row_groups)
        ]
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        wanted = np.asarray(ids, dtype=np.int64)
        groups = np.searchsorted(starts, wanted, side="right") - 1
        for group in np.unique(groups).tolist():
            key = ("texts", group, group)
            data = self._recent_groups.get(key)
            if data is None:
                try:
                    data = handle.read_row_group(group, use_threads=False).column(0)
                except (OSError, pa.ArrowException) as exc:
                    raise CorruptReportError(
                        self.path("texts"), f"cannot read row group: {exc}"
                    ) from exc
                self._recent_groups[key] = data
                if len(self._recent_groups) > 12:
                    self._recent_groups.popitem(last=False)
            picked = wanted[groups == group]
            values = data.take(pa.array(picked - starts[group], pa.int64())).to_pylist()
            out.update(zip(picked.tolist(), values, strict=True))
        return out


def _encoded(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A string column dictionary-encoded as one chunk (nothing to unify; Arrow's encoding
    of one array lists values in first-seen order), or as it is when encoded already."""
    if pa.types.is_dictionary(column.type):
        return column
    return pa.chunked_array([column.combine_chunks().dictionary_encode()])


def _first_seen(codes: np.ndarray, values: list[str]) -> tuple[np.ndarray, list[str]]:
    """Renumber dictionary codes in first-seen order (values never seen are dropped)."""
    order = [c for c in dict.fromkeys(codes[:65_536].tolist()) if c >= 0]  # usually all
    if len(order) < len(values):
        seen, first = np.unique(codes[codes >= 0], return_index=True)
        order = seen[np.argsort(first)].tolist()
    if order == list(range(len(values))):
        return codes, values
    rank = np.full(len(values) + 1, -1, dtype=np.int32)  # the last slot maps -1 to -1
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank[codes], [values[c] for c in order]


def _min_stat(column_meta: Any) -> int:
    stats = column_meta.statistics
    return int(stats.min) if stats is not None and stats.has_min_max else 0
