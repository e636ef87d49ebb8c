"""Turn finished case results into an EvaluationReport: summary, statistics, environment.

Means follow ``evaluators.aggregation.summarize`` (scored cases only; skipped and failed
scores are counted, never averaged in), with its column rules and per-column statistics;
``ScoreColumns`` collects the columns one result at a time as the runner delivers them, so
the end of a run only orders and summarizes them. Nothing here formats for display.
"""

from __future__ import annotations

import copy
import functools
import platform
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib import metadata as importlib_metadata
from itertools import chain
from typing import Any

import numpy as np

# The column rules and per-column statistics of ``summarize``, fed one result at a time.
from heta_notebook.evaluators._aggregation import ScoreAggregate, ScoreColumn, summarize_columns
from heta_notebook.evaluators._aggregation import (
    bootstrap_intervals as aggregation_bootstrap_intervals,
)
from heta_notebook.reports._tables import TEXT, equals
from heta_notebook.runner._config import BenchmarkRunConfig
from heta_notebook.schema._construct import ConstructedScores, LazyScores
from heta_notebook.schema._records import EvaluationCaseResult, EvaluationScore
from heta_notebook.schema._status import ERROR, SKIPPED, status_code

# Libraries whose versions can change a number in a report.
_VERSIONED = (
    "heta-notebook",
    "numpy",
    "pandas",
    "pydantic",
    "scipy",
    "bm25s",
    "heta-framework",
)
# A bootstrap costs n_resamples × n draws per score column; beyond this, keep the t interval.
_BOOTSTRAP_BUDGET = 20_000_000
# From this many draws (1,000 resamples of 400 columns of 225 values: 90 M, ~8 ms) the
# bootstrap runs in a thread beside the end of the run; below, a thread's start is not worth it.
_BESIDE_DRAWS = 5_000_000


def utc_now() -> str:
    """ISO-8601 UTC timestamp, like heta-framework's reports."""
    return datetime.now(timezone.utc).isoformat()


class _Cells:
    """One ``mode.score`` column while results arrive: values keyed by report position."""

    __slots__ = ("positions", "values", "chunks", "skipped", "errors", "passed", "judged", "texts")

    def __init__(self) -> None:
        self.positions: list[int] = []
        self.values: list[Any] = []
        self.chunks: list[tuple[np.ndarray, np.ndarray]] = []  # (positions, values) arrays
        self.skipped = self.errors = self.passed = self.judged = 0
        self.texts: list[tuple[int, str]] = []

    def column(
        self, failed_queries: int, arrays: tuple[np.ndarray, np.ndarray] | None = None
    ) -> ScoreColumn:
        """The column as ``aggregation.summarize`` collects it: values in report order
        (``arrays``: its values and positions already converted, see ``_arrays``)."""
        if arrays is None:
            arrays = (np.asarray(self.values, dtype=float), np.asarray(self.positions, np.int64))
        values, positions = arrays  # converted once: summary and bootstrap
        if len(self.chunks) == 1 and not len(values):  # a run's usual cell: one chunk
            positions, values = self.chunks[0]
            values = values.astype(np.float64, copy=False)  # as concatenated to the floats
        elif self.chunks:
            positions = np.concatenate([positions, *(p for p, _ in self.chunks)])
            values = np.concatenate([values, *(v for _, v in self.chunks)])
        if positions.size > 1 and (positions[1:] < positions[:-1]).any():
            values = values[np.argsort(positions, kind="stable")]
        texts = (
            Counter(text for _, text in sorted(self.texts, key=lambda item: item[0]))
            if self.texts
            else Counter()
        )
        return ScoreColumn(
            values=values,  # type: ignore[arg-type]  # an array where summarize keeps a list
            skipped=self.skipped,
            errors=self.errors + failed_queries,
            passed=self.passed,
            judged=self.judged,
            texts=texts,
        )


class _ModeParts:
    """One score name's batch columns as ``ScoreColumns.fold`` reads them, batch by batch:
    values and positions of every mode together, each row's mode code beside them (codes of
    the rows seen, skipped, judged and passed, counted per mode only by ``split``)."""

    def __init__(self) -> None:
        self.codes: list[np.ndarray] = []
        self.positions: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.seen: list[np.ndarray] = []  # the modes holding this column (cells made)
        self.skipped: list[np.ndarray] = []
        self.judged: list[np.ndarray] = []
        self.passed: list[np.ndarray] = []

    def add(
        self,
        column: ConstructedScores,
        codes: np.ndarray,
        positions: np.ndarray,
        rows: np.ndarray,
        whole: bool,
    ) -> None:
        """Rows ``rows`` of ``column`` (their modes ``codes``, report ``positions``);
        ``whole``: the rows are all of the column's, in order (a batch's usual case)."""
        self.seen.append(codes)
        if column.skipped:
            kept = np.fromiter((r not in column.skipped for r in rows.tolist()), bool, len(rows))
            self.skipped.append(codes[~kept])
            codes, positions, rows, whole = codes[kept], positions[kept], rows[kept], False
        self.codes.append(codes)
        self.positions.append(positions)
        values = np.asarray(column.values)
        self.values.append(values if whole else values[rows])
        verdicts = list(column.passed) if whole else [column.passed[r] for r in rows.tolist()]
        if verdicts.count(None) < len(verdicts):
            judged = np.fromiter((v is not None for v in verdicts), bool, len(verdicts))
            passed = np.fromiter((v is True for v in verdicts), bool, len(verdicts))
            self.judged.append(codes[judged])
            self.passed.append(codes[passed])

    def split(
        self,
        name: str,
        modes: list[str],
        cells_of: dict[str, dict[str, _Cells]],
        orders: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]],
    ) -> None:
        """Hand each mode's values (one chunk, in position order: ``_Cells.column`` then
        has nothing to sort) and counts to its ``name`` cell. ``orders``: the sort of rows
        already worked out for other names holding the same batch arrays (no skipped rows)."""
        n = len(modes)
        order, bounds, positions = self._order(n, orders)
        values = np.concatenate(self.values)[order]
        skipped, judged, passed = (
            np.bincount(np.concatenate(parts), minlength=n) if parts else np.zeros(n, np.int64)
            for parts in (self.skipped, self.judged, self.passed)
        )
        seen = np.zeros(n, bool)
        seen[np.concatenate(self.seen)] = True
        for code in np.flatnonzero(seen).tolist():
            cells = cells_of.setdefault(modes[code], {})
            cell = cells.get(name)
            if cell is None:
                cell = cells[name] = _Cells()
            start, stop = bounds[code], bounds[code + 1]
            if stop > start:
                cell.chunks.append((positions[start:stop], values[start:stop]))
            cell.skipped += int(skipped[code])
            cell.judged += int(judged[code])
            cell.passed += int(passed[code])

    def _order(
        self, n: int, orders: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows by mode, then position (ties as noted), each mode's bounds, and the
        positions so sorted; shared by every name holding the very same arrays."""
        key = (*map(id, self.codes), -1, *map(id, self.positions))  # arrays alive: ids unique
        known = orders.get(key)
        if known is None:
            codes, positions = np.concatenate(self.codes), np.concatenate(self.positions)
            keys = codes * (int(positions.max()) + 1 if len(positions) else 1) + positions
            order = np.argsort(keys, kind="stable")
            bounds = np.searchsorted(codes[order], np.arange(n + 1))
            known = orders[key] = (order, bounds, positions[order])
        return known


class ScoreColumns:
    """Score columns filled one result at a time, in any order; read back in report order.

    The runner adds each result as it is delivered (a few microseconds, while the loop waits
    for queries) instead of walking every score of every result after the last case; the
    statistics are those of the results in position order, by ``aggregation.summarize``'s
    rules (skipped and failed scores counted, never averaged; a failed query counts as an
    error for every score of its mode).
    """

    def __init__(self, batches: Any = None) -> None:
        self._modes: dict[str, dict[str, _Cells]] = {}
        self._failed: Counter[str] = Counter()
        self.aggregates: list[ScoreAggregate] = []  # of the last ``statistics`` call
        self._batches = (
            batches  # a checkpoint's ``reports._checkpoint.CaseBatches``: its score columns
        )
        self._deferred: list[tuple[int, EvaluationCaseResult]] = []
        self._rows: list[tuple[int, str, LazyScores]] = []  # (position, mode, scores)
        self._parts: dict[str, _ModeParts] = {}  # batch columns folded, not yet split by mode
        self._modes_seen: dict[str, int] = {}  # the folded rows' modes: their codes

    def add(self, position: int, result: EvaluationCaseResult) -> None:
        """Count one result at ``position`` (its index in the report's case results).

        With a checkpoint's batches, the result is only noted: ``statistics`` reads its scores
        from the columns the checkpoint builds anyway (one walk of the scores, not two)."""
        if self._batches is not None:
            self._deferred.append((position, result))
        else:
            self._add(position, result)

    def _add(self, position: int, result: EvaluationCaseResult) -> None:
        mode = result.query_mode
        scores = result.scores
        if isinstance(scores, LazyScores) and not scores.built:
            self._rows.append((position, mode, scores))
            return  # its batch's columns are read at once (``fold``)
        cells = self._modes.get(mode)
        if cells is None:
            cells = self._modes[mode] = {}
        if result.error is not None and not scores:
            self._failed[mode] += 1
            return
        self._add_scores(cells, position, scores)

    @staticmethod
    def _add_scores(
        cells: dict[str, _Cells], position: int, scores: Sequence[EvaluationScore]
    ) -> None:
        for score in scores:  # ``aggregation._add``, unrolled: hot loop
            column = cells.get(score.name)
            if column is None:
                column = cells[score.name] = _Cells()
            metadata = score.metadata
            if metadata:
                status = status_code(metadata)  # the one scored/skipped/error rule
                if status == ERROR:
                    column.errors += 1
                    continue
                if status == SKIPPED:
                    column.skipped += 1
                    continue
            value = score.value
            if value.__class__ is str:
                column.texts.append((position, value))
            else:
                column.positions.append(position)
                column.values.append(value)
            if score.passed is not None:
                column.judged += 1
                column.passed += score.passed

    def statistics(
        self, config: BenchmarkRunConfig
    ) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
        """``score_summary`` (means over scored cases) and per-key stats (n, std, CIs, counts)."""
        return self.start_statistics(config).result()

    def start_statistics(self, config: BenchmarkRunConfig) -> PendingStatistics:
        """``statistics``, its bootstrap still running beside the caller when it is large
        (``PendingStatistics.result`` waits for it): the run's end does its other work
        meanwhile."""
        if self._deferred:
            self._add_deferred()
        self.fold()
        if self._parts:
            parts, self._parts = self._parts, {}
            modes: list[str] = list(self._modes_seen)
            orders: dict[tuple[int, ...], Any] = {}
            for name, part in parts.items():
                part.split(name, modes, self._modes, orders)
        named = [
            (m, name, cells)
            for m, by_name in self._modes.items()
            for name, cells in by_name.items()
        ]
        arrays = _arrays([cells for _, _, cells in named])
        columns = {
            f"{mode}.{name}": (mode, name, cells.column(self._failed[mode], pair))
            for (mode, name, cells), pair in zip(named, arrays, strict=True)
        }
        intervals = Beside.call(
            bootstrap_intervals,
            {key: column.values for key, (_, _, column) in columns.items()},
            config,
            beside=_draws(columns.values(), config) >= _BESIDE_DRAWS,
        )
        summary: dict[str, float] = {}
        stats: dict[str, dict[str, Any]] = {}
        self.aggregates = []
        keys = sorted(columns)
        for key, agg in zip(keys, summarize_columns([columns[k] for k in keys], 0.95), strict=True):
            self.aggregates.append(agg)
            if agg.value is not None:
                summary[key] = agg.value
            stats[key] = {
                "mean": agg.value,
                "n": agg.n_scored,
                "std": agg.std,
                "ci95": [agg.ci_low, agg.ci_high] if agg.ci_low is not None else None,
                "bootstrap_ci95": None,  # filled by PendingStatistics.result (key order kept)
                "n_error": agg.n_error,
                "n_skipped": agg.n_skipped,
                "pass_rate": agg.pass_rate,
                **({"counts": agg.counts} if agg.counts else {}),
            }
        return PendingStatistics(summary, stats, intervals)

    def fold(self) -> None:
        """Read the batch rows noted since the last call from their batches' score columns
        (the rules of ``_add``, a column at a time: a ``ConstructedScores`` knowing its skipped
        rows holds scored and skipped float scores only); any other column is read record by
        record. The runner calls it as each batch is delivered, while the loop waits for
        queries; ``statistics`` calls it for whatever is left, then splits by mode.

        A batch holds a few rows of each of many modes, so each column is read once for all its
        rows (their modes as codes) and split by mode once per score name at the end: a run of
        16 modes did ~1,800 (batch, mode) reads of 25 columns each (~0.16 s at its end)."""
        noted, self._rows = self._rows, []
        batches: dict[int, list[tuple[int, str, LazyScores]]] = {}
        for entry in noted:
            batches.setdefault(id(entry[2].columns), []).append(entry)
        code_of, parts = self._modes_seen, self._parts
        for batch in batches.values():
            codes = np.fromiter(
                (code_of.setdefault(m, len(code_of)) for _, m, _ in batch), np.int64, len(batch)
            )
            positions = np.fromiter((p for p, _, _ in batch), np.int64, len(batch))
            rows = np.fromiter((s.row for _, _, s in batch), np.int64, len(batch))
            columns = batch[0][2].columns
            whole = all(len(c) == len(rows) for c in columns) and bool(
                (rows == np.arange(len(rows))).all()
            )
            for column in columns:
                if isinstance(column, ConstructedScores) and column.skipped is not None:
                    part = parts.get(column.name)
                    if part is None:
                        part = parts[column.name] = _ModeParts()
                    part.add(column, codes, positions, rows, whole)
                    continue
                for (position, mode, _), row in zip(batch, rows.tolist(), strict=True):
                    cells = self._modes.setdefault(mode, {})
                    self._add_scores(cells, position, (column[row],))

    def _add_deferred(self) -> None:
        """Count the noted results: from the checkpoint's score columns where it holds them
        (the same rules as ``_add``, a column at a time), the rest one by one."""
        deferred, self._deferred = self._deferred, []
        rows = self._batches.rows_of([result for _, result in deferred])
        held = rows >= 0
        for index in np.flatnonzero(~held).tolist():
            self._add(*deferred[index])
        if not held.any():
            return
        tables = self._batches.tables()
        cases, scores = tables["cases"], tables["scores"]
        case_rows = rows[held]
        positions = np.fromiter((p for p, _ in deferred), np.int64, len(deferred))[held]
        case_modes = cases.column("query_mode").take(case_rows).to_pylist()
        n_scores = cases.column("n_scores").to_numpy().astype(np.int64)
        failed = cases.column("error_json").is_valid().to_numpy(zero_copy_only=False)[case_rows]
        counts = n_scores[case_rows]
        for mode in dict.fromkeys(case_modes):
            self._modes.setdefault(mode, {})
        for mode, fail, count in zip(case_modes, failed.tolist(), counts.tolist(), strict=True):
            if fail and not count:
                self._failed[mode] += 1
        # the score rows of the held cases, in the order the results were noted
        starts = (np.cumsum(n_scores) - n_scores)[case_rows]
        offsets = np.cumsum(counts) - counts
        take = np.repeat(starts - offsets, counts) + np.arange(int(counts.sum()))
        owner = np.repeat(np.arange(len(case_rows)), counts)
        picked = scores.select(["name", "value", "text", "kind", "passed", "status"])
        if not (len(take) == len(picked) and (take == np.arange(len(take))).all()):
            picked = picked.take(take.astype(np.int64))
        names = picked.column("name").combine_chunks().dictionary_encode()
        mode_names, mode_codes = np.unique(
            np.asarray(case_modes, dtype=object), return_inverse=True
        )
        keys = mode_codes[owner].astype(np.int64) * max(len(names.dictionary), 1)
        keys += names.indices.to_numpy(zero_copy_only=False)
        status = picked.column("status")
        errors, skipped, scored = (equals(status, s) for s in ("error", "skipped", "scored"))
        kinds = picked.column("kind").to_numpy()
        values = picked.column("value").to_numpy(zero_copy_only=False)
        passed = picked.column("passed")
        judged = passed.is_valid().to_numpy(zero_copy_only=False)
        passes = passed.fill_null(False).to_numpy(zero_copy_only=False)
        texts = picked.column("text").to_numpy(zero_copy_only=False)
        score_positions = positions[owner]
        groups = _regular_groups(counts, names, mode_names, mode_codes)
        if groups is None:
            order = np.argsort(keys, kind="stable")  # each column's scores in noted order
            unique, first, sizes = np.unique(keys[order], return_index=True, return_counts=True)
            groups = {}
            for key, start, size in sorted(
                zip(unique.tolist(), first.tolist(), sizes.tolist(), strict=True),
                key=lambda group: order[group[1]],  # columns in order of first appearance
            ):
                mode = mode_names[key // max(len(names.dictionary), 1)]
                name = names.dictionary[key % max(len(names.dictionary), 1)].as_py()
                groups[(mode, name)] = order[start : start + size]
        for (mode, name), members in groups.items():
            cells = self._modes[mode]
            column = cells.get(name)
            if column is None:
                column = cells[name] = _Cells()
            at = members
            column.errors += int(errors[at].sum())
            column.skipped += int(skipped[at].sum())
            at = at[scored[at]]
            is_text = kinds[at] == TEXT
            for i in at[is_text].tolist():
                column.texts.append((int(score_positions[i]), texts[i]))
            numeric = at[~is_text]
            column.chunks.append((score_positions[numeric], values[numeric]))
            column.judged += int(judged[at].sum())
            column.passed += int(passes[at].sum())


def _arrays(cells: list[_Cells]) -> list[tuple[np.ndarray, np.ndarray] | None]:
    """Each column's values and positions as arrays, converted in one pass for all columns (a
    run's hundreds of short lists: one conversion each cost most of its statistics); None
    for all when some value is not a plain number (each column then converts its own)."""
    if not cells:
        return []
    lengths = [len(c.values) for c in cells]
    total = sum(lengths)
    if not total:  # every value came in chunks (a run's batches): nothing to convert
        empty = (np.empty(0), np.empty(0, np.int64))
        return [empty] * len(cells)
    try:
        values = np.fromiter(chain.from_iterable(c.values for c in cells), float, total)
    except (TypeError, ValueError):  # e.g. None (NaN by np.asarray): the column's own rule
        return [None] * len(cells)
    positions = np.fromiter(chain.from_iterable(c.positions for c in cells), np.int64, total)
    bounds = np.cumsum(lengths)[:-1]
    return list(zip(np.split(values, bounds), np.split(positions, bounds), strict=True))


def _regular_groups(
    counts: np.ndarray, names: Any, mode_names: np.ndarray, mode_codes: np.ndarray
) -> dict[tuple[str, str], np.ndarray] | None:
    """The score rows of each (mode, score name) when every case holds the same distinct
    names in the same order (a run's usual shape): strided rows, no sort. None otherwise."""
    n = len(counts)
    width = int(counts[0]) if n else 0
    codes = names.indices.to_numpy(zero_copy_only=False)
    if not width or not (counts == width).all() or len(set(codes[:width].tolist())) < width:
        return None
    if not (codes.reshape(n, width) == codes[:width]).all():
        return None
    labels = [names.dictionary[int(code)].as_py() for code in codes[:width]]
    first_case = {int(m): i for i, m in reversed(list(enumerate(mode_codes.tolist())))}
    groups = {}
    for mode in sorted(first_case, key=first_case.__getitem__):  # modes as they appear
        cases = np.flatnonzero(mode_codes == mode) * width
        for offset, name in enumerate(labels):
            groups[(str(mode_names[mode]), name)] = cases + offset
    return groups


def result_tallies(
    results: Sequence[EvaluationCaseResult],
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """Per query mode, query latency p50/p95/mean (ms) and failed queries; and the header's
    counts of failed queries, HTTP retries and abandoned workers. One pass over the results
    (four passes over a 3,600-case run's records cost ~2 ms at its end)."""
    by_mode: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    n_error = n_retries = n_abandoned = 0
    for result in results:
        mode, error, response = result.query_mode, result.error, result.response
        latencies = by_mode.get(mode)
        if latencies is None:
            latencies = by_mode[mode] = []
        if error is None:
            if result.latency_ms is not None:
                latencies.append(result.latency_ms)
        else:
            errors[mode] = errors.get(mode, 0) + 1
            n_error += 1
            n_abandoned += bool(error.metadata.get("abandoned_worker"))
        if response:
            n_retries += int(response.metadata.get("http_retries", 0))
    stats = {}
    for mode, values in by_mode.items():
        data = np.asarray(values, dtype=float)
        p50, p95 = np.percentile(data, [50, 95]) if data.size else (None, None)
        stats[mode] = {
            "p50_ms": None if p50 is None else float(p50),
            "p95_ms": None if p95 is None else float(p95),
            "mean_ms": float(data.mean()) if data.size else None,
            "n": int(data.size),
            "n_error": errors.get(mode, 0),
        }
    counts = {
        "n_query_errors": n_error,
        "n_http_retries": n_retries,
        "n_abandoned_workers": n_abandoned,
    }
    return stats, counts


def environment() -> dict[str, Any]:
    """Library and Python versions, OS family and machine type (no host names, no env vars)."""
    return copy.deepcopy(_environment())


@functools.lru_cache(maxsize=1)
def _environment() -> dict[str, Any]:
    versions = {}
    for name in _VERSIONED:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            continue
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": f"{sys.platform}-{platform.machine()}",
        "libraries": versions,
    }


class PendingStatistics:
    """``ScoreColumns.statistics`` whose bootstrap CIs may still be computing (``result``)."""

    def __init__(
        self, summary: dict[str, float], stats: dict[str, dict[str, Any]], intervals: Beside
    ) -> None:
        self._summary, self._stats, self._intervals = summary, stats, intervals

    def result(self) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
        """``(score_summary, stats)``, the bootstrap CIs in."""
        intervals = self._intervals.result()
        for key, entry in self._stats.items():
            entry["bootstrap_ci95"] = intervals.get(key)
        return self._summary, self._stats


class Beside:
    """A call run in a daemon thread beside the caller, or at once (``beside=False``).

    For numpy work that releases the GIL (a BLAS product, a partition): on a second core
    it costs the caller nothing but the wait in ``result`` for what is left of it."""

    def __init__(self) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def call(cls, function: Any, *args: Any, beside: bool = True) -> Beside:
        """``function(*args)``, beside the caller or not."""
        pending = cls()
        if beside:
            pending._thread = threading.Thread(
                target=pending._run,
                args=(function, *args),
                name="heta-notebook-beside",
                daemon=True,
            )
            pending._thread.start()
        else:
            pending._run(function, *args)
        return pending

    def _run(self, function: Any, *args: Any) -> None:
        try:
            self._value = function(*args)
        except BaseException as exc:  # noqa: BLE001 - raised by result(), in the caller
            self._error = exc

    def result(self) -> Any:
        """The call's value (its exception raised here); waits for the thread."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            raise self._error
        return self._value


def _draws(columns: Any, config: BenchmarkRunConfig) -> int:
    """Resampled values a bootstrap of ``columns`` ((mode, name, column) triples) draws."""
    return config.bootstrap_resamples * sum(len(column.values) for _, _, column in columns)


def bootstrap_intervals(
    columns: dict[str, list[float]], config: BenchmarkRunConfig
) -> dict[str, list[float] | None]:
    """95% percentile-bootstrap CI of the mean per column (``aggregation.bootstrap_intervals``:
    every column of one length in one matrix product; None beyond the draw budget)."""
    return aggregation_bootstrap_intervals(
        columns, n_resamples=config.bootstrap_resamples, seed=config.seed, budget=_BOOTSTRAP_BUDGET
    )
