"""Case labels from a side file or a mapping, for loaders whose format has none (BEIR).

Labels (query type, topic, difficulty) let reports be sliced: ``report.summary(by="topic")``,
``compare(..., by="topic")``. Accepted sources:

- a mapping ``{query_id: {"topic": "flow", ...}}``;
- a JSONL file, one object per query: ``{"_id": "1", "topic": "flow"}`` (``query_id`` or
  ``case_id`` also name the query; a ``labels`` object, when present, holds the labels);
- a TSV or CSV file with a header row: the first column is the query id, the others labels.

Bad rows raise ``BenchmarkFormatError`` naming the file and line; labels for unknown queries
are dropped with one ``BenchmarkWarning`` giving the count.
"""

from __future__ import annotations

import csv
import warnings
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from heta_notebook._util.warn import user_stacklevel
from heta_notebook.benchmarks._io import (
    BenchmarkFormatError,
    BenchmarkWarning,
    IdRegistry,
    mapping_field,
    read_jsonl,
    require_file,
    text_field,
)

LabelSource = str | Path | Mapping[str, Mapping[str, Any]]
Labels = dict[str, dict[str, Any]]
_ID_KEYS = ("_id", "query_id", "case_id", "query-id")


def read_labels(source: LabelSource, known: Collection[str] | None = None) -> Labels:
    """Query id → labels from a mapping or a JSONL/TSV/CSV file (see the module docstring)."""
    if isinstance(source, Mapping):
        labels = _from_mapping(source)
        where: Any = "labels mapping"
    else:
        path = require_file(Path(source), "labels file")
        labels = _from_jsonl(path) if path.suffix == ".jsonl" else _from_table(path)
        where = path
    if known is not None:
        unknown = [q for q in labels if q not in known]
        if unknown:
            example = ", ".join(map(repr, unknown[:3]))
            warnings.warn(
                f"{where}: dropped labels of {len(unknown)} unknown quer"
                f"{'y' if len(unknown) == 1 else 'ies'} ({example})",
                BenchmarkWarning,
                stacklevel=user_stacklevel(),
            )
            labels = {q: v for q, v in labels.items() if q in known}
    return labels


def _from_mapping(source: Mapping[str, Any]) -> Labels:
    out: Labels = {}
    for query_id, labels in source.items():
        if not isinstance(labels, Mapping):
            raise BenchmarkFormatError(
                f"labels of query {query_id!r} must be a mapping, got {type(labels).__name__}"
            )
        out[str(query_id)] = dict(labels)
    return out


def _from_jsonl(path: Path) -> Labels:
    out: Labels = {}
    ids = IdRegistry("query id", path)
    for line, row in read_jsonl(path):
        key = next((k for k in _ID_KEYS if k in row), None)
        if key is None:
            raise BenchmarkFormatError(
                f"no query id (one of {', '.join(_ID_KEYS)})", file=path, line=line
            )
        query_id = text_field(row, key, file=path, line=line)
        ids.add(query_id, line)
        if "labels" in row:
            out[query_id] = mapping_field(row, "labels", file=path, line=line)
        else:
            out[query_id] = {k: v for k, v in row.items() if k != key}
    return out


def _from_table(path: Path) -> Labels:
    delimiter = "," if path.suffix == ".csv" else "\t"
    out: Labels = {}
    ids = IdRegistry("query id", path)
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        header = next(reader, None)
        if not header or len(header) < 2:
            raise BenchmarkFormatError(
                "needs a header row: the query id column, then one column per label",
                file=path,
                line=1,
            )
        names = [h.strip() for h in header[1:]]
        for line, row in enumerate(reader, start=2):
            if not row or not "".join(row).strip():
                continue
            if len(row) != len(header):
                raise BenchmarkFormatError(
                    f"expected {len(header)} columns like the header, got {len(row)}",
                    file=path,
                    line=line,
                )
            query_id = row[0].strip()
            if not query_id:
                raise BenchmarkFormatError("empty query id", file=path, line=line)
            ids.add(query_id, line)
            out[query_id] = {n: v.strip() for n, v in zip(names, row[1:], strict=True) if v.strip()}
    return out


__all__ = ["LabelSource", "read_labels"]
