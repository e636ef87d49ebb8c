"""The report folder format: a JSON header plus four Parquet tables, opened lazily.

Why Parquet (and not Arrow IPC): Parquet's dictionary and run-length encodings plus zstd
make a report about a tenth of its JSON (repeated source keys, score names, statuses and
query modes cost almost nothing), every column chunk can be read on its own (a card reads
four score columns, never the retrieved texts), and pandas, polars and DuckDB read the
tables directly. Arrow IPC maps into memory faster but stores 3-5x more bytes.

Layout of one report folder (beside heta-framework's ``report.json`` key)::

    header.json      ids, manifests, timestamps, summary, schema_version, row counts,
                     generation (a random token every table carries), and ``files``: the
                     name, size and sha256 of each table file of this save
    cases.{generation}.parquet    one row per case result: case_id, query, query_mode,
                     latency_ms, error, answer, response (citations/trace/metadata as
                     JSON), metadata
    results.{generation}.parquet  one row per retrieved result: row (case result), rank,
                     id, text (index into texts), score, kind, source, metadata
    texts.{generation}.parquet    each distinct chunk/document text once per report
    scores.{generation}.parquet   one row per score: row, name, value, text value, kind,
                     passed, status, reason, metadata (JSON)
    misses.{generation}.parquet   optional: one row per expected evidence item, its miss
                     class as the save classified it for the header's counts (what the
                     explorer shows: ``MISSES_SCHEMA``); named in ``files`` like the others
                     when written, absent from older saves (then classified when explored)

Saves are snapshots (as in Delta Lake or Iceberg): a save writes a new generation of
immutable table files and commits it with one atomic rename of the header; the previous
generation stays readable until then and is removed after, so a reader sees the whole old
or the whole new report. Integrity: Parquet page CRCs are written and checked on every
read, and each file's sha256 is checked against the header when it is first read; a
mismatch is a :class:`CorruptReportError` naming the file. Format version 1 folders (fixed
``{table}.parquet`` names, no digests) still load.

Every table has an ``extra`` JSON column for fields the schema does not know (newer
writers), so a report round-trips losslessly. ``report.case_results`` of an opened report
is a :class:`LazyCaseResults`: records are materialised on access from the row groups
that hold them. Non-finite numbers: see ``schema.EvaluationScore`` (refused in scores;
written as null elsewhere), so a saved report always loads back.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from heta_notebook.reports._columns import ReportColumns
from heta_notebook.reports._stored import (
    _HEADER_DIGEST,
    LazyCaseResults,
    _checked_name,
    header_digest,
)
from heta_notebook.reports._tables import (
    _COMPRESSION,
    _TABLE_FILE,
    CASES_PER_GROUP,
    FORMAT,
    FORMAT_VERSION,
    HEADER,
    MISSES_SCHEMA,
    OPTIONAL_TABLES,
    SCHEMAS,
    TABLES,
    TEXTS_PER_GROUP,
    CorruptReportError,
    case_columns,
)
from heta_notebook.schema._records import (
    EvaluationCaseResult,
    EvaluationReport,
)

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.reports._checkpoint import CaseBatches


class TableWriter:
    """Collects rows of one report's tables and writes them as Parquet, texts deduplicated.

    ``add(result)`` takes one ``EvaluationCaseResult``, ``add_tables`` a checkpoint's ready
    tables. ``finish()`` writes the header last.
    """

    def __init__(self, folder: Path, cases_per_group: int = CASES_PER_GROUP) -> None:
        self.folder = folder
        self.cases_per_group = cases_per_group
        self.generation = secrets.token_hex(8)
        self.rows = 0
        self._text_ids: dict[str, int] = {}  # each text -> its row in the texts table
        self._pending: list[EvaluationCaseResult] = []
        self._writers: dict[str, pq.ParquetWriter] = {}
        self._tmp: dict[str, str] = {}  # table -> its file of this save (immutable once named)

    def add(self, result: EvaluationCaseResult) -> None:
        """Append one case result (its columns are built a row group at a time)."""
        self._pending.append(result)
        self.rows += 1
        if len(self._pending) >= self.cases_per_group:
            self.flush()

    def add_tables(self, tables: dict[str, pa.Table], texts: list[str]) -> None:
        """Write whole ``cases``/``results``/``scores`` tables (case rows ``0..n-1``, text ids
        indexing ``texts``) in row groups of ``cases_per_group`` case results (a fresh writer)."""
        if self.rows or self._text_ids or self._pending:
            raise RuntimeError("add_tables() needs a fresh TableWriter")
        self._text_ids = dict(zip(texts, range(len(texts)), strict=True))
        cases = tables["cases"]
        bounds = {
            "cases": np.arange(len(cases) + 1),
            **{
                name: np.concatenate([[0], np.cumsum(cases.column(count).to_numpy())])
                for name, count in (("results", "n_results"), ("scores", "n_scores"))
            },
        }
        starts = list(range(0, len(cases), self.cases_per_group))

        def write(name: str) -> None:
            bound = bounds[name]
            for start in starts:
                stop = min(start + self.cases_per_group, len(cases))
                lo, hi = int(bound[start]), int(bound[stop])
                if hi > lo:
                    self._write(name, tables[name].slice(lo, hi - lo))

        # One thread per table: Parquet encodes and compresses without the GIL.
        with ThreadPoolExecutor(len(bounds)) as pool:
            list(pool.map(write, bounds))
        self.rows = len(cases)

    def add_misses(self, columns: dict[str, list[Any]] | None) -> None:
        """Keep the classified miss rows (``ReportFrames.miss_rows_to_save``) as the optional
        ``misses`` table of this save; nothing when None or when a value does not fit its
        column (a save never fails for what only spares an explorer some work)."""
        if columns is None:
            return
        try:
            table = pa.table(columns, schema=MISSES_SCHEMA)
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            return
        self._write("misses", table)

    def flush(self) -> None:
        """Write the pending case results as one row group per table."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        tables = case_columns(pending, self.rows - len(pending), self._text_ids)
        for name in ("cases", "results", "scores"):
            if len(tables[name]):
                self._write(name, tables[name])

    def _write(self, name: str, table: pa.Table) -> None:
        if name not in self._writers:
            path = self.folder / table_file(name, self.generation)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
            os.close(fd)  # 0o666 less the umask, like every other file of a (shared) store
            self._tmp[name] = str(path)
            self._writers[name] = pq.ParquetWriter(
                path,
                SCHEMAS[name].with_metadata({"generation": self.generation}),
                compression=_COMPRESSION,
                use_dictionary=True,
                write_page_checksum=True,
            )
        size = TEXTS_PER_GROUP if name == "texts" else max(len(table), 1)
        self._writers[name].write_table(table, row_group_size=size)

    def finish(self, header: dict[str, Any], *, exclusive: bool = False) -> None:
        """Write the texts and close every table (a new generation of immutable files),
        then commit: one atomic rename of the header that names them. The previous
        generation stays readable until then and is removed after; ``exclusive`` (the
        caller holds the report's lock) also removes what dead saves left behind."""
        self.flush()
        texts = pa.table({"text": pa.array(list(self._text_ids), pa.large_string())})
        self._write("texts", texts)
        for name in TABLES:  # empty reports still get every table
            if name not in self._writers:
                self._write(name, SCHEMAS[name].empty_table())
        try:
            for writer in self._writers.values():
                writer.close()
            files = {name: _file_entry(Path(path)) for name, path in self._tmp.items()}
        except BaseException:
            self.abort()
            raise
        full = {
            **header,
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "generation": self.generation,
            "n_case_results": self.rows,
            "n_texts": len(self._text_ids),
            "files": files,
        }
        full[_HEADER_DIGEST] = header_digest(full)
        from heta_notebook._util.paths import atomic_write_text

        previous = committed_files(self.folder)
        try:
            atomic_write_text(self.folder / HEADER, json.dumps(full, indent=1, allow_nan=False))
        except BaseException:
            self.abort()
            raise
        _fsync_folder(self.folder)
        keep = {entry["name"] for entry in files.values()}
        for stale in previous - keep:  # the previous generation: no header names it now
            with contextlib.suppress(FileNotFoundError):
                (self.folder / stale).unlink()
        remove_leftovers(self.folder, keep, min_age=0.0 if exclusive else LEFTOVER_AGE)

    def abort(self) -> None:
        """Drop the files of an unfinished write (no header names them)."""
        for writer in self._writers.values():
            with contextlib.suppress(Exception):  # cleaning up after a failure
                writer.close()
        for tmp in self._tmp.values():
            if os.path.exists(tmp):
                os.unlink(tmp)


LEFTOVER_AGE = 3600.0  # seconds: files of a save that no header names, removed once this old


def table_file(table: str, generation: str) -> str:
    """The file name of ``table`` in the save ``generation`` (never reused)."""
    return f"{table}.{generation}.parquet"


_TEMPORARY = re.compile(
    r"^\.(cases|results|texts|scores|misses|(header|summary|report)\.json)\..*\.tmp$"
)


def _file_entry(path: Path) -> dict[str, Any]:
    """A table file's name, size and sha256 (fsynced first: the header commits it)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
        size = handle.tell()
    return {"name": path.name, "bytes": size, "sha256": digest.hexdigest()}


def committed_files(folder: Path) -> set[str]:
    """The table files the folder's current header names (none without a readable one)."""
    try:
        header = json.loads((folder / HEADER).read_bytes())
        tables = [*TABLES, *(t for t in OPTIONAL_TABLES if t in (header.get("files") or {}))]
        return {_checked_name(header, table, folder) for table in tables}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return set()


def remove_leftovers(folder: Path, keep: set[str], min_age: float = LEFTOVER_AGE) -> list[str]:
    """Remove the temporary and table files of dead saves (no header names them) that are
    at least ``min_age`` seconds old (0 when the caller holds the report's lock)."""
    import time

    removed, now = [], time.time()
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(folder):
            ours = _TABLE_FILE.match(entry.name) or _TEMPORARY.match(entry.name)
            if entry.name in keep or not ours:
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            with contextlib.suppress(FileNotFoundError):
                if now - entry.stat(follow_symlinks=False).st_mtime >= min_age:
                    os.unlink(entry.path)
                    removed.append(entry.name)
    return removed


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (the commit survives a power cut)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def report_header(report: EvaluationReport) -> dict[str, Any]:
    """Every field of ``report`` except its case results, JSON-ready (unknown fields kept),
    credentials in any string hidden (the one redaction policy)."""
    from heta_notebook._util.redaction import redact_strings

    header = redact_strings(report.model_dump(mode="json", exclude={"case_results"}))
    header["score_summary"] = {
        k: v for k, v in header.get("score_summary", {}).items() if v is not None
    }
    return header


def write_report(
    folder: Path,
    report: EvaluationReport,
    *,
    cases_per_group: int = CASES_PER_GROUP,
    batches: CaseBatches | None = None,
    exclusive: bool = False,
) -> None:
    """Write ``report`` in the columnar layout into ``folder``: a new generation of tables,
    committed by renaming the header over the old one (readers see the old or the new
    report, never a mix).

    ``batches``: the columns its run built when checkpointing (``CaseBatches``), reused
    instead of walking the records again. ``exclusive``: the caller holds the report's
    lock, so files of dead saves are removed at once."""
    folder.mkdir(parents=True, exist_ok=True)
    writer = TableWriter(folder, cases_per_group)
    try:
        source = report.case_results
        if batches is not None and not isinstance(source, LazyCaseResults):
            tables, texts = batches.tables_for(source)
            writer.add_tables(tables, texts)
            names = pc.unique(tables["scores"].column("name")).to_pylist()
            report.frames().prime(score_names=names)  # first seen, as the records give
        else:
            for result in source.iter_batches() if isinstance(source, LazyCaseResults) else source:
                writer.add(result)
        header = {**report_header(report), "views": report.frames().views()}
        writer.add_misses(_miss_rows(report))
        writer.finish(header, exclusive=exclusive)
    except BaseException:
        writer.abort()
        raise


def _miss_rows(report: EvaluationReport) -> dict[str, list[Any]] | None:
    """The miss rows a save keeps: those its frames classified for the header's counts, else
    (a stored report saved again) the ones its own save kept; None when neither."""
    rows = report.frames().miss_rows_to_save()
    source = report.case_results
    if rows is None and isinstance(source, LazyCaseResults):
        rows = source.columnar.saved_misses()
    return rows


# --------------------------------------------------------------------------- checkpoints


def open_report(folder: str | os.PathLike[str]) -> EvaluationReport:
    """Open a columnar report: the header and its files now (a save meanwhile commits a
    new generation: opened again), case results lazily (``LazyCaseResults``)."""
    for attempt in range(_OPEN_ATTEMPTS):
        columnar = ReportColumns(folder)
        try:
            columnar.open_all()
            break
        except CorruptReportError:
            if attempt + 1 == _OPEN_ATTEMPTS or _current_generation(folder) in {
                None,
                columnar.header.get("generation"),
            }:
                raise  # not a save in between: the files really are missing
    header = {k: v for k, v in columnar.header.items() if k not in _HEADER_ONLY}
    try:
        shell = EvaluationReport.model_validate({**header, "case_results": ()})
    except ValueError as exc:
        raise CorruptReportError(Path(folder) / HEADER, f"invalid report header:\n{exc}") from exc
    columnar.file("cases")  # fail now, not on first access, when the cases table is bad
    return shell.model_copy(update={"case_results": LazyCaseResults(columnar)})


_HEADER_ONLY = {
    "header_sha256",
    "format",
    "format_version",
    "generation",
    "n_case_results",
    "n_texts",
    "views",
    "files",
}
_OPEN_ATTEMPTS = 20  # a header replaced this often while a report opens: give up


def _current_generation(folder: str | os.PathLike[str]) -> str | None:
    try:
        return json.loads((Path(folder) / HEADER).read_bytes()).get("generation")
    except (OSError, ValueError, AttributeError):
        return None


def is_columnar(folder: Path) -> bool:
    """Whether ``folder`` holds a columnar report (its header exists)."""
    return (folder / HEADER).exists() or (folder / HEADER).is_symlink()
