"""``comparison.explore()``: two variants' cases side by side, running in the browser.

Pick A, B and a score; the cases are listed (paged) by how much they changed; the selected
case shows A and B side by side: score values and verdicts, answers, judge reasons next to
each other, expected evidence found / missed (gained and lost highlighted) and the retrieved
results. Filters: evidence found by A but missed by B (and the reverse), verdict flipped,
B better / worse; cases with an evidence item missed as a given class under A and/or B
(``miss_a``, ``miss_b``: ``"split"``, ``"beyond k"``, ... see ``report.misses()``); a text search over queries, case ids, evidence and judge reasons scoped
to "in B but not in A" (and the other ways round) finds, say, every case whose judge reason
mentions "missing" under B only.

Like the report explorer, the view is an anywidget (``assets/explorer.js``) over the reports'
shared columnar data models, so it works live, in exported notebooks and in plain pages; the
Python methods (``set_pair``, ``set_filter``, ``search``, ``select``, ``next_page``) and the
browser sync both ways through the ``state`` trait.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from heta_notebook._util.formatting import format_delta
from heta_notebook.display._case_detail import side_by_side
from heta_notebook.display._explorer_data import DEFAULT_MAX_CASES, row_labels, search_texts
from heta_notebook.display._explorer_options import check_choice, check_keys
from heta_notebook.display._fallback import StaticFallback
from heta_notebook.display._html import Markup, panel, raw, style, tag, truncate
from heta_notebook.display._theme import fmt_int, fmt_num

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.analysis._compare import Comparison

FILTERS = {
    "all": "all cases",
    "changed": "score changed",
    "better": "B better",
    "worse": "B worse",
    "lost": "evidence found by A, missed by B",
    "gained": "evidence found by B, missed by A",
    "flipped": "judge verdict (passed) flipped",
}
SCOPES = {
    "either": "in A or B",
    "b_not_a": "in B but not in A",
    "a_not_b": "in A but not in B",
    "both": "in A and in B",
}
PAGE_SIZE = 15
# set_filters' keywords
OPTIONS = ("a", "b", "score", "filter", "label", "search", "scope", "miss_a", "miss_b")
FALLBACK_CLASS = "hn-compare-explorer-fallback"


class ComparisonExplorer(StaticFallback):
    """Two variants' cases sorted by the change in one score, shown side by side."""

    def __init__(
        self,
        comparison: Comparison,
        a: Any = None,
        b: Any = None,
        score: str | None = None,
        page_size: int = PAGE_SIZE,
        *,
        filter: str = "all",  # noqa: A002 - the filter's name in the page and in set_filters
        label: str | None = None,
        search: str = "",
        scope: str = "either",
        miss_a: str | None = None,
        miss_b: str | None = None,
        max_cases: int | None = DEFAULT_MAX_CASES,
    ) -> None:
        """Open on variants ``a`` (left) and ``b`` (right), sorted by the change in ``score``,
        showing the cases ``filter`` (one of ``FILTERS``), ``label`` (``"qlen=short"``),
        ``search`` (with ``scope``, one of ``SCOPES``) and ``miss_a`` / ``miss_b`` (an evidence
        item of that miss class under A / B, e.g. ``"split"``) keep. An option the comparison
        does not have raises ``ExplorerOptionError`` naming what it has."""
        self.comparison = comparison
        pairs = comparison.pairs() or [
            (x, y) for x, y in combinations(comparison.variants, 2) if comparison.paired(x, y)
        ]
        first = pairs[0] if pairs else (comparison.variants[0], comparison.variants[-1])
        self.a = comparison.variant(a) if a is not None else first[0]
        self.b = comparison.variant(b) if b is not None else first[1]
        comparison._delta_pairs(self.a, self.b)  # refuses a pair across benchmarks, by name
        self.filter, self.label = "all", None
        self.search_text, self.scope = "", "either"
        self.miss_a: str | None = None
        self.miss_b: str | None = None
        self._missed: dict[tuple[str, str], dict[str, set[str]]] = {}
        self.page = 0
        self.page_size = page_size
        self.max_cases = max_cases
        self.selected: str | None = None
        self._widget: Any = None
        self._holding = False
        self._haystacks: dict[str, list[str]] = {}
        self._labels: dict[str, list[str]] | None = None
        options = {"filter": filter, "label": label, "search": search, "scope": scope}
        options.update(miss_a=miss_a, miss_b=miss_b)
        self._set(score=score or comparison.primary_score, **options)
        self._refresh_rows()

    # -- state ------------------------------------------------------------------------------

    @property
    def state(self) -> dict[str, Any]:
        """What is shown: pair, score, filter, search, page, the page's case ids, selection."""
        return {
            "a": self.a.name,
            "b": self.b.name,
            "score": self.score,
            "filter": self.filter,
            "label": self.label,
            "search": self.search_text,
            "scope": self.scope,
            "miss_a": self.miss_a,
            "miss_b": self.miss_b,
            "page": self.page,
            "page_size": self.page_size,
            "n_pages": self.n_pages,
            "n_cases": len(self.rows),
            "case_ids": list(self._page()["case_id"]),
            "selected": self.selected,
        }

    @property
    def n_pages(self) -> int:
        """Number of pages of the current case list (at least 1)."""
        return max(1, -(-len(self.rows) // self.page_size))

    def page_rows(self) -> pd.DataFrame:
        """The cases on the current page (with their queries)."""
        page = self._page()
        if "query" in page:
            return page
        queries = case_queries(self.comparison, page["case_id"].to_numpy())
        return page.assign(query=queries)[ROW_COLUMNS]

    def _page(self) -> pd.DataFrame:
        start = self.page * self.page_size
        return self.rows.iloc[start : start + self.page_size]

    def set_filters(self, **changes: Any) -> ComparisonExplorer:
        """Change what the list shows (``filter``, ``label``, ``search``, ``scope``, ``score``,
        ``a``, ``b``, ``miss_a``, ``miss_b``, as in ``comparison.explore``); the list goes back
        to page 1."""
        check_keys(changes, OPTIONS, "set_filters")
        self._set(**changes)
        return self._changed()

    def _set(self, **changes: Any) -> None:
        """Check and apply options (each names what the comparison has when it is unknown)."""
        c = self.comparison
        if "a" in changes or "b" in changes:
            a, b = changes.get("a", self.a), changes.get("b", self.b)
            self.a, self.b = c._delta_pairs(c.variant(a), c.variant(b))[
                0
            ]  # never across benchmarks
        if "score" in changes:
            check_choice("score", changes["score"], c.aligned.score_names, "this comparison")
            self.score = changes["score"]
        if "filter" in changes:
            check_choice("filter", changes["filter"], FILTERS, "the comparison explorer")
            self.filter = changes["filter"]
        if "scope" in changes:
            check_choice("scope", changes["scope"], SCOPES, "the search")
            self.scope = changes["scope"]
        if "search" in changes:
            self.search_text = str(changes["search"] or "")
        if "label" in changes:
            if changes["label"] is not None:
                check_choice("label", changes["label"], self.labels(), "this comparison")
            self.label = changes["label"]
        for side in ("miss_a", "miss_b"):
            if changes.get(side) is not None:
                check_choice(side, changes[side], self.miss_classes(), "this comparison")
            if side in changes:
                setattr(self, side, changes[side])

    def miss_classes(self) -> list[str]:
        """The miss classes the ``miss_a`` / ``miss_b`` filters offer (``"lost at stage
        rerank"`` named by stage; ``"found"`` left out), in the taxonomy's order."""
        from heta_notebook.analysis._misses import CLASSES, FOUND

        seen = {c for v in self.comparison.variants for c in self._missed_in(v)} - {FOUND}
        order = {c: i for i, c in enumerate(CLASSES)}
        return sorted(seen, key=lambda c: (order.get(c, len(order)), c))

    def _missed_in(self, variant: Any) -> dict[str, set[str]]:
        """Miss class → the case ids with an evidence item of that class under ``variant``."""
        key = (variant.report, variant.mode)
        if key not in self._missed:
            from heta_notebook.analysis._misses import class_labels

            frame = self.comparison.frames(variant.report).misses(level="evidence")
            rows = frame[frame["query_mode"] == variant.mode]
            found: dict[str, set[str]] = {}
            for label, case_id in zip(class_labels(rows), rows["case_id"].tolist(), strict=True):
                found.setdefault(label, set()).add(str(case_id))
            self._missed[key] = found
        return self._missed[key]

    def labels(self) -> list[str]:
        """The case labels the ``label`` filter offers (``"key=value"``), sorted."""
        return sorted({x for labels in self._case_labels().values() for x in labels})

    def _case_labels(self) -> dict[str, list[str]]:
        """Case id → its labels (the first report that labels the case decides)."""
        if self._labels is None:
            found: dict[str, list[str]] = {}
            for report in self.comparison.reports.values():
                ids = report.frames().case_column("case_id")
                for case_id, labels in zip(
                    ids, row_labels(report, np.arange(len(ids))), strict=True
                ):
                    if labels and str(case_id) not in found:
                        found[str(case_id)] = labels
            self._labels = found
        return self._labels

    def set_pair(self, a: Any, b: Any) -> ComparisonExplorer:
        """Compare variant ``a`` (left) with ``b`` (right)."""
        return self.set_filters(a=a, b=b)

    def set_score(self, score: str) -> ComparisonExplorer:
        """Sort and colour cases by ``score``."""
        return self.set_filters(score=score)

    def set_filter(self, name: str) -> ComparisonExplorer:
        """Show only some cases: one of ``FILTERS`` (``set_filters(filter=name)``)."""
        return self.set_filters(filter=name)

    def search(self, text: str, scope: str = "either") -> ComparisonExplorer:
        """Keep cases whose query, id, evidence or judge reasons contain ``text`` (any case),
        under A or B as ``scope`` says (one of ``SCOPES``, e.g. ``"b_not_a"``)."""
        return self.set_filters(search=text, scope=scope)

    def go_to_page(self, page: int) -> ComparisonExplorer:
        """Show page ``page`` (0-based, clamped)."""
        self.page = min(max(0, int(page)), self.n_pages - 1)
        return self._sync()

    def next_page(self) -> ComparisonExplorer:
        """Go to the next page of cases (stays on the last page)."""
        return self.go_to_page(self.page + 1)

    def previous_page(self) -> ComparisonExplorer:
        """Go to the previous page of cases."""
        return self.go_to_page(self.page - 1)

    def select(self, case_id: str | None) -> ComparisonExplorer:
        """Show ``case_id`` side by side (jumps to the page that lists it)."""
        if case_id is not None:
            hits = np.flatnonzero(self.rows["case_id"].to_numpy() == case_id)
            if not len(hits):
                raise KeyError(f"case {case_id!r} is not in the current list ({self.filter})")
            self.page = int(hits[0]) // self.page_size
        self.selected = case_id
        return self._sync()

    def _changed(self) -> ComparisonExplorer:
        self._refresh_rows()
        self.page = 0
        self.selected = self.rows["case_id"].iloc[0] if len(self.rows) else None
        return self._sync()

    def _refresh_rows(self) -> None:
        rows = case_rows(self.comparison, self.a, self.b, self.score, self.filter, queries=False)
        if self.label is not None:
            labels = self._case_labels()
            ids = rows["case_id"].to_numpy(dtype=object)
            rows = rows[[self.label in labels.get(str(c), ()) for c in ids]]
        if self.search_text.strip():
            rows = rows[self._search_mask(rows["case_id"].to_numpy())]
        for variant, cls in ((self.a, self.miss_a), (self.b, self.miss_b)):
            if cls is not None:
                rows = rows[rows["case_id"].isin(self._missed_in(variant).get(cls, set()))]
        self.rows = rows.reset_index(drop=True)
        if self.selected is None and len(self.rows):
            self.selected = self.rows["case_id"].iloc[0]

    def _search_mask(self, case_ids: np.ndarray) -> np.ndarray:
        needle = self.search_text.strip().casefold()
        in_a = np.array([needle in self._haystack(self.a, c) for c in case_ids], dtype=bool)
        in_b = np.array([needle in self._haystack(self.b, c) for c in case_ids], dtype=bool)
        return {
            "either": in_a | in_b,
            "both": in_a & in_b,
            "b_not_a": in_b & ~in_a,
            "a_not_b": in_a & ~in_b,
        }[self.scope]

    def _haystack(self, variant: Any, case_id: str) -> str:
        al = self.comparison.aligned
        row = al.rows.get((al.variant_index(variant), case_id))
        if row is None:
            return ""
        if variant.report not in self._haystacks:
            self._haystacks[variant.report] = search_texts(self.comparison.reports[variant.report])
        return self._haystacks[variant.report][row]

    # -- HTML -------------------------------------------------------------------------------

    def detail_html(self, case_id: str | None = None) -> str:
        """The side-by-side view of one case (the selected one by default)."""
        case_id = case_id or self.selected
        if case_id is None:
            return str(panel(style(), tag("p", "No case selected.")))
        return str(side_by_side(self.comparison, self.a, self.b, case_id, self.score))

    def list_html(self) -> Markup:
        """The current page of the case list as an HTML table."""
        header = ["case", "query", "A", "B", "Δ"]
        rows = [
            [
                r.case_id,
                truncate(r.query, 70),
                fmt_num(r.value_a),
                fmt_num(r.value_b),
                format_delta(r.delta),
            ]
            for r in self.page_rows().itertuples(index=False)
        ]
        head = tag("thead", tag("tr", *(tag("th", h) for h in header)))
        body = tag("tbody", *(tag("tr", *(tag("td", c) for c in row)) for row in rows))
        return tag("table", head, body, class_="hn-table hn-left")

    def static_html(self) -> str:
        """A readable snapshot of the current state (where the explorer cannot load)."""
        head = tag("h3", f"A {self.a.name} vs B {self.b.name} — {self.score}")
        sub = tag(
            "div",
            f"{self._filter_text()} · {fmt_int(len(self.rows))} cases · page "
            f"{self.page + 1}/{self.n_pages} (static view: the interactive "
            "explorer did not load here)",
            class_="hn-sub",
        )
        if not self.selected:
            detail = raw("")
        elif self._large():  # a case's records are read on demand: not for every display
            detail = tag(
                "p",
                f"Selected case {self.selected}: shown side by side in the interactive "
                "explorer, or with explorer.detail_html().",
                class_="hn-sub",
            )
        else:
            detail = raw(self.detail_html())
        return str(panel(style(), head, sub, self.list_html(), detail, class_=FALLBACK_CLASS))

    def _filter_text(self) -> str:
        """What the list keeps, in words (``"all cases, B missed as split"``)."""
        parts = [FILTERS[self.filter], *([self.label] if self.label else [])]
        parts += [f"{x} missed as {c}" for x, c in (("A", self.miss_a), ("B", self.miss_b)) if c]
        return ", ".join(parts)

    def _large(self) -> bool:
        """Whether the explorer embeds only some details at once (see ``report_data``)."""
        from heta_notebook.display._widgets import partial_details

        reports = self.comparison.reports.values()
        return any(partial_details(r, self.max_cases) for r in reports)

    # -- the widget (state synced both ways) ---------------------------------------------------

    @property
    def widget(self) -> Any:
        """The anywidget view (built on first use; the reports' data is encoded then: for
        large reports the current page at once, the rest as ``widgets.report_data`` says)."""
        if self._widget is None:
            from heta_notebook.display._widgets import ExplorerWidget, report_data

            # biggest changes first, if a cap bites
            priority = tuple(self.rows["case_id"].to_numpy(dtype=object).tolist())
            shown = [*self._page()["case_id"], *([self.selected] if self.selected else [])]
            data = {
                label: report_data(
                    report,
                    max_cases=self.max_cases,
                    priority=priority,
                    first=report_rows(report, shown, self._modes(label)),
                    defer=True,
                )
                for label, report in self.comparison.reports.items()
            }
            self._widget = ExplorerWidget(
                kind="compare", data=data, variants=self._variants(), state=self._front_state()
            )
            self._widget.observe(self._on_front, names="state")
        if not self._holding:  # every preview is in: build the full payloads
            self._start_builds()
        return self._widget

    def _start_builds(self) -> None:
        for model in self._widget.data.values():
            model.start()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The widget and its static view; the full payloads are built once both are made
        (the page shows the previews sooner)."""
        self._holding = True
        try:
            return super()._repr_mimebundle_(include=include, exclude=exclude)
        finally:
            self._holding = False
            if self._widget is not None:
                self._start_builds()

    @property
    def widgets(self) -> dict[str, Any]:
        """Deprecated: the controls live in the browser now; ``{"root": widget}``."""
        warnings.warn(
            "ComparisonExplorer.widgets is deprecated: the controls run in the browser; "
            "use .widget and .state",
            DeprecationWarning,
            stacklevel=2,
        )
        return {"root": self.widget}

    def standalone_html(self) -> str:
        """This explorer in a plain page (no Jupyter): module, data (texts shared by the
        reports), current state."""
        from heta_notebook.display._explorer_data import encode_report
        from heta_notebook.display._widgets import standalone_html

        priority = tuple(self.rows["case_id"])
        data = {
            label: encode_report(r, max_cases=self.max_cases, priority=priority)
            for label, r in self.comparison.reports.items()
        }
        return standalone_html("compare", data, self._front_state(), self._variants())

    def _modes(self, report: str) -> list[str]:
        """The modes of report ``report`` that A or B show."""
        return [v.mode for v in (self.a, self.b) if v.report == report]

    def _variants(self) -> list[dict[str, str]]:
        return [
            {"name": v.name, "report": v.report, "mode": v.mode} for v in self.comparison.variants
        ]

    def _front_state(self) -> dict[str, Any]:
        keys: tuple[str, ...] = ("a", "b", "score", "filter", "label", "search", "scope")
        keys += ("miss_a", "miss_b")
        keys += ("page", "page_size", "selected")
        state = self.state
        return {k: state[k] for k in keys}

    def _sync(self) -> ComparisonExplorer:
        if self._widget is not None and self._widget.state != self._front_state():
            self._widget.state = self._front_state()
        return self

    def _on_front(self, change: dict[str, Any]) -> None:
        """The browser changed the state: adopt it as is (no echo back)."""
        new = dict(change["new"] or {})
        if new == self._front_state():
            return
        self.a, self.b = self.comparison.variant(new["a"]), self.comparison.variant(new["b"])
        self.score, self.filter = new["score"], new.get("filter") or "all"
        self.label = new.get("label") or None
        self.search_text, self.scope = new.get("search") or "", new.get("scope") or "either"
        self.miss_a, self.miss_b = new.get("miss_a") or None, new.get("miss_b") or None
        self._refresh_rows()
        self.page = min(max(0, int(new.get("page") or 0)), self.n_pages - 1)
        self.selected = new.get("selected")

    def __repr__(self) -> str:
        return (
            f"<ComparisonExplorer A {self.a.name} vs B {self.b.name} on {self.score}: "
            f"{len(self.rows)} cases ({self._filter_text()})>"
        )


# --------------------------------------------------------------------------- analysis glue


ROW_COLUMNS = ["case_id", "query", "value_a", "value_b", "delta"]


def case_rows(
    comparison: Comparison, a: Any, b: Any, score: str, filter_: str, *, queries: bool = True
) -> pd.DataFrame:
    """Cases present under a or b with both values and the delta, filtered, largest change
    first (``queries=False``: without the query column, read per page on large reports)."""
    al = comparison.aligned
    s = al.score_index(score)
    ia, ib = al.variant_index(a), al.variant_index(b)
    keep = al.present[:, ia] | al.present[:, ib]
    va, vb = al.values[s][keep, ia], al.values[s][keep, ib]
    ids = al.case_ids[keep]
    frame = pd.DataFrame({"case_id": ids, "value_a": va, "value_b": vb, "delta": vb - va})
    if queries:
        frame.insert(1, "query", [al.queries.get(c, "") for c in ids])
    frame = frame[_filter_mask(comparison, frame, a, b, score, filter_)]
    change = np.nan_to_num(np.abs(frame["delta"].to_numpy(dtype=float)), nan=-1.0)
    order = np.lexsort((frame["case_id"].to_numpy(dtype=str), -change))  # unpaired cases last
    return frame.iloc[order].reset_index(drop=True)


def report_rows(report: Any, case_ids: Sequence[str], modes: Sequence[str]) -> list[int]:
    """The rows of ``report`` holding ``case_ids`` under ``modes``: the cases a page shows
    side by side, whose details come at once (read from the columns' codes)."""
    frames = report.frames()
    keep = _isin_codes(*frames.case_codes("case_id"), case_ids)  # type: ignore[call-arg]
    keep &= _isin_codes(*frames.case_codes("query_mode"), modes)  # type: ignore[call-arg]
    return np.flatnonzero(keep).tolist()


def _isin_codes(codes: np.ndarray, values: np.ndarray, wanted: Sequence[str]) -> np.ndarray:
    """Where a coded column holds one of ``wanted``."""
    hit = np.flatnonzero(pd.Index(values).isin(list(wanted)))
    return np.isin(codes, hit)


def case_queries(comparison: Comparison, case_ids: np.ndarray) -> list[Any]:
    """The queries of ``case_ids`` as ``Aligned.queries`` has them (the last report holding a
    case wins), read from the columns' codes of as few reports as needed."""
    al = comparison.aligned
    built = getattr(al.queries, "_data", al.queries) is not None  # a plain dict, or built
    if built or not len(case_ids):
        return [al.queries.get(c, "") for c in case_ids]
    out: dict[str, Any] = {}
    for report in reversed(list(comparison.reports.values())):
        missing = [c for c in case_ids if c not in out]
        if not missing:
            break
        frames = report.frames()
        codes, values = frames.case_codes("case_id")
        rows = np.flatnonzero(_isin_codes(codes, values, missing))
        if not len(rows):
            continue
        out.update(zip(values[codes[rows]].tolist(), _queries_at(report, rows), strict=True))
    return [out.get(c, "") for c in case_ids]


def _queries_at(report: Any, rows: np.ndarray) -> list[Any]:
    """The queries of the ascending report ``rows`` (only the row groups holding them, only
    that column)."""
    table = report.frames().columns.read_rows("cases", rows, ("query",), one_per_row=True)
    return table.column("query").to_pylist()


def _filter_mask(comparison, frame, a, b, score, filter_) -> np.ndarray:
    delta = frame["delta"].to_numpy()
    if filter_ == "all":
        return np.ones(len(frame), dtype=bool)
    if filter_ in ("changed", "better", "worse"):
        with np.errstate(invalid="ignore"):
            test = {
                "changed": np.abs(delta) > 1e-12,
                "better": delta > 1e-12,
                "worse": delta < -1e-12,
            }[filter_]
        return np.nan_to_num(test).astype(bool)
    if filter_ in ("lost", "gained"):
        changes = comparison.evidence_changes(a, b)
        ids = set(changes.loc[changes["change"] == filter_, "case_id"])
    else:
        ids = _flipped_ids(comparison, score, a, b)
    return frame["case_id"].isin(ids).to_numpy()


def _flipped_ids(comparison: Comparison, score: str, a: Any, b: Any) -> set[str]:
    """Cases whose verdict flipped on ``score``; if it has no verdicts, on any score."""
    flips = comparison.verdict_flips(score, a, b)
    al = comparison.aligned
    if not np.isnan(al.passed[al.score_index(score)]).all():
        return set(flips["case_id"])
    out: set[str] = set()
    for name in comparison.score_names:
        out |= set(comparison.verdict_flips(name, a, b)["case_id"])
    return out


__all__ = [
    "FILTERS",
    "SCOPES",
    "ComparisonExplorer",
    "case_queries",
    "case_rows",
    "report_rows",
    "side_by_side",
]
