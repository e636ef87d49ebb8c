"""The columnar report format: a JSON header plus four Parquet tables, opened lazily.

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
import functools
import hashlib
import json
import os
import re
import secrets
import tempfile
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import chain, islice
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, NamedTuple, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic_core import to_json

from heta_notebook._util.gc import paused_gc
from heta_notebook.schema._construct import ConstructedScores
from heta_notebook.schema._lazy_results import LazyResults
from heta_notebook.schema._records import (
    EvaluationCaseResult,
    EvaluationReport,
    EvaluationScore,
    QueryResult,
    ReportFormatError,
    check_schema_version,
)
from heta_notebook.schema._status import FLAG_KEYS, STATUSES, status_and_reason

FORMAT = "heta-notebook-columnar"
FORMAT_VERSION = 2  # 2: tables named per save (``cases.{generation}.parquet``) + sha256
HEADER = "header.json"
TABLES = ("cases", "results", "texts", "scores")
_CASE_TABLES = ("cases", "results", "scores")  # one row group each per case group
CASES_PER_GROUP = 1000  # case results per Parquet row group: the unit of lazy reads
TEXTS_PER_GROUP = 8192  # texts per row group: one record reads only the groups it needs
_COMPRESSION = "zstd"

CASES_SCHEMA = pa.schema(
    [
        ("case_id", pa.string()),
        ("query", pa.string()),
        ("query_mode", pa.string()),
        ("latency_ms", pa.float64()),
        ("error", pa.string()),
        ("error_type", pa.string()),
        ("error_json", pa.string()),
        ("has_response", pa.bool_()),
        ("response_mode", pa.string()),
        ("answer", pa.string()),
        ("response_json", pa.string()),
        ("n_results", pa.int32()),
        ("n_scores", pa.int32()),
        ("metadata", pa.string()),
        ("extra", pa.string()),
    ]
)
RESULTS_SCHEMA = pa.schema(
    [
        ("row", pa.int32()),
        ("rank", pa.int32()),
        ("id", pa.string()),
        ("text", pa.int32()),
        ("score", pa.float64()),
        ("kind", pa.string()),
        ("source", pa.string()),
        ("metadata", pa.string()),
        ("extra", pa.string()),
    ]
)
TEXTS_SCHEMA = pa.schema([("text", pa.large_string())])
SCORES_SCHEMA = pa.schema(
    [
        ("row", pa.int32()),
        ("name", pa.string()),
        ("value", pa.float64()),
        ("text", pa.string()),
        ("kind", pa.int8()),
        ("passed", pa.bool_()),
        ("status", pa.string()),
        ("reason", pa.string()),
        ("metadata", pa.string()),
        ("extra", pa.string()),
    ]
)
SCHEMAS = {
    "cases": CASES_SCHEMA,
    "results": RESULTS_SCHEMA,
    "texts": TEXTS_SCHEMA,
    "scores": SCORES_SCHEMA,
}
FLOAT, BOOL, TEXT = 0, 1, 2  # scores.kind: how ``value`` was typed


_ID, _TEXT, _SCORE, _KIND = (attrgetter(a) for a in ("id", "text", "score", "kind"))
_SOURCE, _METADATA, _EXTRA = (attrgetter(a) for a in ("source", "metadata", "__pydantic_extra__"))
_NAME, _VALUE, _PASSED = (attrgetter(a) for a in ("name", "value", "passed"))
_DICT, _SCORES, _RESPONSE, _ERROR = (
    attrgetter("__dict__"),
    *(itemgetter(k) for k in ("scores", "response", "error")),
)
_CASE_ID, _QUERY, _QUERY_MODE, _LATENCY, _METADATA_KEY = (
    itemgetter(k) for k in ("case_id", "query", "query_mode", "latency_ms", "metadata")
)
_FIRST, _SECOND, _THIRD = (itemgetter(i) for i in range(3))
_HIT_FIELDS = itemgetter("id", "text", "score", "kind", "source", "metadata")
_SCORE_FIELDS = itemgetter("name", "value", "passed", "metadata")


class CorruptReportError(ReportFormatError):
    """A columnar report file is missing, truncated, corrupt or from another save."""

    def __init__(self, file: Any, message: str) -> None:
        ValueError.__init__(self, f"{file}: {message}")
        self.file, self.error = str(file), None


# --------------------------------------------------------------------------- writing


def _json(value: Any) -> str | None:
    """Compact JSON of a dict/list (None when empty); NaN/inf inside become null."""
    if not value:
        return None
    return to_json(value, inf_nan_mode="null").decode("utf-8")


def _json_shared(values: Iterable[Any]) -> pa.Array:
    """``_json`` of each value as a string column, computed once per distinct object (the
    hits of one document share its source dict; a case's scores share a few metadata
    dicts) and repeated by Arrow, not by Python."""
    values = list(values)
    keys = np.fromiter(map(id, values), np.int64, len(values))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if len(first) == len(values):
        return pa.array(list(map(_json, values)), pa.string())
    texts = pa.array([_json(values[i]) for i in first.tolist()], pa.string())
    return texts.take(pa.array(inverse.astype(np.int64)))


def _per_object(values: list[Any], build: Any) -> list[Any]:
    """``build(v)`` for each of ``values``, called once per distinct object (``values``
    holds them alive, so their ids stay unique)."""
    keys = list(map(id, values))
    done = dict(zip(keys, values, strict=True))
    for key, value in done.items():
        done[key] = build(value)
    return list(map(done.__getitem__, keys))


def _response_json(response: Any) -> str | None:
    """A response's fields beyond mode, results and answer, as JSON (None when all empty)."""
    if response is None:
        return None
    fields = response.__dict__
    if not (
        fields["citations"] or fields["trace"] or fields["metadata"] or response.__pydantic_extra__
    ):
        return None
    rest = response.model_dump(mode="json", exclude={"mode", "results", "answer"})
    return _json({k: v for k, v in rest.items() if v not in ({}, [], None)})


class TableWriter:
    """Collects rows of one report's tables and writes them as Parquet, texts deduplicated.

    ``add(result)`` takes one ``EvaluationCaseResult``; bench scripts may also call the
    ``add_*_columns`` methods with ready columns. ``finish()`` writes the header last.
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

    def text_id(self, text: str) -> int:
        """The index of ``text`` in the texts table (added once)."""
        return self._text_ids.setdefault(text, len(self._text_ids))

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

    def add_group(self, tables: dict[str, pa.Table]) -> None:
        """Write ready ``cases``/``results``/``scores`` tables of the next case results as one
        row group (bulk writers, e.g. bench); ``row`` columns count from this writer's rows."""
        self.flush()
        for name in ("cases", "results", "scores"):
            if len(tables[name]):
                self._write(name, tables[name].select(SCHEMAS[name].names).cast(SCHEMAS[name]))
        self.rows += len(tables["cases"])

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


_TABLE_FILE = re.compile(r"^(cases|results|texts|scores)(\.[0-9a-f]{16})?\.parquet$")
_TEMPORARY = re.compile(r"^\.(cases|results|texts|scores|(header|summary|report)\.json)\..*\.tmp$")


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
        return {_checked_name(header, table, folder) for table in TABLES}
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


def case_columns(
    results: Sequence[EvaluationCaseResult], first_row: int, text_ids: dict[str, int]
) -> dict[str, pa.Table]:
    """The ``cases``, ``results`` and ``scores`` tables of ``results`` (rows counted from
    ``first_row``; new texts get the next ids in ``text_ids``)."""
    return {
        name: pa.Table.from_batches([batch])
        for name, batch in case_batches(results, first_row, text_ids).items()
    }


def case_batches(
    results: Sequence[EvaluationCaseResult],
    first_row: int,
    text_ids: dict[str, int],
    scores: pa.Table | None = None,
) -> dict[str, pa.RecordBatch]:
    """``case_columns`` as record batches: each field read in one C-level ``map`` pass over
    the records, JSON written once per distinct dict object, and every column of one Arrow
    type converted in one call (a checkpoint turns a few records at a time into columns,
    so calls, not values, would dominate). The collector is paused meanwhile: its
    temporaries are acyclic, and each collection they trigger would rescan every record
    the run holds. ``scores``: the results' ``score_table`` when the scorer kept its
    columns (used when its length matches, else the scores are read off the records)."""
    with paused_gc():
        return _redacted(_case_batches(results, first_row, text_ids, scores))


# Columns that carry what systems, endpoints and evaluators said (errors, sources, metadata,
# reasons): credentials in them are hidden before anything is stored (the one policy). Texts
# of documents and answers are data and stay as they are.
_REDACTED_COLUMNS = {
    "cases": ("error", "error_json", "response_json", "metadata", "extra"),
    "results": ("source", "metadata", "extra"),
    "scores": ("reason", "metadata", "extra"),
}
_MAYBE_SECRET = (  # a cheap filter, in Arrow (the policy's own words: redaction._PAIR_WORDS)
    r"(?i)://|=|%3D|basic|bearer|key|token|secret|passw|cookie|auth|sig|credential"
)


def _redacted(batches: dict[str, pa.RecordBatch]) -> dict[str, pa.RecordBatch]:
    """``batches`` with credentials hidden in their free-text columns (only the values the
    filter flags go through Python)."""
    from heta_notebook._util.redaction import redact_text

    out = dict(batches)
    for name, batch in batches.items():
        columns = None
        for column_name in _REDACTED_COLUMNS[name]:
            column = batch.column(column_name)
            if column.null_count == len(column):
                continue
            flagged = pc.match_substring_regex(column, _MAYBE_SECRET)
            if not flagged.true_count:
                continue
            values = column.to_pylist()
            for row in np.flatnonzero(flagged.fill_null(False).to_numpy(False)).tolist():
                values[row] = redact_text(values[row])
            columns = columns or list(batch.columns)
            columns[batch.schema.get_field_index(column_name)] = pa.array(values, column.type)
        if columns is not None:
            out[name] = pa.RecordBatch.from_arrays(columns, schema=batch.schema)
    return out


def _case_batches(
    results: Sequence[EvaluationCaseResult],
    first_row: int,
    text_ids: dict[str, int],
    scores: pa.Table | None = None,
) -> dict[str, pa.RecordBatch]:
    n = len(results)
    records = list(map(_DICT, results))
    responses = list(map(_RESPONSE, records))
    errors = list(map(_ERROR, records))
    hit_lists = [() if r is None else r.results for r in responses]
    score_lists = list(map(_SCORES, records))
    hit_counts = np.fromiter(map(len, hit_lists), np.int64, n)
    n_hits = int(hit_counts.sum())
    hit_fields = _lazy_hit_fields(hit_lists, n_hits)  # array results: no record built
    hits = [] if hit_fields is not None else list(chain.from_iterable(hit_lists))
    score_counts = np.fromiter(map(len, score_lists), np.int64, n)
    n_scores = int(score_counts.sum())
    if scores is None or len(scores) != n_scores:
        score_arrays = _score_arrays(list(chain.from_iterable(score_lists)))
    else:
        (batch,) = scores.combine_chunks().to_batches() if len(scores) else [_empty(_SCORE_COLUMNS)]
        score_arrays = batch.columns
    if any(errors):
        error_columns = [
            [None if e is None else e.message for e in errors],
            [None if e is None else e.error_type for e in errors],
            [None if e is None else e.model_dump_json() for e in errors],
        ]
    else:
        error_columns = [n] * 3  # all null
    if hit_fields is None:
        hit_fields = _record_hit_fields(hits)
    ids, text, hit_scores, kind_column, source_column, metadata_column, extra_column = hit_fields
    strings = _arrow(
        pa.string(),
        [
            list(map(_CASE_ID, records)),  # cases
            list(map(_QUERY, records)),
            list(map(_QUERY_MODE, records)),
            *error_columns,
            [None if r is None else r.mode for r in responses],
            [None if r is None else r.answer for r in responses],
            list(map(_response_json, responses)),
            _json_shared(map(_METADATA_KEY, records)),
            _json_shared(map(_EXTRA, results)) if any(map(_EXTRA, results)) else n,
            ids,  # results
            kind_column,
            source_column,
            metadata_column,
            extra_column,
        ],
    )
    (latency,) = _floats([list(map(_LATENCY, records))], finite=(True,))
    (has_response,) = _arrow(pa.bool_(), [[r is not None for r in responses]])
    case_rows = np.arange(first_row, first_row + n, dtype=np.int32)
    found = list(map(text_ids.get, text))  # most texts were seen before: one C-level pass
    if None in found:
        for i, t in enumerate(text):
            if found[i] is None:
                found[i] = text_ids.setdefault(t, len(text_ids))
    text_column = np.asarray(found, dtype=np.int32)
    ranks = np.arange(n_hits) - np.repeat(np.cumsum(hit_counts) - hit_counts, hit_counts) + 1
    ints = pa.array(
        np.concatenate(
            [
                hit_counts,
                score_counts,
                np.repeat(case_rows, hit_counts),
                ranks,
                text_column,
                np.repeat(case_rows, score_counts),
            ]
        ).astype(np.int32)
    )
    bounds = np.cumsum([0, n, n, n_hits, n_hits, n_hits, n_scores]).tolist()
    n_results, n_scored, hit_rows, rank, text_ids_column, score_rows = (
        ints.slice(lo, hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
    )
    cases = [
        *strings[0:3],
        latency,
        *strings[3:6],
        has_response,
        *strings[6:9],
        n_results,
        n_scored,
        *strings[9:11],
    ]
    hit_columns = [hit_rows, rank, strings[11], text_ids_column, hit_scores, *strings[12:16]]
    return {
        "cases": pa.RecordBatch.from_arrays(cases, schema=CASES_SCHEMA),
        "results": pa.RecordBatch.from_arrays(hit_columns, schema=RESULTS_SCHEMA),
        "scores": pa.RecordBatch.from_arrays([score_rows, *score_arrays], schema=SCORES_SCHEMA),
    }


_SCORE_COLUMNS = pa.schema(list(SCORES_SCHEMA)[1:])  # a score table without ``row``


def _record_hit_fields(hits: list[Any]) -> tuple[Any, ...]:
    """The ``results`` columns of result records: ids, texts, scores (Arrow), and kind,
    source, metadata and extra as ``_arrow`` columns."""
    n_hits = len(hits)
    fields = zip(*map(_HIT_FIELDS, map(_DICT, hits)), strict=True) if hits else [()] * 6
    ids, text, hit_score, kind, source, hit_metadata = fields
    hit_extras = list(map(_EXTRA, hits))
    (scores,) = _floats([hit_score], finite=(True,))
    return (
        ids,
        text,
        scores,
        _Same(kind[0], n_hits) if hits and kind.count(kind[0]) == n_hits else kind,
        _json_shared(source),
        _json_shared(hit_metadata) if any(hit_metadata) else n_hits,
        _json_shared(hit_extras) if any(hit_extras) else n_hits,
    )


def _lazy_hit_fields(hit_lists: list[Any], n_hits: int) -> tuple[Any, ...] | None:
    """``_record_hit_fields`` read from the columns of array results (``LazyResults``), or
    None when some results are records (then every hit is read as a record)."""
    if not n_hits or not all(isinstance(h, LazyResults) or not h for h in hit_lists):
        return None
    parts = [h.columns.hit_columns() for h in hit_lists if h]
    kinds = {part.kind for part in parts}
    scores = np.concatenate([part.scores for part in parts])
    return (
        list(chain.from_iterable(part.ids for part in parts)),
        list(chain.from_iterable(part.texts for part in parts)),
        pa.array(scores, pa.float64(), mask=~np.isfinite(scores)),
        _Same(kinds.pop(), n_hits)
        if len(kinds) == 1
        else list(chain.from_iterable([part.kind] * len(part.ids) for part in parts)),
        list(chain.from_iterable(part.sources for part in parts)),
        list(chain.from_iterable(part.metadata for part in parts)),
        n_hits,  # no unknown fields
    )


def _score_arrays(scores: list[Any]) -> list[pa.Array]:
    """The ``scores`` table's columns but ``row`` for these score records, in order."""
    n_scores = len(scores)
    fields = zip(*map(_SCORE_FIELDS, map(_DICT, scores)), strict=True) if scores else [()] * 4
    names, values, passed, mds = fields
    plain = set(map(type, values)) <= {float}  # the common case: every value a float
    score_texts = n_scores if plain else [v if isinstance(v, str) else None for v in values]
    flags = _per_object(list(mds), _score_flags)  # (status, reason, json) once per dict
    flagged = any(map(_FIRST, flags))  # a skipped, failed or judged score
    score_extras = list(map(_EXTRA, scores))
    name, text, status, reason, metadata, extra = _arrow(
        pa.string(),
        [
            names,
            score_texts,
            [s or "scored" for s in map(_FIRST, flags)] if flagged else _Same("scored", n_scores),
            list(map(_SECOND, flags)) if flagged else n_scores,
            list(map(_THIRD, flags)),
            _json_shared(score_extras) if any(score_extras) else n_scores,
        ],
    )
    if plain:
        score_values: Sequence[Any] = values
        kinds = np.full(n_scores, FLOAT, dtype=np.int8)
    else:
        score_values = [None if isinstance(v, str) else float(v) for v in values]
        kinds = np.fromiter(
            (
                TEXT if isinstance(v, str) else BOOL if isinstance(v, bool) else FLOAT
                for v in values
            ),
            np.int8,
            n_scores,
        )
    (value,) = _floats([score_values], finite=(None if plain else False,))
    (passed_array,) = _arrow(pa.bool_(), [passed])
    return [name, value, text, pa.array(kinds), passed_array, status, reason, metadata, extra]


def score_table(columns: Sequence[Sequence[EvaluationScore]]) -> pa.Table:
    """The ``scores`` rows (without ``row``) of a batch scored by evaluator: ``columns``
    holds one list of scores per evaluator, each in case order; rows come out case by case,
    in evaluator order, as the records hold them. ``ConstructedScores`` columns are written
    from the lists they were built from (their values as one matrix, each metadata list
    once: BEIR's metrics at one cutoff share one), any other read off its records."""
    with paused_gc():
        n, width = (len(columns[0]) if columns else 0), len(columns)
        fast = [i for i, column in enumerate(columns) if _constructed(column)]
        slow = [i for i in range(width) if i not in set(fast)]
        if not slow:
            return _constructed_table([columns[i] for i in fast], n)  # type: ignore[misc]
        rows = [columns[i][case] for case in range(n) for i in slow]  # read off the records
        read = pa.Table.from_arrays(_score_arrays(rows), schema=_SCORE_COLUMNS)
        if not fast:
            return read
        built = _constructed_table([columns[i] for i in fast], n)  # type: ignore[misc]
        place = np.empty(width, dtype=np.int64)  # each evaluator's offset, a case's stride
        stride = np.empty(width, dtype=np.int64)
        place[fast], stride[fast] = np.arange(len(fast)), len(fast)
        place[slow], stride[slow] = len(built) + np.arange(len(slow)), len(slow)
        take = (np.arange(n)[:, None] * stride[None, :] + place[None, :]).ravel()
        return pa.concat_tables([built, read]).take(pa.array(take, pa.int64()))


def _constructed(column: Sequence[Any]) -> bool:
    """Whether ``column`` is a ``ConstructedScores`` whose values are all floats."""
    if not isinstance(column, ConstructedScores):
        return False
    values = column.values
    if isinstance(values, np.ndarray):
        return values.dtype.kind == "f"
    return set(map(type, values)) <= {float}


def _all_none(values: Sequence[Any]) -> bool:
    if isinstance(values, list):
        return values.count(None) == len(values)
    return all(v is None for v in values)


def _constructed_table(columns: Sequence[ConstructedScores], n: int) -> pa.Table:
    width, total = len(columns), len(columns) * n
    names = pa.array([c.name for c in columns], pa.string())
    by_case = np.tile(np.arange(width), n)  # evaluator of each case-major row
    cases = np.repeat(np.arange(n), width)
    values = np.empty((n, width), dtype=float)
    for j, column in enumerate(columns):
        values[:, j] = column.values
    lists = {id(c.metadata): c for c in columns}  # distinct metadata lists
    where = {key: i for i, key in enumerate(lists)}
    mds = list(chain.from_iterable(c.metadata for c in lists.values()))
    texts = [c.metadata_json for c in lists.values()]
    if all(t is not None for t in texts) and all(map(FLAG_KEYS.isdisjoint, mds)):
        flagged = False  # every score "scored", no reason: the JSON its scorer wrote
        (metadata,) = _arrow(pa.string(), [list(chain.from_iterable(texts))])  # type: ignore[arg-type]
        reason = pa.nulls(total, pa.string())
    else:
        flags = _per_object(mds, _score_flags)
        flagged = any(map(_FIRST, flags))
        status, reason, metadata = _arrow(
            pa.string(),
            [
                [s or "scored" for s in map(_FIRST, flags)] if flagged else len(flags),
                list(map(_SECOND, flags)) if flagged else len(flags),
                list(map(_THIRD, flags)),
            ],
        )
    list_of = np.asarray([where[id(c.metadata)] for c in columns])
    shared = pa.array(list_of[by_case] * n + cases, pa.int64())
    if all(_all_none(c.passed) for c in columns):
        passed = pa.nulls(total, pa.bool_())
    else:
        passed = pa.array(list(chain.from_iterable(c.passed for c in columns)), pa.bool_())
        passed = passed.take(pa.array(by_case * n + cases, pa.int64()))
    return pa.Table.from_arrays(
        [
            names.take(pa.array(by_case, pa.int64())),
            pa.array(values.ravel(), pa.float64()),
            pa.nulls(total, pa.string()),
            pa.array(np.full(total, FLOAT, dtype=np.int8)),
            passed,
            status.take(shared) if flagged else pa.repeat(pa.scalar("scored"), total),
            reason.take(shared) if flagged else pa.nulls(total, pa.string()),
            metadata.take(shared),
            pa.nulls(total, pa.string()),
        ],
        schema=_SCORE_COLUMNS,
    )


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)


class _Same(NamedTuple):
    """A column holding one value ``n`` times (converted once)."""

    value: Any
    n: int


def _arrow(
    kind: pa.DataType, columns: list[Sequence[Any] | int | _Same | pa.Array]
) -> list[pa.Array]:
    """Columns of one Arrow type, converted in one call (then zero-copy slices); a column
    given as a number ``n`` is ``n`` nulls, a ``_Same`` one value repeated, an Arrow array
    is kept."""
    lists = [c for c in columns if not isinstance(c, (int, _Same, pa.Array))]
    flat = pa.array(list(chain.from_iterable(lists)), kind)
    out, start = [], 0
    for column in columns:
        if isinstance(column, pa.Array):  # ready
            out.append(column)
        elif isinstance(column, _Same):
            out.append(pa.repeat(pa.scalar(column.value, kind), column.n))
        elif isinstance(column, int):
            out.append(pa.nulls(column, kind))
        else:
            out.append(flat.slice(start, len(column)))
            start += len(column)
    return out


def _floats(columns: list[Sequence[Any]], finite: tuple[bool | None, ...]) -> list[pa.Array]:
    """Float columns in one conversion: None is null, and so are NaN/inf where ``finite``
    (``None``: the column holds floats only, no null)."""
    data = np.asarray(list(chain.from_iterable(columns)), dtype=float)
    null = np.isnan(data)  # None became NaN
    start = 0
    for column, strict in zip(columns, finite, strict=True):
        if strict:
            part = slice(start, start + len(column))
            null[part] = ~np.isfinite(data[part])
        elif strict is None:  # no None (every value a float): NaN stays NaN, never null
            null[start : start + len(column)] = False
        else:  # only None is null: a NaN value stays NaN
            null[start : start + len(column)] = [v is None for v in column]
        start += len(column)
    flat = pa.array(data, pa.float64(), mask=null)
    out, start = [], 0
    for column in columns:
        out.append(flat.slice(start, len(column)))
        start += len(column)
    return out


def _score_flags(md: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """A score's status (None: scored, with no reason), reason and metadata JSON:
    functions of its metadata only."""
    if md and not FLAG_KEYS.isdisjoint(md):
        code, reason = status_and_reason(md)
        return STATUSES[code], reason, _json(md)
    return None, None, _json(md)  # "scored"


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
        writer.finish(header, exclusive=exclusive)
    except BaseException:
        writer.abort()
        raise


# --------------------------------------------------------------------------- checkpoints

CHECKPOINT = "cases.arrows"  # a run's checkpoint: an Arrow IPC stream, one batch per append
CHECKPOINT_FORMAT = "heta-notebook-checkpoint"
CHECKPOINT_VERSION = 1
CHECKPOINT_SCHEMA = pa.schema(
    [
        *(pa.field(name, pa.list_(pa.struct(list(SCHEMAS[name])))) for name in _CASE_TABLES),
        pa.field("texts", pa.list_(pa.large_string())),  # the texts this batch adds
    ],
    metadata={"format": CHECKPOINT_FORMAT, "format_version": str(CHECKPOINT_VERSION)},
)
_COMPACT_EVERY = 40  # appended batches joined into one table (few chunks at the save)


class CaseBatches:
    """A run's case results as columns, built once when they are checkpointed.

    ``add`` turns finished results into the ``cases``/``results``/``scores`` rows of the
    report tables (``row`` counts from the first result checkpointed; texts get ids once)
    and returns the one-row Arrow batch that the checkpoint stream appends. The final save
    takes the report's rows from here (``tables_for``) instead of walking its records again.
    """

    def __init__(self) -> None:
        self.text_ids: dict[str, int] = {}
        self.rows = 0
        self._tables: dict[str, list[pa.Table]] = {name: [] for name in _CASE_TABLES}
        self._batches: dict[str, list[pa.RecordBatch]] = {name: [] for name in _CASE_TABLES}
        self._known: dict[int, tuple[EvaluationCaseResult, int]] = {}  # id -> (record, row)

    def add(
        self, results: Iterable[EvaluationCaseResult], scores: pa.Table | None = None
    ) -> pa.RecordBatch:
        """Columns of ``results`` (kept) and the checkpoint batch that holds them
        (``scores``: their ``score_table``, if the scorer kept one)."""
        results = list(results)
        before = len(self.text_ids)
        batches = case_batches(results, self.rows, self.text_ids, scores)
        texts = list(islice(reversed(self.text_ids), len(self.text_ids) - before))[::-1]
        for name, batch in batches.items():
            self._batches[name].append(batch)
        if len(self._batches["cases"]) >= _COMPACT_EVERY:
            self._compact()
        start = self.rows
        self.rows += len(results)
        self._known.update(
            zip(map(id, results), zip(results, range(start, self.rows), strict=True), strict=True)
        )
        return _nest(batches, texts)

    def _compact(self) -> None:
        """Join the batches appended since the last call into one table per table name."""
        for name in _CASE_TABLES:
            if self._batches[name]:
                table = pa.Table.from_batches(self._batches[name], SCHEMAS[name])
                self._tables[name].append(table)  # chunked: joined without a copy
                self._batches[name] = []

    def extend(self, tables: dict[str, pa.Table], texts: list[str]) -> None:
        """Take the rows of a checkpoint stream read back (before any ``add``): new rows
        and texts are numbered after them."""
        if self.rows or self.text_ids:
            raise RuntimeError("CaseBatches.extend() must come before add()")
        self.text_ids = dict(zip(texts, range(len(texts)), strict=True))
        self._keep(tables, [None] * len(tables["cases"]))

    def register(self, rows: Iterable[tuple[int, EvaluationCaseResult]]) -> None:
        """Say which record each (row, record) pair of the rows read back is."""
        self._known.update((id(record), (record, row)) for row, record in rows)

    def _keep(self, tables: dict[str, pa.Table], records: Sequence[Any]) -> None:
        self._compact()
        for name in _CASE_TABLES:
            self._tables[name].append(tables[name])
        known = self._known
        for row, record in enumerate(records, start=self.rows):
            if record is not None:
                known[id(record)] = (record, row)
        self.rows += len(records)

    def rows_of(self, records: Sequence[EvaluationCaseResult]) -> np.ndarray:
        """The row of each record in ``tables()`` (-1 for a record not held here)."""
        known, rows = self._known, np.full(len(records), -1, np.int64)
        for position, record in enumerate(records):
            entry = known.get(id(record))
            if entry is not None and entry[0] is record:
                rows[position] = entry[1]
        return rows

    def tables(self) -> dict[str, pa.Table]:
        """The ``cases`` and ``scores`` rows held so far, in row order."""
        self._compact()
        return {
            name: pa.concat_tables([SCHEMAS[name].empty_table(), *self._tables[name]])
            for name in ("cases", "scores")
        }

    def tables_for(
        self, records: Sequence[EvaluationCaseResult]
    ) -> tuple[dict[str, pa.Table], list[str]]:
        """The report tables of ``records`` in their order (rows renumbered) and the texts
        they index; records not checkpointed here (e.g. resumed from ``cases.jsonl``) are
        turned into columns now."""
        known, rows, missing = self._known, np.empty(len(records), np.int64), []
        for position, record in enumerate(records):
            entry = known.get(id(record))
            if entry is None or entry[0] is not record:
                missing.append(position)
            else:
                rows[position] = entry[1]
        if missing:
            start = self.rows
            self._keep(
                case_columns([records[i] for i in missing], start, self.text_ids),
                [records[i] for i in missing],
            )
            rows[missing] = np.arange(start, self.rows)
        self._compact()
        tables = {name: pa.concat_tables(self._tables[name]) for name in _CASE_TABLES}
        if not (len(rows) == self.rows and (rows == np.arange(self.rows)).all()):
            tables = _reorder(tables, rows)
        return tables, list(self.text_ids)


def _nest(batches: dict[str, pa.RecordBatch], texts: list[str]) -> pa.RecordBatch:
    """One checkpoint batch: each table as a one-row list of structs, plus the new texts."""
    columns = []
    for values in (*(batches[name].to_struct_array() for name in _CASE_TABLES), texts):
        if isinstance(values, list):
            values = pa.array(values, pa.large_string())
        offsets = pa.array(np.asarray([0, len(values)], dtype=np.int32))
        columns.append(pa.ListArray.from_arrays(offsets, values))
    return pa.RecordBatch.from_arrays(columns, schema=CHECKPOINT_SCHEMA)


def _reorder(tables: dict[str, pa.Table], rows: np.ndarray) -> dict[str, pa.Table]:
    """``tables`` with their case rows taken in the order ``rows`` (renumbered 0..n-1)."""
    cases = tables["cases"]
    out = {"cases": cases.take(pa.array(rows))}
    for name, count in (("results", "n_results"), ("scores", "n_scores")):
        counts = cases.column(count).to_numpy().astype(np.int64)
        starts = np.cumsum(counts) - counts
        picked, first = counts[rows], starts[rows]
        offsets = np.cumsum(picked) - picked
        index = np.repeat(first - offsets, picked) + np.arange(int(picked.sum()))
        table = tables[name].take(pa.array(index, pa.int64()))
        renumbered = np.repeat(np.arange(len(rows), dtype=np.int32), picked)
        out[name] = table.set_column(0, "row", pa.array(renumbered, pa.int32()))
    return out


CHECKPOINT_SUMS = "cases.arrows.sums"  # per message of the stream: end offset, sha256, cases


class CheckpointWarning(UserWarning):
    """A corrupt checkpoint batch was cut (like a torn tail); names the file and the loss."""


class CheckpointScan(NamedTuple):
    """What a checkpoint stream holds: its rows, texts, and the messages kept (end offsets
    and sha256 digests; ``good`` is where the kept bytes end)."""

    tables: dict[str, pa.Table]
    texts: list[str]
    good: int
    ends: list[int]
    digests: list[str]
    counts: list[int]


def read_checkpoint_stream(
    data: bytes | pa.Buffer, path: Any, sums: bytes | None = None
) -> tuple[dict[str, pa.Table], list[str], int]:
    """Parse a checkpoint stream: its tables, texts and the byte length of its kept batches
    (see :func:`scan_checkpoint`)."""
    scan = scan_checkpoint(data, path, sums)
    return scan.tables, scan.texts, scan.good


def scan_checkpoint(
    data: bytes | pa.Buffer, path: Any, sums: bytes | None = None
) -> CheckpointScan:
    """Parse and check a checkpoint stream before any of it is used.

    Each message is checked against its sha256 in ``sums`` (the ``cases.arrows.sums``
    lines; ``None`` for a stream of an earlier version) and each batch validated in full
    (offsets, lengths, UTF-8, row numbers, text ids). A torn last batch (a killed process)
    is left out silently; a corrupt one is cut the same way, with a :class:`CheckpointWarning`
    naming the file and the case results dropped. A stream that is not a checkpoint (or
    of a newer version) raises a ``ValueError`` naming the file.
    """
    data = data.to_pybytes() if isinstance(data, pa.Buffer) else bytes(data)
    spans = None if sums is None else _sum_lines(sums)
    reader = _StreamChecker(data, path)
    problem = None
    while reader.good < len(data) and problem is None and not reader.done:
        if spans is not None and len(reader.ends) >= len(spans):
            break  # bytes without a checksum: an append torn between its two writes
        span = None if spans is None else spans[len(reader.ends)]
        problem = reader.next(span)
    if problem is not None:
        _warn_cut(path, problem, reader, spans)
    return reader.result()


def _sum_lines(sums: bytes) -> list[tuple[int, str, int]]:
    """The complete ``end sha256 cases`` lines of a sums file (a bad line ends the list
    with a span no message matches: the message it covers is cut)."""
    spans = []
    for line in sums.split(b"\n")[:-1]:  # the last piece is a torn line or b""
        parts = line.split(b" ")
        if len(parts) != 3 or not (parts[0].isdigit() and parts[2].isdigit()):
            spans.append((-1, "", 0))
            break
        spans.append((int(parts[0]), parts[1].decode("ascii", "replace"), int(parts[2])))
    return spans


def sums_line(end: int, digest: str, cases: int) -> str:
    """One line of ``cases.arrows.sums``: where a message ends, its sha256, its case results."""
    return f"{end} {digest} {cases}\n"


class _StreamChecker:
    """Reads a checkpoint stream message by message, checking each before keeping it."""

    def __init__(self, data: bytes, path: Any) -> None:
        self.data, self.path = data, path
        self.good, self.schema = 0, None
        self.ends: list[int] = []
        self.digests: list[str] = []
        self.counts: list[int] = []  # case results per kept message
        self.batches: list[pa.RecordBatch] = []
        self.rows = self.n_texts = 0
        self.done = False

    def next(self, span: tuple[int, str, int] | None) -> str | None:
        """Check and keep the next message; a reason when it is corrupt, None otherwise
        (a torn last message of a stream without checksums sets ``done``)."""
        start = self.good
        if span is not None:
            end, digest, _ = span
            if not start < end <= len(self.data):
                return f"its checksum list names a message ending at byte {end}"
            chunk = self.data[start:end]
            if hashlib.sha256(chunk).hexdigest() != digest:
                return f"the message at byte {start} does not match its sha256"
        else:
            chunk = self.data[start:]
        try:
            source = pa.BufferReader(chunk)
            message = pa.ipc.read_message(source)
            size = source.tell()
        except EOFError:
            self.done = span is None
            return None if span is None else f"a truncated message at byte {start}"
        except (OSError, pa.ArrowException) as exc:
            if span is None and ("byte" in str(exc) or "available" in str(exc)):
                self.done = True  # cut short: a torn last batch
                return None
            return f"unreadable message at byte {start}: {exc}"
        if span is not None and size != len(chunk):
            return f"the message at byte {start} does not end where its checksum says"
        rows = self.rows
        problem = self._keep(message, start)
        if problem is None:
            self.counts.append(self.rows - rows)
            self.good = start + size
            self.ends.append(self.good)
            digest = span[1] if span is not None else hashlib.sha256(chunk[:size]).hexdigest()
            self.digests.append(digest)
        return problem

    def _keep(self, message: Any, start: int) -> str | None:
        try:
            if self.schema is None:
                schema = pa.ipc.read_schema(message)
                _check_checkpoint_schema(schema, self.path)
                self.schema = schema
                return None
            batch = pa.ipc.read_record_batch(message, self.schema)
            self.rows, self.n_texts = _check_batch(batch, self.rows, self.n_texts)
        except _CheckpointRefused:
            raise
        except (OSError, ValueError, pa.ArrowException) as exc:
            return f"corrupt batch at byte {start}: {exc}"
        self.batches.append(batch)
        return None

    def result(self) -> CheckpointScan:
        if self.schema is None:
            empty = {n: pa.Table.from_batches([_empty(SCHEMAS[n])]) for n in _CASE_TABLES}
            return CheckpointScan(empty, [], 0, [], [], [])
        table = pa.Table.from_batches(self.batches, schema=self.schema)
        tables = {}
        for name in _CASE_TABLES:
            values = table.column(name).combine_chunks().flatten()
            tables[name] = pa.Table.from_arrays(values.flatten(), schema=SCHEMAS[name])
        texts = table.column("texts").combine_chunks().flatten().to_pylist()
        return CheckpointScan(tables, texts, self.good, self.ends, self.digests, self.counts)


class _CheckpointRefused(ValueError):
    """Not a checkpoint this version reads (foreign or newer): an error, never a cut."""


def _check_batch(batch: pa.RecordBatch, rows: int, n_texts: int) -> tuple[int, int]:
    """Validate one appended batch in full; the row and text counts after it."""
    batch.validate(full=True)  # offsets, lengths, UTF-8
    cases = batch.column("cases").flatten()
    counts = {}
    for name, count in (("results", "n_results"), ("scores", "n_scores")):
        numbers = cases.field(count)
        if numbers.null_count or (len(numbers) and pc.min(numbers).as_py() < 0):
            raise ValueError(f"cases.{count} holds a null or a negative count")
        counts[name] = numbers.to_numpy()
    n = len(cases)
    if cases.field("case_id").null_count or cases.field("query_mode").null_count:
        raise ValueError("a case without a case_id or query_mode")
    new_texts = batch.column("texts").flatten()
    if new_texts.null_count:
        raise ValueError("a null text")
    for name in ("results", "scores"):
        table = batch.column(name).flatten()
        if int(counts[name].sum(dtype=np.int64)) != len(table):  # before any allocation
            raise ValueError(f"cases' counts of {name} do not add up to the {name} written")
        expected = np.repeat(np.arange(rows, rows + n, dtype=np.int64), counts[name])
        row = table.field("row")
        if row.null_count or not np.array_equal(row.to_numpy(), expected):
            raise ValueError(f"{name} rows do not match their cases' counts")
    text_ids = batch.column("results").flatten().field("text").drop_null()
    limit = n_texts + len(new_texts)
    if len(text_ids) and not 0 <= pc.min(text_ids).as_py() <= pc.max(text_ids).as_py() < limit:
        raise ValueError(f"a result names a text outside the {limit} texts written")
    kinds = batch.column("scores").flatten().field("kind").drop_null()
    if len(kinds) and not 0 <= pc.min(kinds).as_py() <= pc.max(kinds).as_py() <= TEXT:
        raise ValueError("a score of an unknown kind")
    return rows + n, limit


def _warn_cut(path: Any, problem: str, reader: _StreamChecker, spans: Any) -> None:
    """Say which file was cut where, and how many case results the cut drops (from the
    sums; a stream without sums: counted in the batches that still validate)."""
    import warnings

    if spans is not None:
        later = spans[len(reader.ends) :]
        dropped = sum(count for *_, count in later)
        known = later and later[-1][0] >= 0 and later[-1][0] == len(reader.data)
        count = f"{dropped} case result(s)" if known else f"at least {dropped} case result(s)"
    else:
        dropped, unreadable = _count_later_cases(reader)
        more = f" and {unreadable} unreadable batch(es)" if unreadable else ""
        count = f"{dropped} case result(s){more}"
    warnings.warn(
        f"{path}: {problem}; the checkpoint is cut there like a torn tail, dropping "
        f"{count} (they run again on resume)",
        CheckpointWarning,
        stacklevel=4,
    )


def _count_later_cases(reader: _StreamChecker) -> tuple[int, int]:
    """Case results in the batches after a cut that still validate, and the batches that
    do not (the first unreadable one ends the count: nothing frames the bytes after it)."""
    dropped, position, data, schema = 0, reader.good, reader.data, reader.schema
    while position < len(data):
        try:
            source = pa.BufferReader(data[position:])
            message = pa.ipc.read_message(source)
            if schema is None:
                schema = pa.ipc.read_schema(message)
            else:
                batch = pa.ipc.read_record_batch(message, schema)
                batch.validate(full=True)
                dropped += len(batch.column("cases").flatten())
            position += source.tell()
        except Exception:  # noqa: BLE001 - counting only; the cut is decided
            return dropped, 1
    return dropped, 0


def _check_checkpoint_schema(schema: pa.Schema, path: Any) -> None:
    meta = schema.metadata or {}
    if meta.get(b"format") != CHECKPOINT_FORMAT.encode():
        raise _CheckpointRefused(f"{path}: not a {CHECKPOINT_FORMAT} stream")
    version = meta.get(b"format_version", b"")
    if not version.isdigit() or int(version) > CHECKPOINT_VERSION:
        raise _CheckpointRefused(
            f"{path}: checkpoint format version {version.decode(errors='replace')!r} is newer "
            f"than this heta-notebook reads ({CHECKPOINT_VERSION}); upgrade heta-notebook"
        )
    if schema.remove_metadata() != CHECKPOINT_SCHEMA.remove_metadata():
        raise _CheckpointRefused(f"{path}: checkpoint columns differ from this heta-notebook's")


def records_of(tables: dict[str, pa.Table], texts: list[str]) -> list[EvaluationCaseResult]:
    """Build the records of checkpointed rows (through a temporary columnar copy, removed
    after: records are built by the one columnar reader)."""
    if not len(tables["cases"]):
        return []
    with tempfile.TemporaryDirectory(prefix="heta-checkpoint-") as tmp:
        writer = TableWriter(Path(tmp))
        try:
            writer.add_tables(tables, texts)
            writer.finish({})
        except BaseException:
            writer.abort()
            raise
        return list(LazyCaseResults(ColumnarReport(tmp)).iter_batches())


# --------------------------------------------------------------------------- reading


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
        starts = self._group_start_rows(table)
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

    def _group_start_rows(self, table: str) -> np.ndarray:
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
        handle, out = self.file("texts"), {}
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
    return name


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


def open_report(folder: str | os.PathLike[str]) -> EvaluationReport:
    """Open a columnar report: the header and its files now (a save meanwhile commits a
    new generation: opened again), case results lazily (``LazyCaseResults``)."""
    for attempt in range(_OPEN_ATTEMPTS):
        columnar = ColumnarReport(folder)
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
        raise CorruptReportError(
            columnar.folder / HEADER, f"invalid report header:\n{exc}"
        ) from exc
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
        starts = self.columnar._group_start_rows("cases").tolist()
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
        starts = self.columnar._group_start_rows("cases")
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


def is_columnar(folder: Path) -> bool:
    """Whether ``folder`` holds a columnar report (its header exists)."""
    return (folder / HEADER).exists() or (folder / HEADER).is_symlink()


__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ColumnarReport",
    "CaseBatches",
    "CheckpointWarning",
    "CorruptReportError",
    "LazyCaseResults",
    "TableWriter",
    "is_columnar",
    "open_report",
    "read_header",
    "table_paths",
    "write_report",
]
