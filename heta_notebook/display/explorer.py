"""``report.explore()``: an ipywidgets case explorer with filters, a paged list and a detail pane.

Opening is cheap on very large reports: nothing is computed up front; a filter or sort
computes only the one column it needs (``ReportFrames.case_column`` / ``score_column``),
the list shows one page at a time, and the detail pane is rendered for the selected case
only. State is programmatic too (``select``, ``set_filters``, ``page_rows``, ``detail_html``).

Shared notebooks: widgets cannot run in a static HTML export, so ``display(explorer)`` also
emits a readable static summary (first page + selected case) that hides itself as soon as
the live widget renders. See ``_ipython_display_``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from types import SimpleNamespace
from typing import Any, Literal

import numpy as np

from heta_notebook.analysis.frames import case_evidence, case_results, expected_of
from heta_notebook.display.fallback import StaticFallback
from heta_notebook.display.html import (
    Markup,
    badge,
    definition_list,
    details,
    join,
    json_block,
    panel,
    raw,
    style,
    table,
    tag,
    truncate,
)
from heta_notebook.display.theme import color_for, fmt_int, fmt_ms, fmt_num
from heta_notebook.schema import REASON_KEYS, EvaluationCaseResult, EvaluationReport

Verdict = Literal["any", "passed", "failed"]
REPORT_ORDER = "report order"
LATENCY = "latency"
FALLBACK_CLASS = "hn-explorer-fallback"
MAX_RESULTS_OPEN = 10
MAX_TEXT = 600


@dataclass(frozen=True)
class ExplorerFilters:
    """What the case list shows: mode, a score with value range and verdict, errors, text."""

    mode: str | None = None
    score: str | None = None
    min_value: float | None = None
    max_value: float | None = None
    verdict: Verdict = "any"
    errors_only: bool = False
    search: str = ""


# --------------------------------------------------------------------------- case detail


def case_detail_html(result: EvaluationCaseResult, *, with_style: bool = False) -> str:
    """The detail of one case result: query, answers, judge reasons, evidence, results, scores."""
    expected = expected_of(result)
    parts = [
        _detail_header(result),
        tag("div", tag("b", "Query"), tag("pre", result.query, class_="hn-text")),
        _error_block(result),
        _answers(result, expected),
        _reasons(result),
        _evidence(result, expected),
        _results(result, expected),
        _scores(result),
        _trace_and_labels(result),
    ]
    return str(panel(style() if with_style else "", *parts, class_="hn-detail"))


def _detail_header(result: EvaluationCaseResult) -> Markup:
    mode = tag("span", result.query_mode, class_="hn-badge hn-muted",
               style=f"border-color:{color_for(result.query_mode)}")  # fmt: skip
    status = badge("query error", "bad") if result.error else badge("ok", "ok")
    verdicts = [s.passed for s in result.scores if s.passed is not None]
    passed = badge(f"{sum(verdicts)}/{len(verdicts)} passed", "info") if verdicts else ""
    latency = tag("span", f"latency {fmt_ms(result.latency_ms)}", class_="hn-sub")
    return tag("div", tag("h3", f"Case {result.case_id}"), mode, status, passed, latency,
               class_="hn-head")  # fmt: skip


def _error_block(result: EvaluationCaseResult) -> Markup:
    if result.error is None:
        return raw("")
    e = result.error
    text = f"{e.error_type}: {e.message}" + (" (retryable)" if e.retryable else "")
    return tag("div", tag("b", "Error"), tag("div", text, class_="hn-error"))


def _answers(result: EvaluationCaseResult, expected: Any) -> Markup:
    answer = result.response.answer if result.response is not None else None
    wanted = list(expected.answers) if expected is not None else []
    expected_html = (
        tag("ul", *(tag("li", a) for a in wanted)) if wanted
        else tag("div", "no expected answers recorded", class_="hn-note")
    )  # fmt: skip
    answer_html = (
        tag("div", answer, class_="hn-answer") if answer
        else tag("div", "no answer (retrieval only)", class_="hn-note")
    )  # fmt: skip
    return tag("div", tag("h4", "Answer vs expected"),
               table(["expected answers", "answer"], [[expected_html, answer_html]],
                     class_="hn-table hn-left"))  # fmt: skip


def _reasons(result: EvaluationCaseResult) -> Markup:
    judged = [s for s in result.scores if s.reason and s.status == "scored"]
    if not judged:
        return raw("")
    blocks = [
        tag("div", tag("b", s.name), " ", _value_badge(s), tag("div", s.reason, class_="hn-reason"))
        for s in judged
    ]
    return tag("div", tag("h4", "Judge reasons"), *blocks)


def _value_badge(score: Any) -> Markup:
    kind = {True: "ok", False: "bad"}.get(score.passed, "muted")
    verdict = {True: " · passed", False: " · failed"}.get(score.passed, "")
    if score.status != "scored":
        return badge(score.status, "warn" if score.status == "skipped" else "bad")
    return badge(f"{fmt_num(score.value)}{verdict}", kind)


def _evidence(result: EvaluationCaseResult, expected: Any) -> Markup:
    rows = case_evidence(result, expected)
    if not rows:
        note = "no expected evidence recorded for this case"
        return tag("div", tag("h4", "Expected evidence"), tag("div", note, class_="hn-note"))
    found = sum(r["matched"] for r in rows)
    named = sorted((r for r in rows if r["label"] is not None), key=_evidence_order)
    anonymous = len(rows) - len(named)
    body = [
        [badge("matched", "ok") if r["matched"] else badge("missing", "bad"), r["label"],
         fmt_int(r["relevance"]) if r["relevance"] is not None else "–",
         fmt_int(r["rank"]) if r["rank"] is not None else "–", r["result_id"] or "–",
         r["matched_by"] or "–"]
        for r in named
    ]  # fmt: skip
    header = ["", "evidence", "grade", "rank", "matching result", "matched by"]
    title = f"Expected evidence: {found} of {len(rows)} found"
    note = (tag("div", f"{anonymous} more expected items were not found; this report does not "
                "name them (heta-framework records only matched ids).", class_="hn-note")
            if anonymous else raw(""))  # fmt: skip
    return tag("div", tag("h4", title), table(header, body, class_="hn-table hn-left"), note)


def _evidence_order(row: dict[str, Any]) -> tuple:
    """Matched first (by rank), then missing by grade, highest first."""
    rank = row["rank"] if row["rank"] is not None else float("inf")
    return (not row["matched"], rank, -(row["relevance"] or 0))


def _results(result: EvaluationCaseResult, expected: Any) -> Markup:
    rows = case_results(result, expected)
    if not rows:
        return raw("")
    shown = [_result_block(r) for r in rows[:MAX_RESULTS_OPEN]]
    rest = [_result_block(r) for r in rows[MAX_RESULTS_OPEN:]]
    more = details(f"{len(rest)} more results", *rest) if rest else raw("")
    n_rel = sum(r["relevant"] for r in rows)
    return tag("div", tag("h4", f"Retrieved results ({len(rows)}, {n_rel} relevant)"),
               *shown, more)  # fmt: skip


def _result_block(r: dict[str, Any]) -> Markup:
    grade = r["relevance"]
    if r["relevant"]:
        mark = badge(f"relevant · grade {grade}" if grade else "relevant", "ok")
    else:
        mark = badge("not relevant" if grade is not None else "unjudged", "muted")
    matched = f" · matches {', '.join(r['matched_evidence'])}" if r["matched_evidence"] else ""
    head = tag("div", tag("b", f"#{r['rank']}"), " ", mark, " ",
               tag("span", f"doc {r['document_id'] or '–'} · score {fmt_num(r['score'], 4)} · "
                   f"id {r['result_id']}{matched}", class_="hn-sub"))  # fmt: skip
    text = tag("div", truncate(r["text"], MAX_TEXT), class_="hn-chunk")
    return tag("div", head, text, class_="hn-result hn-rel" if r["relevant"] else "hn-result")


def _scores(result: EvaluationCaseResult) -> Markup:
    rows = []
    for s in result.scores:
        meta = {k: v for k, v in s.metadata.items() if k not in REASON_KEYS}
        meta_html = details("metadata", json_block(meta)) if meta else "–"
        rows.append([s.name, _value_badge(s), _score_note(s), meta_html])
    if not rows:
        return raw("")
    return tag("div", tag("h4", "Scores"),
               table(["score", "value", "reason", "metadata"], rows, class_="hn-table hn-left"))  # fmt: skip


def _score_note(score: Any) -> str:
    if score.status == "error":
        error = score.metadata.get("error")
        return str(error.get("message") if isinstance(error, dict) else error)
    if score.status == "skipped":
        return str(score.metadata.get("skip_reason") or "skipped")
    return score.reason or ""


def _trace_and_labels(result: EvaluationCaseResult) -> Markup:
    parts = []
    trace = result.response.trace if result.response is not None else ()
    if trace:
        items = [tag("li", tag("b", e.stage), ": ", e.message,
                     details("metadata", json_block(e.metadata)) if e.metadata else "")
                 for e in trace]  # fmt: skip
        parts.append(details(f"Trace ({len(trace)} steps)", tag("ol", *items)))
    labels = result.metadata.get("labels")
    if labels:
        parts.append(details("Labels", definition_list({str(k): v for k, v in labels.items()})))
    if result.response is not None and result.response.metadata:
        parts.append(details("Response metadata", json_block(result.response.metadata)))
    return join(parts)


# --------------------------------------------------------------------------- explorer


class ReportExplorer(StaticFallback):
    """Filters, a paged sorted case list and a detail pane over one report's case results."""

    def __init__(
        self,
        report: EvaluationReport,
        *,
        page_size: int = 15,
        sort_by: str = REPORT_ORDER,
        descending: bool = True,
        **filters: Any,
    ) -> None:
        self.report = report
        self.frames = report.frames()
        self.page_size = max(1, int(page_size))
        self._filters = ExplorerFilters(**filters)
        self._sort_by, self._descending = sort_by, descending
        self.page = 0
        self._rows: np.ndarray = np.arange(len(report.case_results))
        self.selected_row: int | None = None
        self._widget: Any = None
        self._syncing = False
        self._recompute()

    # -- programmatic state ----------------------------------------------------------------

    @property
    def filters(self) -> ExplorerFilters:
        """The active filters (frozen; change them with :meth:`set_filters`)."""
        return self._filters

    def set_filters(self, **changes: Any) -> ReportExplorer:
        """Change filters (``mode``, ``score``, ``min_value``, ``max_value``, ``verdict``,
        ``errors_only``, ``search``); the list goes back to page 1."""
        self._filters = replace(self._filters, **changes)
        self.page = 0
        self._recompute()
        return self

    def sort(self, by: str = REPORT_ORDER, descending: bool = True) -> ReportExplorer:
        """Sort by a score name, ``"latency"`` or ``"report order"``."""
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
        return max(1, -(-len(self._rows) // self.page_size))

    def go_to_page(self, page: int) -> ReportExplorer:
        """Show page ``page`` (0-based, clamped)."""
        self.page = min(max(0, int(page)), self.n_pages - 1)
        self._sync_widgets()
        return self

    def next_page(self) -> ReportExplorer:
        return self.go_to_page(self.page + 1)

    def previous_page(self) -> ReportExplorer:
        return self.go_to_page(self.page - 1)

    @property
    def page_rows(self) -> list[dict[str, Any]]:
        """The case results on the current page (row, case_id, query_mode, query, value, error)."""
        start = self.page * self.page_size
        return [self._row_info(int(row)) for row in self._rows[start : start + self.page_size]]

    def select(self, case_id: str, mode: str | None = None) -> ReportExplorer:
        """Show the detail of ``case_id`` (under ``mode``, else its first mode)."""
        for row, result in enumerate(self.report.case_results):
            if result.case_id == str(case_id) and (mode is None or result.query_mode == mode):
                return self.select_row(row)
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
        self._sync_widgets()
        return self

    @property
    def selected(self) -> EvaluationCaseResult | None:
        return None if self.selected_row is None else self.report.case_results[self.selected_row]

    @property
    def detail_html(self) -> str:
        """HTML of the detail pane for the selected case ('' when nothing is selected)."""
        result = self.selected
        return case_detail_html(result) if result is not None else ""

    # -- filtering and sorting ---------------------------------------------------------------

    def _recompute(self) -> None:
        f = self._filters
        n = len(self.report.case_results)
        mask = np.ones(n, dtype=bool)
        if f.mode:
            mask &= self.frames.case_column("query_mode") == f.mode
        if f.errors_only:
            mask &= _not_none(self.frames.case_column("error"))
        if f.search.strip():
            mask &= self._search_mask(f.search)
        if f.score:
            mask &= self._score_mask(f)
        rows = np.flatnonzero(mask)
        self._rows = self._sorted(rows)
        if self.selected_row is None or self.selected_row not in set(self._rows[: self.page_size]):
            self.selected_row = int(self._rows[0]) if len(self._rows) else None
        self._sync_widgets()

    def _search_mask(self, text: str) -> np.ndarray:
        needle = text.strip().casefold()
        queries = self.frames.case_column("query")
        ids = self.frames.case_column("case_id")
        return np.fromiter(
            (needle in q.casefold() or needle in c.casefold() for q, c in zip(queries, ids, strict=True)),
            dtype=bool, count=len(queries),
        )  # fmt: skip

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
            return self.frames.case_column("latency_ms")
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
        return {"row": row, "case_id": column("case_id")[row], "query_mode": column("query_mode")[row],
                "query": column("query")[row], "value": value, "error": column("error")[row]}  # fmt: skip

    def _row_label(self, info: dict[str, Any]) -> str:
        value = "" if info["value"] is None else f"{fmt_num(info['value'])} · "
        error = "⚠ error · " if info["error"] else ""
        return f"{value}{error}{info['case_id']} · {info['query_mode']} · {truncate(info['query'], 70)}"

    # -- widgets ---------------------------------------------------------------------------

    @property
    def widget(self) -> Any:
        """The ipywidgets view (built on first use)."""
        if self._widget is None:
            self._widget, self.controls = _build_widgets(self)
            self._sync_widgets()
        return self._widget

    def _sync_widgets(self) -> None:
        if self._widget is None:
            return
        c = self.controls
        self._syncing = True
        try:
            infos = self.page_rows
            c.case_list.options = [(self._row_label(i), i["row"]) for i in infos]
            rows_on_page = {i["row"] for i in infos}
            c.case_list.value = self.selected_row if self.selected_row in rows_on_page else None
            c.page_label.value = (f"page {self.page + 1} / {self.n_pages} · "
                                  f"{fmt_int(self.n_matching)} of {fmt_int(len(self.report.case_results))} case results")  # fmt: skip
            c.prev.disabled = self.page == 0
            c.next.disabled = self.page >= self.n_pages - 1
            c.detail.value = _HIDE_FALLBACK + (self.detail_html or _empty_detail())
        finally:
            self._syncing = False

    def _on_control(self, change: Any = None) -> None:
        if self._syncing:
            return
        c = self.controls
        if change is not None and change.get("owner") is c.score:
            self._fit_range(change["new"])
        low, high = c.value_range.value
        full = low <= c.value_range.min and high >= c.value_range.max
        self._filters = ExplorerFilters(
            mode=c.mode.value or None, score=c.score.value or None,
            min_value=None if full or not c.score.value else low,
            max_value=None if full or not c.score.value else high,
            verdict=c.verdict.value if c.score.value else "any",
            errors_only=c.errors_only.value, search=c.search.value,
        )  # fmt: skip
        self._sort_by, self._descending = c.sort_by.value, c.descending.value
        c.descending.disabled = c.sort_by.value == REPORT_ORDER  # report order has no direction
        self.page = 0
        self._recompute()

    def _fit_range(self, score: str | None) -> None:
        """Stretch the range slider over the chosen score's values (at least 0..1)."""
        low, high = 0.0, 1.0
        if score:
            values = self.frames.score_column(score)["value"].to_numpy()
            if np.isfinite(values).any():
                low = min(low, float(np.nanmin(values)))
                high = max(high, float(np.nanmax(values)))
        slider = self.controls.value_range
        self._syncing = True
        try:
            slider.min, slider.max = min(low, slider.min), max(high, slider.max)
            slider.value = (low, high)
            slider.min, slider.max = low, high
        finally:
            self._syncing = False

    def _on_pick(self, change: Any) -> None:
        if not self._syncing and change["new"] is not None:
            self.select_row(change["new"])

    # -- display ---------------------------------------------------------------------------

    def static_html(self) -> str:
        """A readable static view (filters, current page, selected case) for exported notebooks."""
        infos = self.page_rows
        sorted_by = self._sort_by != REPORT_ORDER
        rows = [[i["case_id"], i["query_mode"], truncate(i["query"], 90),
                 *([fmt_num(i["value"])] if sorted_by else []),
                 badge("error", "bad") if i["error"] else ""] for i in infos]  # fmt: skip
        header = ["case", "mode", "query", *([self._sort_by] if sorted_by else []), ""]
        note = (f"Case explorer (static view: the interactive widget needs a running kernel). "
                f"Page {self.page + 1} of {self.n_pages}; {fmt_int(self.n_matching)} case results "
                f"match {_describe(self._filters)}.")  # fmt: skip
        body = [tag("div", note, class_="hn-note"),
                table(header, rows, class_="hn-table hn-left")]  # fmt: skip
        if self.selected is not None:
            body.append(details(f"Selected case: {self.selected.case_id} · {self.selected.query_mode}",
                                raw(case_detail_html(self.selected)), open_=True))  # fmt: skip
        return str(panel(style(), *body, class_=FALLBACK_CLASS))

    def __repr__(self) -> str:
        return (f"<ReportExplorer {self.report.report_id!r} {fmt_int(self.n_matching)} case results, "
                f"page {self.page + 1}/{self.n_pages}, selected row {self.selected_row}>")  # fmt: skip


_HIDE_FALLBACK = f"<style>.{FALLBACK_CLASS}{{display:none !important}}</style>"


def _not_none(values: np.ndarray) -> np.ndarray:
    return np.fromiter((v is not None for v in values), dtype=bool, count=len(values))


def _describe(f: ExplorerFilters) -> str:
    active = {k: v for k, v in asdict(f).items() if v not in (None, "", False, "any")}
    return ", ".join(f"{k}={v}" for k, v in active.items()) if active else "no filters"


def _empty_detail() -> str:
    return str(panel(style(), tag("div", "No case selected (no case matches).", class_="hn-note")))


def _score_names_quickly(
    report: EvaluationReport, frames: Any, exact_up_to: int = 20_000
) -> list[str]:
    """Score names for the dropdowns without a pass over millions of scores: exact for
    reports up to ``exact_up_to`` case results, else from the stored summary plus the first
    and last few thousand case results (evaluators score every case, so this finds them all)."""
    results = report.case_results
    if len(results) <= exact_up_to or "scores" in frames._cache or frames.columnar is not None:
        return list(frames.score_names)
    modes = set(report.query_modes)
    names = dict.fromkeys(k.split(".", 1)[1] if k.split(".", 1)[0] in modes else k
                          for k in report.score_summary)  # fmt: skip
    for r in (*results[:2000], *results[-2000:]):
        names.update(dict.fromkeys(s.name for s in r.scores))
    return list(names)


def _build_widgets(ex: ReportExplorer) -> tuple[Any, SimpleNamespace]:
    import ipywidgets as w

    f = ex.filters
    names = _score_names_quickly(ex.report, ex.frames)
    small = w.Layout(width="auto")
    c = SimpleNamespace(
        mode=w.Dropdown(options=[("all modes", "")] + [(m, m) for m in ex.frames.modes],
                        value=f.mode or "", description="mode", layout=small),
        score=w.Dropdown(options=[("— none —", "")] + [(n, n) for n in names],
                         value=f.score or "", description="score", layout=small),
        value_range=w.FloatRangeSlider(value=(f.min_value if f.min_value is not None else 0.0,
                                              f.max_value if f.max_value is not None else 1.0),
                                       min=0.0, max=1.0, step=0.01, description="range",
                                       readout_format=".2f", continuous_update=False,
                                       layout=w.Layout(width="380px")),
        verdict=w.ToggleButtons(options=[("any", "any"), ("passed", "passed"), ("failed", "failed")],
                                value=f.verdict, tooltips=["all cases", "passed", "failed"],
                                style={"button_width": "76px"}),
        errors_only=w.Checkbox(value=f.errors_only, description="errors only", indent=False,
                               layout=small),
        search=w.Text(value=f.search, placeholder="search queries / case ids", description="search",
                      continuous_update=False),
        sort_by=w.Dropdown(options=[REPORT_ORDER, LATENCY, *names], value=ex._sort_by,
                           description="sort by", layout=small),
        descending=w.Checkbox(value=ex._descending, description="descending", indent=False,
                              layout=small, disabled=ex._sort_by == REPORT_ORDER),
        case_list=w.Select(options=[], rows=ex.page_size, layout=w.Layout(width="100%")),
        prev=w.Button(description="◀ previous", layout=small),
        next=w.Button(description="next ▶", layout=small),
        page_label=w.Label(),
        detail=w.HTML(layout=w.Layout(width="100%")),
    )  # fmt: skip
    for control in (c.mode, c.score, c.value_range, c.verdict, c.errors_only, c.search, c.sort_by,
                    c.descending):  # fmt: skip
        control.observe(ex._on_control, names="value")
    c.case_list.observe(ex._on_pick, names="value")
    c.prev.on_click(lambda _b: ex.previous_page())
    c.next.on_click(lambda _b: ex.next_page())
    filters = w.VBox([w.HBox([c.mode, c.search, c.errors_only]),
                      w.HBox([c.score, c.value_range]),
                      w.HBox([w.Label("verdict of score", layout=w.Layout(margin="0 8px 0 22px")),
                              c.verdict, c.sort_by, c.descending])])  # fmt: skip
    listing = w.VBox([c.case_list, w.HBox([c.prev, c.next, c.page_label])],
                     layout=w.Layout(width="38%", min_width="320px"))  # fmt: skip
    pane = w.Box([c.detail], layout=w.Layout(width="62%", max_height="900px", overflow="auto",
                                             border="1px solid #E5E7EB", padding="4px 8px"))  # fmt: skip
    title = w.HTML(str(tag("b", f"Case explorer · {ex.report.label}")))
    root = w.VBox([title, filters, w.HBox([listing, pane])])
    return root, c


__all__ = ["ExplorerFilters", "ReportExplorer", "case_detail_html"]
