"""The column writer: a report's records as Arrow tables (cases, results, texts, scores).

The table schemas of the folder format and the checkpoint, and the one conversion from
records to columns (each field read in one pass, JSON written once per distinct object,
credentials hidden before anything is stored).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic_core import to_json

from heta_notebook._util.gc import paused_gc
from heta_notebook.reports._lazy_results import LazyResults
from heta_notebook.schema._construct import ConstructedScores, LazyScores
from heta_notebook.schema._records import (
    EvaluationCaseResult,
    EvaluationScore,
    ReportFormatError,
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
_TABLE_FILE = re.compile(r"^(cases|results|texts|scores|misses)(\.[0-9a-f]{16})?\.parquet$")

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
# An optional table (format version 2 readers that predate it ignore it): what the explorer
# reads of ``misses(level="evidence")``, kept by a save that classified the report anyway
# (for the miss counts of the header), so opening a large report's explorer reads it instead
# of classifying its evidence again. ``row``: the case result; ``stage_ranks``: JSON.
MISSES_SCHEMA = pa.schema(
    [
        ("row", pa.int32()),
        ("label", pa.string()),
        ("matched", pa.bool_()),
        ("miss_class", pa.string()),
        ("stage", pa.string()),
        ("rank", pa.int64()),
        ("document_rank", pa.int64()),
        ("stage_ranks", pa.string()),
    ]
)
SAVED_MISS_COLUMNS = tuple(MISSES_SCHEMA.names[1:])  # the evidence frame's columns kept
OPTIONAL_TABLES = ("misses",)
SCHEMAS = {
    "cases": CASES_SCHEMA,
    "results": RESULTS_SCHEMA,
    "texts": TEXTS_SCHEMA,
    "scores": SCORES_SCHEMA,
    "misses": MISSES_SCHEMA,
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
        self.file = str(file)
        self.error = None  # type: ignore[assignment]  # no underlying exception


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


def record_tables(
    results: Sequence[EvaluationCaseResult],
    *,
    with_hits: bool = True,
    scores: pa.Table | None = None,
) -> dict[str, pa.Table]:
    """The tables of in-memory records (``ReportColumns.of_records``): ``case_batches``
    without its storing step, so the columns hold what the records hold (what a system said
    was redacted when it entered the report; nothing here is stored). ``with_hits=False``: only
    ``cases`` and ``scores`` (a response's results are most of the work; frames need none).
    ``scores``: these records' scores table, built before (its columns are reused)."""
    text_ids: dict[str, int] = {}
    reused = None if scores is None else scores.drop_columns(["row"])
    with paused_gc():
        batches = _case_batches(results, 0, text_ids, reused, with_hits=with_hits)
    tables = {name: pa.Table.from_batches([batch]) for name, batch in batches.items()}
    if not with_hits:
        return {name: tables[name] for name in ("cases", "scores")}
    tables["texts"] = pa.table({"text": pa.array(list(text_ids), pa.large_string())})
    return tables


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
    *,
    with_hits: bool = True,
) -> dict[str, pa.RecordBatch]:
    n = len(results)
    records = list(map(_DICT, results))
    responses = list(map(_RESPONSE, records))
    errors = list(map(_ERROR, records))
    hit_lists = [() if r is None else r.results for r in responses]
    score_lists = list(map(_SCORES, records))
    hit_counts = n_results_column = np.fromiter(map(len, hit_lists), np.int64, n)
    if not with_hits:  # the ``results`` rows left out (``n_results`` still counts them)
        hit_lists, hit_counts = [()] * n, np.zeros(n, np.int64)
    n_hits = int(hit_counts.sum())
    hit_fields = _lazy_hit_fields(hit_lists, n_hits)  # array results: no record built
    hits = [] if hit_fields is not None else list(chain.from_iterable(hit_lists))
    score_counts = np.fromiter(map(len, score_lists), np.int64, n)
    n_scores = int(score_counts.sum())
    if scores is None or len(scores) != n_scores:
        scores = _rows_of_batches(score_lists)  # rows of score columns: no record built
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
        error_columns = [n] * 3  # type: ignore[list-item]  # all null
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
                n_results_column,
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


def _rows_of_batches(score_lists: Sequence[Sequence[EvaluationScore]]) -> pa.Table | None:
    """The ``scores`` rows of case results whose scores are rows of their batches' score
    columns (``LazyScores``, unbuilt), from each batch's ``score_table`` (written once per
    batch, as the checkpoint writes it); None when some case holds records."""
    rows = [s for s in score_lists if isinstance(s, LazyScores) and not s.built]
    if not rows or len(rows) < len(score_lists):
        return None
    tables: dict[int, tuple[int, int, pa.Table]] = {}  # id(columns) -> offset, width, table
    offset = 0
    starts, widths = [], []
    for scores in rows:
        found = tables.get(id(scores.columns))
        if found is None:
            table = score_table(scores.columns)
            found = tables[id(scores.columns)] = (offset, len(scores.columns), table)
            offset += len(table)
        starts.append(found[0] + scores.row * found[1])
        widths.append(found[1])
    counts = np.asarray(widths, np.int64)
    take = np.repeat(np.asarray(starts, np.int64) - (np.cumsum(counts) - counts), counts)
    take += np.arange(int(counts.sum()))
    parts = [table for _, _, table in tables.values()]
    combined = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
    return combined.take(pa.array(take, pa.int64()))


def equals(column: Any, value: str) -> np.ndarray:
    """Where an Arrow string column equals ``value``, as numpy (what consumers outside
    ``reports/`` ask of a column without importing pyarrow)."""
    return pc.equal(column, value).to_numpy(zero_copy_only=False)


def score_tables(columns: Sequence[Sequence[Sequence[EvaluationScore]]]) -> pa.Table:
    """One ``score_table`` of several buffered batches' score columns, in order."""
    tables = [score_table(c) for c in columns]
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


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


def _score_flags(md: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """A score's status (None: scored, with no reason), reason and metadata JSON:
    functions of its metadata only."""
    if md and not FLAG_KEYS.isdisjoint(md):
        code, reason = status_and_reason(md)
        return STATUSES[code], reason, _json(md)
    return None, None, _json(md)  # "scored"
