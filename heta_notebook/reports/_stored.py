"""A stored report's columns read from Parquet, and its case results built lazily.

``ColumnarReport`` opens one report folder's tables column by column (each read once and
kept); ``LazyCaseResults`` is ``report.case_results`` of an opened report: records built
on access from the row groups that hold them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from heta_notebook.reports._tables import (
    _TABLE_FILE,
    BOOL,
    CASES_PER_GROUP,
    FORMAT,
    FORMAT_VERSION,
    HEADER,
    SCHEMAS,
    TABLES,
    TEXT,
    CorruptReportError,
)
from heta_notebook.schema._records import (
    EvaluationCaseResult,
    EvaluationScore,
    QueryResult,
    check_schema_version,
)


class ColumnarReport:
    """An opened columnar report folder: its header and Parquet tables, read column by column.

    Columns read once are kept, so frames, the card and the explorer share one read.
    Any missing, truncated or foreign table raises :class:`CorruptReportError` naming it.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        header: dict[str, Any] | None = None,
        sources: dict[str, pa.NativeFile] | None = None,
    ):
        self.folder = Path(folder)
        self.header = header if header is not None else read_header(self.folder)
        self.n_rows = int(self.header["n_case_results"])
        self._sources: dict[str, pa.NativeFile] = dict(sources or {})  # open: a re-save
        self._verified: set[str] = set()  # can remove the files, never these handles
        self._files: dict[str, pq.ParquetFile] = {}
        self._columns: dict[tuple[str, str], pa.ChunkedArray] = {}
        self._group_starts: dict[str, np.ndarray] = {}
        self._recent_groups: OrderedDict[tuple[str, int, int], pa.Table] = OrderedDict()

    def __repr__(self) -> str:
        return f"ColumnarReport({str(self.folder)!r}, rows={self.n_rows})"

    def path(self, table: str) -> Path:
        """The Parquet file of ``table`` (named by the header)."""
        return self.folder / _checked_name(self.header, table, self.folder)

    def copy(self) -> ColumnarReport:
        """The same report with its own caches (for another thread), sharing the open files."""
        self.open_all()
        return ColumnarReport(self.folder, self.header, self._sources)

    def open_all(self) -> None:
        """Open every table file now: a later save removes the files, not these handles."""
        for table in TABLES:
            self.source(table)

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
        handle = self.file(table)
        try:
            reader = pq.ParquetFile(
                self.source(table),
                metadata=handle.metadata,
                read_dictionary=[name],
                page_checksum_verification=True,
            )
            column = reader.read(columns=[name], use_threads=False).column(0)
            column = column.unify_dictionaries()
        except (OSError, pa.ArrowException) as exc:
            raise CorruptReportError(
                self.path(table), f"cannot read column {name!r}: {exc}"
            ) from exc
        if not column.num_chunks:
            return np.zeros(0, np.int32), []
        codes = np.empty(len(column), np.int32)
        start = 0
        for chunk in column.chunks:
            indices = chunk.indices.fill_null(-1) if chunk.null_count else chunk.indices
            codes[start : start + len(chunk)] = indices.to_numpy(zero_copy_only=False)
            start += len(chunk)
        return _first_seen(codes, column.chunk(0).dictionary.to_pylist())

    def forget(self, table: str, *names: str) -> None:
        """Drop cached columns whose values a caller has copied out (read again if needed)."""
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
        handle = self.file(table)
        starts = self.group_start_rows(table)
        if not len(starts):
            return SCHEMAS[table].empty_table(), 0
        lo = max(int(np.searchsorted(starts, start, side="right")) - 1, 0)
        hi = max(int(np.searchsorted(starts, stop - 1, side="right")) - 1, lo)
        key = (table, lo, hi)
        data = self._recent_groups.get(key)
        if data is None:
            try:
                data = handle.read_row_groups(list(range(lo, hi + 1)), use_threads=False)
            except (OSError, pa.ArrowException) as exc:
                raise CorruptReportError(self.path(table), f"cannot read row group: {exc}") from exc
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
        handle = self.file(table)
        for group in np.unique(groups).tolist() if len(starts) else []:
            mine = rows[groups == group]
            lo = max(int(np.searchsorted(starts, mine[0], side="right")) - 1, 0)
            hi = max(int(np.searchsorted(starts, mine[-1], side="right")) - 1, lo)
            try:
                data = handle.read_row_groups(
                    list(range(lo, hi + 1)), columns=list(columns), use_threads=False
                )
            except (OSError, pa.ArrowException) as exc:
                raise CorruptReportError(self.path(table), f"cannot read row group: {exc}") from exc
            if one_per_row:
                parts.append(data.take(pa.array(mine - int(starts[lo]), pa.int64())))
            else:
                parts.append(data.filter(pa.array(np.isin(data.column("row").to_numpy(), mine))))
        return pa.concat_tables(parts) if parts else SCHEMAS[table].empty_table().select(columns)

    def group_start_rows(self, table: str) -> np.ndarray:
        """The first case row of each row group (cases: cumulative counts; others: ``row``)."""
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
        if ("texts", "text") in self._columns or not ids:
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


def _refuse_symlink(path: Path) -> None:
    if path.is_symlink():
        from heta_notebook._util.paths import UnsafeNameError

        raise UnsafeNameError(
            f"{path} is a symlink; files inside a report store must be real files"
        )


def _checked_name(header: dict[str, Any], table: str, folder: Path) -> str:
    """The file name the header gives ``table`` (fixed names before format version 2),
    refused unless it is one of ours (no path, no other file)."""
    files = header.get("files")
    if files is None and header.get("format_version", 1) < 2:
        return f"{table}.parquet"
    entry = files.get(table) if isinstance(files, dict) else None
    name = entry.get("name") if isinstance(entry, dict) else None
    match = _TABLE_FILE.match(name) if isinstance(name, str) else None
    if match is None or match.group(1) != table:
        raise CorruptReportError(folder / HEADER, f"names no valid file for the {table} table")
    return str(name)


def table_paths(folder: str | os.PathLike[str]) -> dict[str, Path]:
    """The file of each table of the report committed in ``folder`` (its header names them)."""
    folder = Path(folder)
    header = read_header(folder)
    return {table: folder / _checked_name(header, table, folder) for table in TABLES}


def read_header(folder: Path) -> dict[str, Any]:
    """The header of a columnar report, checked (format, version, schema_version)."""
    path = folder / HEADER
    _refuse_symlink(path)
    try:
        header = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise FileNotFoundError(f"no columnar report at {folder} ({HEADER} is missing)") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptReportError(path, f"corrupt report header: {exc}") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CorruptReportError(path, f"not a {FORMAT} header")
    version = header.get("format_version")
    if isinstance(version, int) and version < 1:
        raise CorruptReportError(path, f"columnar format version {version!r} does not exist")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CorruptReportError(
            path,
            f"columnar format version {version!r} is newer than this heta-notebook "
            f"reads ({FORMAT_VERSION}); upgrade heta-notebook",
        )
    check_schema_version(header.get("schema_version"), where=str(path))
    for key in ("n_case_results", "generation"):
        if key not in header:
            raise CorruptReportError(path, f"header has no {key!r}")
    digested = version >= 2 or _HEADER_DIGEST in header or "files" in header
    if digested and header.get(_HEADER_DIGEST) != header_digest(header):
        raise CorruptReportError(
            path, f"its {_HEADER_DIGEST} does not match its content (corrupt or edited)"
        )
    return header


_HEADER_DIGEST = "header_sha256"


def header_digest(header: dict[str, Any]) -> str:
    """The sha256 of a header's content (every key but the digest, canonical JSON)."""
    content = {k: v for k, v in header.items() if k != _HEADER_DIGEST}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class LazyCaseResults(Sequence[EvaluationCaseResult]):
    """``report.case_results`` of a columnar report: records built from the tables on access.

    Indexing reads the row group holding the record (a few recently built records are
    kept); iteration builds records one row group at a time and keeps none of them.
    """

    _KEEP = 256

    def __init__(self, columnar: ColumnarReport) -> None:
        self.columnar = columnar
        self._recent: OrderedDict[int, EvaluationCaseResult] = OrderedDict()

    def __len__(self) -> int:
        return self.columnar.n_rows

    def __repr__(self) -> str:
        return f"<LazyCaseResults {self.columnar.n_rows} case results in {self.columnar.folder}>"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @overload
    def __getitem__(self, index: int) -> EvaluationCaseResult: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[EvaluationCaseResult, ...]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return tuple(self[i] for i in range(start, stop, step))
            return tuple(self.iter_range(start, stop))
        n = len(self)
        row = int(index) + n if int(index) < 0 else int(index)
        if not 0 <= row < n:
            raise IndexError(f"case result {index} out of range ({n} case results)")
        found = self._recent.get(row)
        if found is None:
            found = self._recent[row] = _build_rows(self.columnar, row, row + 1)[0]
            if len(self._recent) > self._KEEP:
                self._recent.popitem(last=False)
        return found

    def __iter__(self) -> Iterator[EvaluationCaseResult]:
        return self.iter_batches()

    def iter_batches(self) -> Iterator[EvaluationCaseResult]:
        """Every record in order, built one cases row group at a time."""
        return self.iter_range(0, len(self))

    def iter_range(self, start: int, stop: int) -> Iterator[EvaluationCaseResult]:
        """Records ``start:stop`` in order, built one cases row group at a time."""
        starts = self.columnar.group_start_rows("cases").tolist()
        if stop - start > CASES_PER_GROUP:  # many records: read the texts column once
            self.columnar.texts()
        for lo, hi in zip(starts, [*starts[1:], self.columnar.n_rows], strict=True):
            if hi > start and lo < stop:
                yield from _build_rows(self.columnar, max(lo, start), min(hi, stop))

    def take(self, rows: Sequence[int]) -> Iterator[EvaluationCaseResult]:
        """Records at the ascending ``rows``, built one cases row group at a time and only
        for those rows (the explorers embed a capped subset of a large report)."""
        wanted = np.asarray(rows, dtype=np.int64)
        if len(wanted) > 1 and (np.diff(wanted) <= 0).any():
            raise ValueError("take() needs ascending, distinct rows")
        starts = self.columnar.group_start_rows("cases")
        bounds = [*starts.tolist(), self.columnar.n_rows]
        groups = np.unique(np.searchsorted(starts, wanted, side="right"))
        if len(wanted) > CASES_PER_GROUP or len(groups) > 2:  # read the texts column once
            self.columnar.texts()
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            picked = wanted[(wanted >= lo) & (wanted < hi)]
            if len(picked):
                yield from _build_rows(self.columnar, int(lo), int(hi), picked)

    def materialize(self) -> tuple[EvaluationCaseResult, ...]:
        """All records as a tuple (what a JSON report holds)."""
        return tuple(self.iter_batches())


def _loads(text: str | None, default: Any = None) -> Any:
    return default if text is None else json.loads(text)


def _build_rows(
    columnar: ColumnarReport, start: int, stop: int, keep: np.ndarray | None = None
) -> list[EvaluationCaseResult]:
    """Build records ``start:stop`` (all inside one cases row group) from the tables, or
    only the ascending rows ``keep`` among them."""
    cases, first = columnar.row_range("cases", start, stop)
    if keep is None:
        keep = np.arange(start, stop, dtype=np.int64)
        cases = cases.slice(start - first, stop - start).to_pylist()
    else:
        cases = cases.take(pa.array(keep - first, pa.int64())).to_pylist()
    results = _rows_of(columnar, "results", start, stop, keep)
    scores = _rows_of(columnar, "scores", start, stop, keep)
    ids = [r["text"] for rows in results.values() for r in rows]
    texts = columnar.texts_of(ids)
    out = []
    for row, case in zip(keep.tolist(), cases, strict=True):
        # The case and response envelopes are validated; their many scores and results were
        # validated when written and are rebuilt with ``model_construct`` (10-50x faster).
        data: dict[str, Any] = {
            **_loads(case["extra"], {}),
            "case_id": case["case_id"],
            "query": case["query"],
            "query_mode": case["query_mode"],
            "latency_ms": case["latency_ms"],
            "metadata": _loads(case["metadata"], {}),
        }
        if case["error_json"] is not None:
            data["error"] = json.loads(case["error_json"])
        if case["has_response"]:
            data["response"] = {
                **_loads(case["response_json"], {}),
                "mode": case["response_mode"],
                "answer": case["answer"],
            }
        try:
            record = EvaluationCaseResult.model_validate(data)
            update: dict[str, Any] = {"scores": tuple(_score(s) for s in scores.get(row, ()))}
            if record.response is not None:
                hits = tuple(_result(r, texts) for r in results.get(row, ()))
                update["response"] = record.response.model_copy(update={"results": hits})
            out.append(record.model_copy(update=update))
        except (ValueError, TypeError, KeyError) as exc:
            raise CorruptReportError(
                columnar.path("cases"), f"case result {row} is invalid:\n{exc}"
            ) from exc
    return out


def _rows_of(
    columnar: ColumnarReport, table: str, start: int, stop: int, keep: np.ndarray | None = None
) -> dict[int, list]:
    """Rows of ``table`` whose ``row`` is in ``start:stop`` (and in ``keep``), grouped by row."""
    grouped: dict[int, list] = {}
    if columnar.file(table).metadata.num_rows == 0:
        return grouped
    data, _ = columnar.row_range(table, start, stop)
    rows = data.column("row").to_numpy()
    lo, hi = np.searchsorted(rows, start), np.searchsorted(rows, stop)
    data = data.slice(lo, hi - lo)
    if keep is not None and len(keep) < stop - start:
        data = data.filter(pa.array(np.isin(rows[lo:hi], keep)))
    for item in data.to_pylist():
        grouped.setdefault(item["row"], []).append(item)
    return grouped


@functools.lru_cache(maxsize=65536)
def _parsed_source(text: str) -> Any:
    return json.loads(text)


def _source(text: str | None) -> dict[str, Any]:
    """A result's source keys (repeated across cases: parsed once, copied per record)."""
    return {} if text is None else dict(_parsed_source(text))


def _score(s: dict[str, Any]) -> EvaluationScore:
    kind = s["kind"]
    value = s["text"] if kind == TEXT else bool(s["value"]) if kind == BOOL else s["value"]
    return EvaluationScore.model_construct(
        **_loads(s["extra"], {}),
        name=s["name"],
        value=value,
        passed=s["passed"],
        metadata=_loads(s["metadata"], {}),
    )


def _result(r: dict[str, Any], texts: dict[int, str]) -> QueryResult:
    return QueryResult.model_construct(
        **_loads(r["extra"], {}),
        id=r["id"],
        text=texts[r["text"]],
        score=r["score"],
        kind=r["kind"],
        source=_source(r["source"]),
        metadata=_loads(r["metadata"], {}),
    )
