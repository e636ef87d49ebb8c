"""A report as tidy pandas DataFrames: summary, cases, scores, evidence, retrieved results.

``report.frames()`` (one ``ReportFrames`` per report, cached on it) builds each frame lazily
on first use and caches it, so the card, plots, explorer, ``summary()`` and ``compare()``
share one extraction. Case and score columns are read from the report's one column view
(``reports.ReportColumns``: a stored report's Parquet tables, an in-memory report's
records as the column writer turns them into tables, built once), so a report gives
the same frames whether it is in memory or saved. The long frame, the wide cases frame
and the summary are all built from them.

Analysis never renders: the card, figures and explorers in ``heta_notebook.display`` read
these frames and the per-case helpers at the bottom (``case_evidence``, ``case_results``).
"""

from __future__ import annotations

import json
import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook.analysis._case_rows import (
    EVIDENCE_FIELDS,
    RESULT_FIELDS,
    report_evidence_rows,
    report_result_rows,
)
from heta_notebook.evaluators._aggregation import (
    ScoreAggregate,
    aggregate_of,
    grouped_stats,
    text_counts,
)
from heta_notebook.reports._columns import ReportColumns, report_columns, saved_views
from heta_notebook.reports._tables import SAVED_MISS_COLUMNS, CorruptReportError
from heta_notebook.schema._abstain import (
    ABSTAIN_EXPECTED,
    ABSTAINED,
    abstention_expected,
    abstention_of,
)
from heta_notebook.schema._records import EvaluationReport
from heta_notebook.schema._status import SKIPPED, STATUSES

CASE_COLUMNS = (
    "row",
    "case_id",
    "query_mode",
    "query",
    "latency_ms",
    "error",
    "error_type",
    "answer",
    "abstained",
    "abstain_reason",
    "n_results",
)
# text columns that are None for most rows (no error, no answer, no abstention): object
# columns holding None, whatever the rows hold; pandas 3 would infer its ``str`` dtype from
# the first report with a value and print NaN for every other row
NULLABLE_TEXT_COLUMNS = ("error", "error_type", "answer", "abstain_reason", "reason", "skip_reason")
SUMMARY_COLUMNS = (
    "query_mode",
    "score",
    "mean",
    "n",
    "std",
    "ci_low",
    "ci_high",
    "pass_rate",
    "n_passed",
    "n_skipped",
    "n_error",
    "counts",
)


class ReportFrames:
    """Lazy, cached DataFrames of one report (``report.frames()``).

    Every frame has a ``row`` column: the position of the case result in
    ``report.case_results``, which joins frames to each other and back to the report.
    """

    def __init__(self, report: EvaluationReport) -> None:
        # The report caches its frames, so the frames keep only what they read (its case
        # results and modes) and a weak reference back: dropping a report frees it and its
        # records at once, not in a full collection later (~0.8 s at 20,000 cases).
        self._report = weakref.ref(report)
        self.case_results = report.case_results
        self.query_modes = report.query_modes
        self._cache: dict[str, Any] = {}
        self._aggregates: list[ScoreAggregate] | None = None

    @property
    def columns(self) -> ReportColumns:
        """The report's one column view (``reports.ReportColumns``), built once: what every
        frame, miss class and explorer reads."""
        return self._cached("report_columns", lambda: report_columns(self.case_results))

    @property
    def report(self) -> EvaluationReport:
        """The report these frames were built from (while something else keeps it alive)."""
        report = self._report()
        if report is None:
            raise ReferenceError(
                "the report these frames were built from has been freed: frames keep only its "
                "case results; keep a reference to the report (use report.frames())"
            )
        return report

    def belongs_to(self, report: EvaluationReport) -> bool:
        """Whether these frames were built from ``report`` (this very object)."""
        return self._report() is report

    def prime(
        self,
        *,
        aggregates: Sequence[ScoreAggregate] | None = None,
        score_names: Sequence[str] | None = None,
    ) -> None:
        """Reuse what a caller already computed by the same rules (the runner's score
        columns, a save's score names in first-seen order) instead of reading every score."""
        if aggregates is not None:
            self._aggregates = list(aggregates)
        if score_names is not None:
            self._cache.setdefault("names", list(score_names))

    def _cached(self, key: str, build: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    # -- frames ---------------------------------------------------------------------------

    def summary(self, by: Any = None) -> pd.DataFrame:
        """query_mode × score: mean, n, std, 95% CI, pass rate, n_passed, n_skipped, n_error.

        ``by`` (a case label or metadata key; see ``analysis.slices``) adds a first column
        and gives one row per slice × query_mode × score.
        """
        if by is not None:
            from heta_notebook.analysis._slices import slice_summary

            build = lambda: slice_summary(self, by)  # noqa: E731
            return (self._cached(f"summary:{by}", build) if isinstance(by, str) else build()).copy()
        return self._cached("summary", self._build_summary).copy()

    def bounds(self) -> pd.DataFrame:
        """Per query mode, each score shown with its upper bound (a report scored with
        ``labeled(..., holes=True)``): ``score`` (``beir_ndcg@10``), ``upper_score``,
        ``lower`` (its mean: trec_eval's, unjudged documents as non-relevant), ``upper``
        (unjudged as relevant) and ``condensed`` (NaN without the condensed score). Empty
        when the report has no upper bounds (``analysis._bounds``, docs/labels.md)."""
        from heta_notebook.analysis._bounds import bound_pairs, bounds_frame, conventions

        names = self.score_names
        pairs = bound_pairs(names, conventions([self.report], names))
        return bounds_frame(self.summary(), pairs, ["query_mode"])

    def cases(self) -> pd.DataFrame:
        """One row per case × mode: query, latency, error, answer, and one column per score."""
        return self._cached("cases", self._build_cases).copy()

    def scores(self) -> pd.DataFrame:
        """Long format: one row per score (value, text, passed, status, reason, and
        ``skip_reason``: why an evaluator skipped the case, e.g. "case has no expected
        answers"; None unless skipped)."""
        return self._cached("scores", self._build_scores).copy()

    def evidence(self) -> pd.DataFrame:
        """One row per expected evidence item per case × mode: matched or missing, rank, result."""
        return self._cached("evidence", self._build_evidence).copy()

    def misses(self, level: str = "class", *, k: int | None = None, by: Any = None) -> pd.DataFrame:
        """Miss classes (``analysis._misses``): counts per recipe × mode × class, or per evidence."""
        from heta_notebook.analysis._misses import class_counts, report_misses  # builds on this

        if k is not None or by is not None or level not in ("class", "evidence"):
            return report_misses(self.report, level=level, k=k, by=by)
        saved = self.saved_miss_counts() if level == "class" else None
        if saved is not None:
            return saved
        evidence = self._cached("misses:evidence", self._classified_misses)
        if level == "evidence":
            return evidence.copy()
        return self._cached("misses:class", lambda: class_counts(evidence)).copy()

    def _classified_misses(self) -> pd.DataFrame:
        """``misses(level="evidence")``, classified once (the counts are read from these
        rows), each row's report row kept for a save (``miss_rows_to_save``)."""
        from heta_notebook.analysis._misses import evidence_with_rows

        frame, self._cache["misses:rows"] = evidence_with_rows(self.report)
        return frame

    def miss_rows_to_save(self) -> dict[str, list[Any]] | None:
        """What a save keeps of ``misses(level="evidence")`` beside the counts, so an
        explorer of the saved report reads its miss classes instead of classifying again:
        per evidence row its report ``row`` and the columns the explorer shows
        (``reports.SAVED_MISS_COLUMNS``; ``stage_ranks`` as JSON). None unless these frames
        classified the report (a save never classifies only for this)."""
        evidence = self._cache.get("misses:evidence")
        if evidence is None:
            return None
        out: dict[str, list[Any]] = {"row": self._cache["misses:rows"].tolist()}
        for name in SAVED_MISS_COLUMNS:  # no value: None (pandas may hold NA or NaN)
            values = evidence[name].astype(object).tolist()
            out[name] = [None if v is pd.NA or v != v else v for v in values]
        out["stage_ranks"] = [None if v is None else json.dumps(v) for v in out["stage_ranks"]]
        return out

    def saved_miss_counts(self) -> pd.DataFrame | None:
        """``misses()``'s counts as a saved report's header keeps them (computed when it was
        written, so a card needs no classification); None for reports without them."""
        frame = self._cached("misses:saved", self._saved_miss_counts)
        return None if frame is None else frame.copy()

    def _saved_miss_counts(self) -> pd.DataFrame | None:
        view = self._view("misses")
        if view is None:
            return None
        columns = ["recipe", "query_mode", "miss_class", "count", "share"]
        frame = pd.DataFrame(view, columns=columns)
        return frame.astype({"count": "int64", "share": "float64"})

    def results(self) -> pd.DataFrame:
        """One row per retrieved result: rank, document id, score, relevance grade, relevant?"""
        return self._cached("results", self._build_results).copy()

    def metrics_table(self, stat: str = "mean") -> pd.DataFrame:
        """Scores as rows, query modes as columns, values of ``stat`` (a summary column)."""
        summary = self._cached("summary", self._build_summary)
        table = summary.pivot(index="score", columns="query_mode", values=stat)
        return table.reindex(index=self.score_names, columns=self.modes)

    def latency(self) -> pd.DataFrame:
        """Per query mode: n, mean, p50, p95, max latency (ms) and the number of query errors."""
        return self._cached("latency", self._build_latency).copy()

    def ties(self) -> pd.DataFrame:
        """Per mode: cases whose top k holds a tie and the headline's mean under each tie rule
        (``analysis._ties``); a saved report reads it from its header, never its tables."""
        from heta_notebook.analysis._ties import COLUMNS, tie_effects

        view = self._view("ties")
        if view is not None:
            return pd.DataFrame(view, columns=list(COLUMNS))
        return self._cached("ties", lambda: tie_effects(self)).copy()

    def abstentions(self) -> dict[str, int]:
        """Per query mode, how many responses abstained (``Abstain``: no answer, on purpose);
        modes without any are left out. A columnar report reads it from its header."""
        view = self._view("abstentions")
        if view is not None:
            return dict(view)
        flagged = self.case_column("abstained")
        return dict(Counter(self._case_modes()[flagged].tolist())) if flagged.any() else {}

    def case_counts(self) -> dict[str, int]:
        """``n_cases`` (distinct case ids), ``n_case_results`` and ``n_errors`` (failed queries)."""
        view = self._view("case_counts")
        if view is not None:
            return dict(view)
        errors = self.case_column("error")
        return {
            "n_cases": len(set(self.case_column("case_id").tolist())),
            "n_case_results": len(errors),
            "n_errors": int(sum(e is not None for e in errors.tolist())),
        }

    def views(self) -> dict[str, Any]:
        """The small derived views a columnar header keeps, so a card needs no table reads:
        summary and latency rows, modes, score names, case counts, ties, abstentions and miss
        class counts."""
        return {
            "summary_columns": list(SUMMARY_COLUMNS),
            "summary": _records(self._cached("summary", self._build_summary)),
            "latency": _records(self.latency()),
            "modes": self.modes,
            "score_names": self.score_names,
            "case_counts": self.case_counts(),
            "ties": _records(self.ties()),
            "abstentions": self.abstentions(),
            "misses": _records(self.misses()),
        }

    def _view(self, key: str) -> Any:
        """A view saved in a stored report's header (None in memory or for old layouts)."""
        views = self._cached("saved_views", lambda: saved_views(self.case_results))
        if views.get("summary_columns") != list(SUMMARY_COLUMNS):
            return None
        return views.get(key)

    def _build_latency(self) -> pd.DataFrame:
        view = self._view("latency")
        if view is not None:
            frame = pd.DataFrame(view)
            return frame.astype({c: float for c in ("mean", "p50", "p95", "max")})
        cases = pd.DataFrame(
            {name: self.case_column(name) for name in ("query_mode", "latency_ms", "error")}
        )
        grouped = cases.groupby("query_mode", sort=False)
        out = grouped["latency_ms"].agg(
            n="count", mean="mean", p50="median", p95=lambda s: s.quantile(0.95), max="max"
        )
        out["n_error"] = grouped["error"].count()
        return out.reindex(self.modes).rename_axis("query_mode").reset_index()

    def case_column(self, name: str) -> np.ndarray:
        """One per-case-result column (``case_id``, ``query_mode``, ``query``, ``latency_ms``,
        ``error``, ``error_type``, ``answer``, ``abstained``, ``abstain_reason``,
        ``n_results``, ``n_scores``, ``has_response``, ``expects_abstention``) without
        building the whole cases frame (cheap on very large reports)."""
        if name not in CASE_TABLE_COLUMNS:
            raise KeyError(f"unknown case column {name!r}")
        return self._cached(f"col:{name}", lambda: self._case_column(name))

    def case_codes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """A text case column (``case_id``, ``query_mode``, ``query``, ...) as int32 codes
        into its distinct values, in first-seen order (-1 for None), like ``pd.factorize``;
        a columnar report reads it dictionary-encoded, so no Python string per case result."""
        if name not in CASE_TABLE_COLUMNS:
            raise KeyError(f"unknown case column {name!r}")
        return self._cached(f"codes:{name}", lambda: self._case_codes(name))

    def _case_codes(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        if f"col:{name}" in self._cache:
            codes, uniques = pd.factorize(self.case_column(name))
            return codes.astype(np.int32), np.asarray(uniques, dtype=object)
        codes, values = self.columns.codes("cases", name)  # already in first-seen order
        return codes, np.asarray(values, dtype=object)

    def _case_column(self, name: str) -> np.ndarray:
        return _table_case_column(self.columns, name)

    def score_column(self, name: str) -> pd.DataFrame:
        """One score for every case result (index = ``row``): value (NaN unless scored),
        passed (True/False/None) and status (``missing`` where the case has no such score)."""
        return self._cached(f"score:{name}", lambda: self._build_score_column(name))

    def _build_score_column(self, name: str) -> pd.DataFrame:
        n = len(self.case_results)
        value = np.full(n, np.nan)
        passed = np.full(n, None, dtype=object)
        status = np.full(n, "missing", dtype=object)
        arrays = self._score_arrays()
        if name in arrays["names"]:
            mine = np.flatnonzero(arrays["name_codes"] == arrays["names"].index(name))
            rows, first = np.unique(arrays["rows"][mine], return_index=True)  # a case's first
            mine = mine[first]
            value[rows] = arrays["values"][mine]
            passed[rows] = np.asarray([False, True, None], dtype=object)[arrays["passed"][mine]]
            status[rows] = np.asarray(STATUSES, dtype=object)[arrays["status"][mine]]
        return pd.DataFrame({"value": value, "passed": passed, "status": status})

    @property
    def modes(self) -> list[str]:
        """Query modes in report order (then any mode only seen in case results)."""
        view = self._view("modes")
        if view is not None:
            return list(view)
        seen = dict.fromkeys(self.query_modes)
        seen.update(dict.fromkeys(self.case_column("query_mode").tolist()))
        return list(seen)

    @property
    def score_names(self) -> list[str]:
        """Score names in first-seen order (read from the case results, not a cached copy)."""
        if "scores" in self._cache:
            return list(self._cache["scores"]["score"].cat.categories)
        view = self._view("score_names")
        if view is not None:
            return list(view)
        if "names" in self._cache:  # primed by a save, in the order the records give
            return list(self._cache["names"])
        return list(self._score_arrays()["names"])

    # -- builders -------------------------------------------------------------------------

    def _build_summary(self) -> pd.DataFrame:
        view = self._view("summary")
        if view is not None:  # saved with a stored report's header: no score reads, no stats
            frame = pd.DataFrame(view, columns=list(SUMMARY_COLUMNS))
            for col in ("mean", "std", "ci_low", "ci_high", "pass_rate"):
                frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(float)
            return frame
        if self._aggregates is not None:  # the runner's statistics (same rules, same bits)
            aggregates = self._aggregates
        else:  # from the score arrays (the same groups, in the same order: the same bits)
            arrays = self._score_arrays()
            aggregates = _summarize_columns(self._case_modes(), self._failed(), arrays)
        rows = []
        for agg in aggregates:
            d = asdict(agg)
            rows.append(
                {**d, "score": agg.name, "mean": agg.value, "n": agg.n, "pass_rate": agg.pass_rate}
            )
        frame = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
        frame = _order(frame, self.modes, self.score_names)
        for col in ("mean", "std", "ci_low", "ci_high", "pass_rate"):
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype(float)
        return frame.reset_index(drop=True)

    def score_arrays(self) -> dict[str, Any]:
        """Every score as flat numpy columns (``rows``, ``names``, ``name_codes``, ``values``
        (NaN unless scored), ``texts``, ``has_text`` (a bool: any text value?), ``passed``
        (0/1, 2 = unjudged), ``status`` (0 scored, 1 skipped, 2 error), ``reason``,
        ``metadata``): the one extraction others reuse."""
        return self._score_arrays()

    def _score_arrays(self) -> dict[str, Any]:
        return self._cached("score_arrays", lambda: _table_scores(self.columns))

    def _case_modes(self) -> np.ndarray:
        return self.case_column("query_mode")

    def _failed(self) -> Counter:
        """Per mode, case results that failed before any score (they count as errors)."""
        failed = _not_none(self.case_column("error")) & (self.case_column("n_scores") == 0)
        return Counter(self._case_modes()[failed].tolist())

    def _build_scores(self) -> pd.DataFrame:
        return _scores_frame(self.case_column("case_id"), self._case_modes(), self._score_arrays())

    def _build_cases(self) -> pd.DataFrame:
        base = pd.DataFrame(
            {
                "row": np.arange(len(self.case_results)),
                **{c: _column(c, self.case_column(c)) for c in CASE_COLUMNS[1:]},
            }
        )
        long = self._cached("scores", self._build_scores)
        names = list(long["score"].cat.categories)
        for name, column in _wide_scores(long, len(base), names).items():
            base[name if name not in CASE_COLUMNS else f"score:{name}"] = column
        return base

    def _build_evidence(self) -> pd.DataFrame:
        rows = report_evidence_rows(self.columns)  # from columns: no record per case
        columns = ["row", "case_id", "query_mode", *EVIDENCE_FIELDS]
        frame = pd.DataFrame.from_records(rows, columns=columns)
        frame["rank"] = frame["rank"].astype("Int64")
        return frame

    def _build_results(self) -> pd.DataFrame:
        rows = report_result_rows(self.columns)  # from columns: no record per case
        columns = ["row", "case_id", "query_mode", *RESULT_FIELDS]
        frame = pd.DataFrame.from_records(rows, columns=columns)
        frame["relevance"] = frame["relevance"].astype("Int64")
        return frame


# --------------------------------------------------------------------------- frame helpers


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts (numpy scalars as Python values, NaN as None)."""
    out = []
    for row in frame.to_dict("records"):
        clean = {}
        for key, value in row.items():
            value = value.item() if isinstance(value, np.generic) else value
            clean[key] = None if isinstance(value, float) and not np.isfinite(value) else value
        out.append(clean)
    return out


def _order(frame: pd.DataFrame, modes: list[str], names: list[str]) -> pd.DataFrame:
    mode_rank = {m: i for i, m in enumerate(modes)}
    name_rank = {n: i for i, n in enumerate(names)}
    keys = frame["query_mode"].map(mode_rank).fillna(len(modes)) * (len(names) + 1)
    keys = keys + frame["score"].map(name_rank).fillna(len(names))
    return frame.iloc[np.argsort(keys.to_numpy(), kind="stable")]


CASE_TABLE_COLUMNS = (*CASE_COLUMNS[1:], "n_scores", "has_response", "expects_abstention")


def _column(name: str, values: np.ndarray) -> Any:
    return nullable_text(values) if name in NULLABLE_TEXT_COLUMNS else values


def nullable_text(values: Any) -> pd.Series:
    """Texts as an object column with None where missing (not NaN): the same dtype for an
    in-memory and a saved report, and a printed table says None for "none given"."""
    out = pd.Series(values, dtype=object)
    return out.where(out.notna(), None)


def _not_none(values: np.ndarray) -> np.ndarray:
    return np.fromiter((v is not None for v in values), dtype=bool, count=len(values))


# --------------------------------------------------------------------------- columns


def _table_case_column(columnar: ReportColumns, name: str) -> np.ndarray:
    """One case column read from the report's ``cases`` table (nulls as None / NaN)."""
    if name in {"n_results", "n_scores"}:
        return columnar.numpy("cases", name).astype(np.int64)
    if name == "latency_ms":
        return columnar.numpy("cases", name).astype(float)
    if name == "has_response":
        return columnar.numpy("cases", name).astype(bool)
    if name in {"abstained", "abstain_reason"}:
        return _table_abstentions(columnar)[name]
    if name == "expects_abstention":
        return _table_expects_abstention(columnar)
    return columnar.numpy("cases", name)


def _table_abstentions(columnar: ReportColumns) -> dict[str, np.ndarray]:
    """``abstained`` / ``abstain_reason`` from the response JSON by the one rule
    (``abstention_of``), parsed only where the flag's key appears."""
    texts = columnar.numpy("cases", "response_json")
    flagged = np.zeros(len(texts), dtype=bool)
    reasons = np.full(len(texts), None, dtype=object)
    for row in np.flatnonzero([t is not None and f'"{ABSTAINED}"' in t for t in texts]):
        flagged[row], reasons[row] = abstention_of(json.loads(texts[row]).get("metadata") or {})
    return {"abstained": flagged, "abstain_reason": reasons}


def _table_expects_abstention(columnar: ReportColumns) -> np.ndarray:
    """``expects_abstention`` from the case metadata JSON, parsed only where the benchmark's
    ``abstain`` key appears."""
    texts = columnar.numpy("cases", "metadata")
    out = np.zeros(len(texts), dtype=bool)
    for row in np.flatnonzero([t is not None and f'"{ABSTAIN_EXPECTED}"' in t for t in texts]):
        out[row] = bool(abstention_expected(json.loads(texts[row]).get("expected")))
    return out


def _table_scores(columnar: ReportColumns) -> dict[str, Any]:
    """Every score as flat numpy columns (``ReportFrames.score_arrays``), read from the
    report's ``scores`` table (no records).

    Names and statuses are read dictionary-encoded, straight into integer codes (no Python
    string per score); each column is dropped from the reader's cache once copied out, so a
    100,000-case report never holds a column twice. Texts, reasons and metadata are read
    only when first used (``_LazyColumns``); metadata is parsed once per distinct JSON string.
    """
    rows = _take(columnar, "row")
    name_codes, names = columnar.codes("scores", "name")
    status_codes, status_names = columnar.codes("scores", "status")
    if len(rows) and min(name_codes.min(), status_codes.min()) < 0:
        raise CorruptReportError(columnar.where("scores"), "a score has no name or no status")
    lookup = np.asarray([STATUSES.index(s) for s in status_names], dtype=np.int8)
    status = lookup[status_codes] if len(status_names) else np.zeros(len(rows), np.int8)
    del status_codes
    values = _take(columnar, "value").astype(float, copy=False)
    if not values.flags.writeable:  # a one-chunk column comes zero-copy from Arrow
        values = values.copy()
    values[status != 0] = np.nan
    passed_arrow = columnar.column("scores", "passed")
    passed = passed_arrow.fill_null(False).to_numpy(zero_copy_only=False).astype(np.int8)
    if passed_arrow.null_count:
        passed[passed_arrow.is_null().to_numpy(zero_copy_only=False)] = 2
    del passed_arrow
    has_text = bool((_take(columnar, "kind") == 2).any())  # only then is the text column read
    columnar.forget("scores", "passed")
    return _LazyColumns(
        columnar,
        {
            "rows": rows,
            "names": names,
            "name_codes": name_codes,
            "values": values,
            "passed": passed,
            "status": status,
            "has_text": has_text,
        },
    )


def _take(columnar: ReportColumns, name: str) -> np.ndarray:
    """One score column copied out as numpy; the reader's cached Arrow copy is dropped."""
    values = columnar.numpy("scores", name)
    columnar.forget("scores", name)
    return values


class _LazyColumns(dict):
    """Score columns whose ``texts``, ``reason`` and ``metadata`` are read only when first
    used (the long scores frame needs them; summaries and comparisons do not)."""

    def __init__(self, columnar: ReportColumns, columns: dict[str, Any]) -> None:
        super().__init__(columns)
        self._columnar = columnar

    def __missing__(self, key: str) -> Any:
        if key == "texts":
            n = len(self["rows"])
            value = (
                self._columnar.numpy("scores", "text").tolist() if self["has_text"] else [None] * n
            )
        elif key == "reason":
            value = self._columnar.numpy("scores", "reason")
        elif key == "metadata":
            md = self._columnar.column("scores", "metadata").combine_chunks().dictionary_encode()
            parsed = np.empty(len(md.dictionary) + 1, dtype=object)
            parsed[:-1] = [json.loads(t) for t in md.dictionary.to_pylist()]
            parsed[-1] = {}
            value = parsed[md.indices.fill_null(len(md.dictionary)).to_numpy(zero_copy_only=False)]
        else:
            raise KeyError(key)
        self[key] = value
        return value


def _scores_frame(case_id: np.ndarray, case_modes: np.ndarray, cols: dict) -> pd.DataFrame:
    rows = cols["rows"].astype(np.int64, copy=False)
    modes = list(dict.fromkeys(case_modes.tolist()))
    mode_code = {m: i for i, m in enumerate(modes)}
    codes = np.fromiter(map(mode_code.__getitem__, case_modes), np.int64, len(case_modes))
    return pd.DataFrame(
        {
            "row": rows,
            "case_id": case_id[rows] if len(rows) else np.asarray([], dtype=object),
            "query_mode": pd.Categorical.from_codes(
                codes[rows] if len(rows) else [], categories=modes
            ),
            "score": pd.Categorical.from_codes(cols["name_codes"], categories=cols["names"]),
            "value": cols["values"],
            "text": cols["texts"],
            "passed": pd.arrays.BooleanArray(cols["passed"] == 1, cols["passed"] == 2),
            "status": pd.Categorical.from_codes(cols["status"], categories=list(STATUSES)),
            "reason": nullable_text(cols["reason"]),
            "skip_reason": nullable_text(np.where(cols["status"] == SKIPPED, cols["reason"], None)),
            "metadata": cols["metadata"],
        }
    )


def _summarize_columns(
    mode_of_case: np.ndarray, failed: Counter, cols: dict[str, Any]
) -> list[ScoreAggregate]:
    """``aggregation.summarize`` from the extracted columns: ``grouped_stats`` over the same
    groups in the same order, so the numbers are identical. ``failed`` counts, per mode, case
    results that failed before any score."""
    modes = list(dict.fromkeys(mode_of_case.tolist()))
    mode_code = {m: i for i, m in enumerate(modes)}
    case_modes = np.fromiter(
        map(mode_code.__getitem__, mode_of_case), dtype=np.int64, count=len(mode_of_case)
    )
    names, width = cols["names"], max(len(cols["names"]), 1)
    keys = case_modes[cols["rows"]] * width + cols["name_codes"]
    present, groups = np.unique(keys, return_inverse=True)
    groups = groups.reshape(-1)
    passed = np.where(cols["passed"] == 2, np.nan, cols["passed"].astype(float))
    stats = grouped_stats(
        groups, len(present), cols["values"], status=cols["status"], passed=passed
    )
    texts = cols["texts"]
    counts = text_counts(groups, cols["status"], texts) if any(texts) else {}
    out = []
    for i, key in enumerate(present.tolist()):
        mode_, name = modes[key // width], names[key % width]
        stats["n_error"][i] += failed[mode_]
        out.append(aggregate_of(stats, i, name=name, mode=mode_, counts=counts.get(i)))
    return out


def _wide_scores(long: pd.DataFrame, n_rows: int, names: list[str]) -> dict[str, Any]:
    """One column per score: floats (NaN where skipped/failed/absent), text for text scores."""
    codes = long["score"].cat.codes.to_numpy()
    rows = long["row"].to_numpy()
    matrix = np.full((n_rows, len(names)), np.nan)
    matrix[rows, codes] = long["value"].to_numpy()
    out: dict[str, Any] = {name: matrix[:, j] for j, name in enumerate(names)}
    texts = long["text"].to_numpy()
    has_text = np.flatnonzero(pd.notna(texts))
    for j in np.unique(codes[has_text]):
        column = np.full(n_rows, None, dtype=object)
        picks = has_text[codes[has_text] == j]
        column[rows[picks]] = texts[picks]
        out[names[j]] = column
    return out


__all__ = ["ReportFrames", "nullable_text"]
