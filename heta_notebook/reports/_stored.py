"""A stored report's header and its case results built lazily from its columns.

``read_header`` checks a report folder's header (format, version, digest) and
``_checked_name`` each table file it names; ``LazyCaseResults`` is ``report.case_results`` of an opened report: records
built on access from the row groups of its ``ReportColumns`` (``reports._columns``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import pyarrow as pa

from heta_notebook.reports._tables import (
    _TABLE_FILE,
    BOOL,
    CASES_PER_GROUP,
    FORMAT,
    FORMAT_VERSION,
    HEADER,
    TEXT,
    CorruptReportError,
)
from heta_notebook.schema._records import (
    EvaluationCaseResult,
    EvaluationScore,
    QueryResult,
    check_schema_version,
)

if TYPE_CHECKING:  # pragma: no cover - the view builds these records, and imports this module
    from heta_notebook.reports._columns import ReportColumns


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

    def __init__(self, columnar: ReportColumns) -> None:
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
    columnar: ReportColumns, start: int, stop: int, keep: np.ndarray | None = None
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
    columnar: ReportColumns, table: str, start: int, stop: int, keep: np.ndarray | None = None
) -> dict[int, list]:
    """Rows of ``table`` whose ``row`` is in ``start:stop`` (and in ``keep``), grouped by row."""
    grouped: dict[int, list] = {}
    if columnar.num_rows(table) == 0:
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
