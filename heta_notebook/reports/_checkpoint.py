"""The one checkpoint format: an Arrow IPC stream of report-table rows, with its sums.

``cases.arrows`` holds one batch per append (``CaseBatches``); ``cases.arrows.sums`` one
line per message (end offset, sha256, cases), checked before a batch is used; a torn or
corrupt tail is cut once when the stream is reopened.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from heta_notebook._util.warn import user_stacklevel
from heta_notebook.reports._columns import ReportColumns
from heta_notebook.reports._folder import TableWriter
from heta_notebook.reports._stored import LazyCaseResults
from heta_notebook.reports._tables import (
    _CASE_TABLES,
    SCHEMAS,
    TEXT,
    _empty,
    case_batches,
    case_columns,
)
from heta_notebook.schema._records import (
    EvaluationCaseResult,
)

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
        they index; records not checkpointed here (e.g. resumed from a saved report) are
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
        stacklevel=user_stacklevel(),
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
        return list(LazyCaseResults(ReportColumns(tmp)).iter_batches())


# --------------------------------------------------------------------------- reading
