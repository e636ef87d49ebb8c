"""``report.explore()``: the report's case explorer, running in the browser (anywidget).

Filters (mode, case label, score range and verdict, errors, text search over queries, case
ids, evidence and judge reasons), sort, paging and the detail pane run in JavaScript
(``assets/explorer.js``) over the report's columnar payload, synced once; so they keep
working in an exported notebook or a ``report.to_html()`` page, with no kernel.

The Python side keeps the same state and the same rules, and syncs both ways through the
widget's ``state`` trait: ``select``, ``set_filters``, ``sort``, ``go_to_page`` move the view in
the browser; clicks in the browser move ``page``, ``filters`` and ``selected`` here, and
``page_rows()`` / ``detail_html`` read them. ``display(explorer)`` also emits a readable static
summary that the live or saved widget hides (``StaticFallback``).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from heta_notebook.display._case_detail import case_detail_html
from heta_notebook.display._explorer_data import DEFAULT_MAX_CASES, row_labels, search_texts
from heta_notebook.display._explorer_options import (
    VERDICTS,
    ExplorerOptionError,
    check_choice,
    check_keys,
)
from heta_notebook.display._fallback import StaticFallback
from heta_notebook.display._html import badge, details, panel, raw, style, table, tag, truncate
from heta_notebook.display._theme import fmt_int, fmt_num
from heta_notebook.schema._records import EvaluationCaseResult, EvaluationReport

Verdict = Literal["any", "passed", "failed"]
REPORT_ORDER = "report order"
LATENCY = "latency"
FALLBACK_CLASS = "hn-explorer-fallback"
PAGE_COLUMNS = ["row", "case_id", "query_mode", "query", "value", "error"]


@dataclass(frozen=True)
class ExplorerFilters:
    """What the case list shows: mode, case label, a score with value range and verdict,
    errors, text (queries, case ids, evidence labels, judge reasons)."""

    mode: str | None = None
    score: str | None = None
    min_value: float | None = None
    max_value: float | None = None
    verdict: Verdict = "any"
    errors_only: bool = False
    search: str = ""
    label: str | None = None
    miss_class: str | None = None  # cases with an evidence item of this class (report.misses)


class PageRows(list):
    """``page_rows()`` returns a DataFrame; the old property form (a list of dicts) still
    works through this list, with a DeprecationWarning."""

    def __init__(self, frame: pd.DataFrame) -> None:
        super().__init__(frame.to_dict("records"))
        self._frame = frame

    def __call__(self) -> pd.DataFrame:
        return self._frame

    def _warn(self) -> None:
        warnings.warn(
            "page_rows is a method returning a DataFrame: call explorer.page_rows()",
            DeprecationWarning,
            stacklevel=3,
        )

    def __getitem__(self, item: Any) -> Any:
        self._warn()
        return super().__getitem__(item)

    def __iter__(self) -> Any:
        self._warn()
        return super().__iter__()

    def __len__(self) -> int:
        self._warn()
        return super().__len__()

    def __eq__(self, other: object) -> bool:
        self._warn()
        return list.__eq__(self, other)

    __hash__ = None


class DetailHtml(str):
    """``detail_html`` reads as a string (old property) and can be called like the
    comparison explorer's ``detail_html()``."""

    def __call__(self) -> str:
        return str(self)


class ReportExplorer(StaticFallback):
    """Filters, a paged sorted case list and a detail pane over one report's case results."""

    def __init__(
        self,
        report: EvaluationReport,
        *,
        mode: str | None = None,
        label: str | None = None,
        score: str | None = None,
        min_value: float | None = None,
        max_value: float | None = None,
        verdict: Verdict = "any",
        errors_only: bool = False,
        search: str = "",
        miss_class: str | None = None,
        sort_by: str = REPORT_ORDER,
        descending: bool = True,
        page_size: int = 15,
        max_cases: int | None = DEFAULT_MAX_CASES,
    ) -> None:
        """Open on the cases that pass the filters (``mode``, ``label`` such as ``"qlen=short"``,
        ``score`` with ``min_value``/``max_value`` and ``verdict``, ``errors_only``, ``search``,
        ``miss_class``: cases with an evidence item of that class, e.g. ``"beyond k"``); an
        option the report does not have raises ``ExplorerOptionError`` naming what it has."""
        self.report = report
        self.frames = report.frames()
        self.page_size = max(1, int(page_size))
        self.max_cases = max_cases
        self._sort_by, self._descending = sort_by, descending
        self.page = 0
        self._rows: np.ndarray = np.arange(len(report.case_results))
        self.selected_row: int | None = None
        self._widget: Any = None
        self._haystack: list[str] | None = None
        self._labels: list[list[str]] | None = None
        filters = ExplorerFilters(
            mode, score, min_value, max_value, verdict, errors_only, search, label, miss_class
        )
        self._filters = self._checked(filters)
        self._check_sort(sort_by)
        self._recompute()

    # -- programmatic state ----------------------------------------------------------------

    @property
    def filters(self) -> ExplorerFilters:
        """The active filters (frozen; change them with :meth:`set_filters`)."""
        return self._filters

    def set_filters(self, **changes: Any) -> ReportExplorer:
        """Change filters (``mode``, ``label``, ``score``, ``min_value``, ``max_value``,
        ``verdict``, ``errors_only``, ``search``, ``miss_class``); the list goes back to page 1."""
        check_keys(changes, [f.name for f in fields(ExplorerFilters)], "set_filters")
        self._filters = self._checked(replace(self._filters, **changes))
        self.page = 0
        self._recompute()
        return self

    def _checked(self, f: ExplorerFilters) -> ExplorerFilters:
        """``f`` when the report has its mode, label, score and verdicts; else a clear error."""
        where = f"report {self.report.label!r}"
        if f.mode is not None:
            check_choice("mode", f.mode, self.frames.modes, where)
        if f.score is not None:
            check_choice("score", f.score, self.frames.score_names, where)
        if f.label is not None:
            labels = sorted({x for row in self._case_labels() for x in row})
            check_choice("label", f.label, labels, where)
        check_choice("verdict", f.verdict, VERDICTS, "the verdict filter")
        if f.verdict != "any" and not (f.score and self.has_verdicts(f.score)):
            raise ExplorerOptionError(
                f"verdict={f.verdict!r} needs a score with pass/fail verdicts (a threshold); "
                f"{where} has verdicts for: {', '.join(self.verdict_scores()) or 'no score'}"
            )
        return f

    def has_verdicts(self, score: str) -> bool:
        """Whether any case of ``score`` passed or failed (its evaluator has a threshold)."""
        return bool(self.frames.score_column(score)["passed"].notna().any())

    def verdict_scores(self) -> list[str]:
        """The scores with pass/fail verdicts: the ones the verdict filter applies to."""
        return [name for name in self.frames.score_names if self.has_verdicts(name)]

    def _check_sort(self, by: str) -> None:
        options = [REPORT_ORDER, LATENCY, *self.frames.score_names]
        check_choice("sort", by, options, f"report {self.report.label!r}")

    def sort(self, by: str = REPORT_ORDER, descending: bool = True) -> ReportExplorer:
        """Sort by a score name, ``"latency"`` or ``"report order"``."""
        self._check_sort(by)
        self._sort_by, self._descending = by, descending
        self.page = 0
        self._recompute()
        return self

    @property
    def n_matching(self) -> int:
        """How many case results pass the filters."""
        return len(self._rows)

    @property
    def n_pages(self) -> int:
        """Number of pages of the filtered list (at least 1)."""
        return max(1, -(-len(self._rows) // self.page_size))

    def go_to_page(self, page: int) -> ReportExplorer:
        """Show page ``page`` (0-based, clamped)."""
        self.page = min(max(0, int(page)), self.n_pages - 1)
        self._push()
        return self

    def next_page(self) -> ReportExplorer:
        """Go to the next page (stays on the last)."""
        return self.go_to_page(self.page + 1)

    def previous_page(self) -> ReportExplorer:
        """Go to the previous page."""
        return self.go_to_page(self.page - 1)

    @property
    def page_rows(self) -> PageRows:
        """The case results on the current page: call it, ``page_rows()``, for a DataFrame
        (row, case_id, query_mode, query, error; and ``value``, the sort score's value, when
        sorted by a score)."""
        start = self.page * self.page_size
        infos = [self._row_info(int(r)) for r in self._rows[start : start + self.page_size]]
        columns = [c for c in PAGE_COLUMNS if c != "value" or self._sort_values() is not None]
        return PageRows(pd.DataFrame(infos, columns=columns))

    def select(self, case_id: str, mode: str | None = None) -> ReportExplorer:
        """Show the detail of ``case_id`` (under ``mode``, else its first mode)."""
        found = self.frames.case_column("case_id") == str(case_id)  # no record built
        if mode is not None:
            check_choice("mode", mode, self.frames.modes, f"report {self.report.label!r}")
            found &= self.frames.case_column("query_mode") == mode
        if found.any():
            return self.select_row(int(np.flatnonzero(found)[0]))
        raise KeyError(f"no case {case_id!r}" + (f" under mode {mode!r}" if mode else ""))

    def select_row(self, row: int) -> ReportExplorer:
        """Show the detail of the case result at position ``row`` of the report (and the list
        page that holds it, when it passes the filters)."""
        if not 0 <= row < len(self.report.case_results):
            raise IndexError(f"row {row} out of range")
        self.selected_row = int(row)
        position = np.flatnonzero(self._rows == row)
        if len(position):  # show the page that lists the selected case
            self.page = int(position[0]) // self.page_size
        self._push()
        return self

    @property
    def selected(self) -> EvaluationCaseResult | None:
        """The selected case result (None when nothing matches)."""
        return None if self.selected_row is None else self.report.case_results[self.selected_row]

    @property
    def detail_html(self) -> DetailHtml:
        """HTML of the detail pane for the selected case ('' when nothing is selected)."""
        result = self.selected
        return DetailHtml(case_detail_html(result) if result is not None else "")

    # -- filtering and sorting (the same rules as explorer.js) -------------------------------

    def _recompute(self, *, push: bool = True) -> None:
        f = self._filters
        n = len(self.report.case_results)
        mask = np.ones(n, dtype=bool)
        if f.mode:
            mask &= self.frames.case_column("query_mode") == f.mode
        if f.label:
            mask &= np.fromiter(
                (f.label in labels for labels in self._case_labels()), dtype=bool, count=n
            )
        if f.errors_only:
            mask &= _not_none(self.frames.case_column("error"))
        if f.search.strip():
            needle = f.search.strip().casefold()
            mask &= np.fromiter((needle in t for t in self._search_texts()), dtype=bool, count=n)
        if f.score:
            mask &= self._score_mask(f)
        if f.miss_class:
            mask &= self._miss_mask(f.miss_class)
        self._rows = self._sorted(np.flatnonzero(mask))
        self.page = min(self.page, self.n_pages - 1)
        if self.selected_row is None or self.selected_row not in set(self._rows[: self.page_size]):
            self.selected_row = int(self._rows[0]) if len(self._rows) else None
        if push:
            self._push()

    def _miss_mask(self, name: str) -> np.ndarray:
        """Rows with an expected evidence item of class ``name`` ("lost at stage rerank", ...)."""
        from heta_notebook.analysis._misses import class_labels

        evidence = self.frames.misses(level="evidence")
        picked = evidence[np.asarray(class_labels(evidence), dtype=object) == name]
        keys = set(zip(picked["case_id"].tolist(), picked["query_mode"].tolist(), strict=True))
        ids, modes = self.frames.case_column("case_id"), self.frames.case_column("query_mode")
        return np.fromiter(((c, m) in keys for c, m in zip(ids, modes, strict=True)), dtype=bool)

    def _search_texts(self) -> list[str]:
        if self._haystack is None:
            self._haystack = search_texts(self.report)
        return self._haystack

    def _case_labels(self) -> list[list[str]]:
        if self._labels is None:
            self._labels = row_labels(self.report, np.arange(len(self.report.case_results)))
        return self._labels

    def _score_mask(self, f: ExplorerFilters) -> np.ndarray:
        """Only a value range or a verdict filters; choosing a score alone keeps every case."""
        n = len(self.report.case_results)
        if f.min_value is None and f.max_value is None and f.verdict == "any":
            return np.ones(n, dtype=bool)
        column = self.frames.score_column(f.score)
        values = column["value"].to_numpy()
        mask = column["status"].to_numpy() == "scored"
        if f.min_value is not None:
            mask &= values >= f.min_value
        if f.max_value is not None:
            mask &= values <= f.max_value
        if f.verdict != "any":
            mask &= column["passed"].to_numpy() == (f.verdict == "passed")
        return mask

    def _sort_values(self) -> np.ndarray | None:
        if self._sort_by == REPORT_ORDER:
            return None
        if self._sort_by == LATENCY:
            return self.frames.case_column("latency_ms").astype(float)
        return self.frames.score_column(self._sort_by)["value"].to_numpy()

    def _sorted(self, rows: np.ndarray) -> np.ndarray:
        values = self._sort_values()
        if values is None:
            return rows
        picked = values[rows]
        keys = np.where(np.isnan(picked), np.inf, -picked if self._descending else picked)
        return rows[np.argsort(keys, kind="stable")]

    def _row_info(self, row: int) -> dict[str, Any]:
        column = self.frames.case_column  # list rows come from the frames: no records built
        values = self._sort_values()
        value = None if values is None or np.isnan(values[row]) else float(values[row])
        return {
            "row": row,
            "case_id": column("case_id")[row],
            "query_mode": column("query_mode")[row],
            "query": column("query")[row],
            "value": value,
            "error": column("error")[row],
        }

    # -- the widget (state synced both ways) ---------------------------------------------------

    @property
    def widget(self) -> Any:
        """The anywidget view (built on first use; the report's data is encoded then: for a
        large report the first page at once, the rest as ``widgets.report_data`` says)."""
        if self._widget is None:
            from heta_notebook.display._widgets import ExplorerWidget, report_data

            first = self._rows[: self.page_size].tolist()  # their details come at once
            if self.selected_row is not None and self.selected_row not in first:
                first.append(self.selected_row)
            data = report_data(self.report, max_cases=self.max_cases, first=sorted(first))
            self._widget = ExplorerWidget(kind="report", data=data, state=self.state)
            self._widget.observe(self._on_front, names="state")
        return self._widget

    @property
    def controls(self) -> Any:
        """Deprecated: the controls run in the browser now; this is the widget itself."""
        warnings.warn(
            "ReportExplorer.controls is deprecated: the controls run in the browser; "
            "use .widget, .state and the methods",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.widget

    @property
    def state(self) -> dict[str, Any]:
        """What the browser shows: filters, sort, page, page size and the selected report row."""
        return {
            **asdict(self._filters),
            "sort_by": self._sort_by,
            "descending": self._descending,
            "page": self.page,
            "page_size": self.page_size,
            "selected": self.selected_row,
        }

    def _push(self) -> None:
        if self._widget is not None and self._widget.state != self.state:
            self._widget.state = self.state

    def _on_front(self, change: dict[str, Any]) -> None:
        """The browser changed the state: adopt it as is (no echo back)."""
        new = dict(change["new"] or {})
        if new == self.state:
            return
        names = {f.name for f in fields(ExplorerFilters)}
        self._filters = ExplorerFilters(**{k: v for k, v in new.items() if k in names})
        self._sort_by = new.get("sort_by") or REPORT_ORDER
        self._descending = bool(new.get("descending", True))
        self.page_size = max(1, int(new.get("page_size") or self.page_size))
        selected, page = new.get("selected"), int(new.get("page") or 0)
        self._recompute(push=False)
        self.page = min(max(0, page), self.n_pages - 1)
        self.selected_row = None if selected is None else int(selected)

    # -- display ---------------------------------------------------------------------------

    def static_html(self) -> str:
        """A readable static view (filters, current page, selected case) for notebooks opened
        where widgets cannot render; the widget hides it wherever it renders."""
        infos = self.page_rows().to_dict("records")
        sorted_by = self._sort_by != REPORT_ORDER
        rows = [
            [
                i["case_id"],
                i["query_mode"],
                truncate(i["query"], 90),
                *([fmt_num(i["value"])] if sorted_by else []),
                badge("error", "bad") if i["error"] else "",
            ]
            for i in infos
        ]
        header = ["case", "mode", "query", *([self._sort_by] if sorted_by else []), ""]
        note = (
            f"Case explorer (static view: the interactive explorer did not load here). "
            f"Page {self.page + 1} of {self.n_pages}; {fmt_int(self.n_matching)} case results "
            f"match {_describe(self._filters)}."
        )
        body = [tag("div", note, class_="hn-note"), table(header, rows, class_="hn-table hn-left")]
        if self.selected is not None:
            body.append(
                details(
                    f"Selected case: {self.selected.case_id} · {self.selected.query_mode}",
                    raw(case_detail_html(self.selected)),
                    open_=True,
                )
            )
        return str(panel(style(), *body, class_=FALLBACK_CLASS))

    def __repr__(self) -> str:
        return (
            f"<ReportExplorer {self.report.report_id!r} {fmt_int(self.n_matching)} case results, "
            f"page {self.page + 1}/{self.n_pages}, selected row {self.selected_row}>"
        )


def _not_none(values: np.ndarray) -> np.ndarray:
    return np.fromiter((v is not None for v in values), dtype=bool, count=len(values))


def _describe(f: ExplorerFilters) -> str:
    active = {k: v for k, v in asdict(f).items() if v not in (None, "", False, "any")}
    return ", ".join(f"{k}={v}" for k, v in active.items()) if active else "no filters"


__all__ = ["ExplorerFilters", "PageRows", "ReportExplorer", "case_detail_html"]
