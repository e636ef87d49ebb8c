"""Side-by-side explorer of two variants: cases sorted by delta, A and B next to each other.

``comparison.explore()`` returns a :class:`ComparisonExplorer`. Pick A, B and a score; the
cases are listed (paged) by how much they changed; the selected case shows A and B side by
side: score values, answers, judge reasons, expected evidence found / missed (gained and lost
highlighted) and the retrieved results. Filters: evidence found by A but missed by B (and
the reverse), judge verdict flipped, B better / worse.

Everything is driven by plain methods (``set_pair``, ``set_filter``, ``select``, ``next_page``)
and readable through ``state`` so tests and notebooks can drive it without a browser. Outside a
live kernel (exported notebook) the static HTML of the current state is shown instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from heta_notebook.analysis.compare import format_delta
from heta_notebook.analysis.frames import case_evidence, case_results, expected_of
from heta_notebook.display.fallback import StaticFallback
from heta_notebook.display.html import (
    Markup,
    badge,
    details,
    panel,
    raw,
    style,
    tag,
    truncate,
)
from heta_notebook.display.theme import fmt_int, fmt_num

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.analysis.compare import Comparison
    from heta_notebook.schema import EvaluationCaseResult

FILTERS = {
    "all": "all cases",
    "changed": "score changed",
    "better": "B better",
    "worse": "B worse",
    "lost": "evidence found by A, missed by B",
    "gained": "evidence found by B, missed by A",
    "flipped": "judge verdict (passed) flipped",
}
PAGE_SIZE = 15
FALLBACK_CLASS = "hn-compare-explorer-fallback"
_HIDE_FALLBACK = f"<style>.{FALLBACK_CLASS}{{display:none !important}}</style>"
MAX_RESULTS = 10
CSS = """
.hn-x .hn-sides{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.hn-x .hn-side{border:1px solid #E5E7EB;border-radius:6px;padding:6px 10px;min-width:0}
.hn-x .hn-side h4{margin-top:2px}
.hn-x .hn-gained{background:#E8F5E9}
.hn-x .hn-lost{background:#FFEBEE}
.hn-x ul.hn-ev{list-style:none;padding-left:0;margin:2px 0}
.hn-x ul.hn-ev li{padding:1px 4px;border-radius:3px;margin:1px 0}
.hn-x .hn-val{font-size:18px;font-weight:700}
"""


class ComparisonExplorer(StaticFallback):
    """An ipywidgets view of two variants' cases, sorted by the change in one score."""

    def __init__(
        self,
        comparison: Comparison,
        a: Any = None,
        b: Any = None,
        score: str | None = None,
        page_size: int = PAGE_SIZE,
    ) -> None:
        self.comparison = comparison
        pairs = comparison.pairs()
        first = pairs[0] if pairs else (comparison.variants[0], comparison.variants[-1])
        self.a = comparison.variant(a) if a is not None else first[0]
        self.b = comparison.variant(b) if b is not None else first[1]
        self.score = score or comparison.primary_score
        self.filter = "all"
        self.page = 0
        self.page_size = page_size
        self.selected: str | None = None
        self._widgets: dict[str, Any] | None = None
        self._refresh_rows()

    # -- state ------------------------------------------------------------------------------

    @property
    def state(self) -> dict[str, Any]:
        """What is shown: pair, score, filter, page, the page's case ids and the selection."""
        return {"a": self.a.name, "b": self.b.name, "score": self.score, "filter": self.filter,
                "page": self.page, "n_pages": self.n_pages, "n_cases": len(self.rows),
                "case_ids": list(self.page_rows()["case_id"]), "selected": self.selected}  # fmt: skip

    @property
    def n_pages(self) -> int:
        """Number of pages of the current case list (at least 1)."""
        return max(1, -(-len(self.rows) // self.page_size))

    def page_rows(self) -> pd.DataFrame:
        """The cases on the current page."""
        start = self.page * self.page_size
        return self.rows.iloc[start : start + self.page_size]

    def set_pair(self, a: Any, b: Any) -> ComparisonExplorer:
        """Compare variant ``a`` (left) with ``b`` (right)."""
        self.a, self.b = self.comparison.variant(a), self.comparison.variant(b)
        return self._changed()

    def set_score(self, score: str) -> ComparisonExplorer:
        """Sort and colour cases by ``score``."""
        self.comparison.aligned.score_index(score)  # raises a clear KeyError
        self.score = score
        return self._changed()

    def set_filter(self, name: str) -> ComparisonExplorer:
        """Show only some cases: one of ``FILTERS`` (e.g. ``"lost"``, ``"flipped"``)."""
        if name not in FILTERS:
            raise KeyError(f"unknown filter {name!r}; choose one of {sorted(FILTERS)}")
        self.filter = name
        return self._changed()

    def next_page(self) -> ComparisonExplorer:
        """Go to the next page of cases (stays on the last page)."""
        self.page = min(self.page + 1, self.n_pages - 1)
        return self._sync()

    def previous_page(self) -> ComparisonExplorer:
        """Go to the previous page of cases."""
        self.page = max(self.page - 1, 0)
        return self._sync()

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
        self.rows = case_rows(self.comparison, self.a, self.b, self.score, self.filter)
        if self.selected is None and len(self.rows):
            self.selected = self.rows["case_id"].iloc[0]

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
        rows = [[r.case_id, truncate(r.query, 70), fmt_num(r.value_a), fmt_num(r.value_b),
                 format_delta(r.delta)] for r in self.page_rows().itertuples(index=False)]  # fmt: skip
        head = tag("thead", tag("tr", *(tag("th", h) for h in header)))
        body = tag("tbody", *(tag("tr", *(tag("td", c) for c in row)) for row in rows))
        return tag("table", head, body, class_="hn-table hn-left")

    def static_html(self) -> str:
        """A readable snapshot of the current state (for exported notebooks)."""
        head = tag("h3", f"{self.b.name} vs {self.a.name} — {self.score}")
        sub = tag("div", f"{FILTERS[self.filter]} · {fmt_int(len(self.rows))} cases · page "
                         f"{self.page + 1}/{self.n_pages} (static view: run the notebook to "
                         "browse)", class_="hn-sub")  # fmt: skip
        detail = raw(self.detail_html()) if self.selected else raw("")
        return str(panel(style(), head, sub, self.list_html(), detail, class_=FALLBACK_CLASS))

    # -- widgets ----------------------------------------------------------------------------

    @property
    def widget(self) -> Any:
        """The ipywidgets app (built on first use)."""
        if self._widgets is None:
            self._widgets = build_widgets(self)
            self._sync()
        return self._widgets["root"]

    @property
    def widgets(self) -> dict[str, Any]:
        """The named child widgets (dropdowns, list, detail), for tests and customisation."""
        self.widget  # noqa: B018 - builds on first use
        assert self._widgets is not None
        return self._widgets

    def _sync(self) -> ComparisonExplorer:
        if self._widgets is not None:
            sync_widgets(self, self._widgets)
        return self

    def __repr__(self) -> str:
        return (f"<ComparisonExplorer {self.b.name} vs {self.a.name} on {self.score}: "
                f"{len(self.rows)} cases ({FILTERS[self.filter]})>")  # fmt: skip


# --------------------------------------------------------------------------- widgets


def build_widgets(explorer: ComparisonExplorer) -> dict[str, Any]:
    """Dropdowns (A, B, score, filter), pager, paged case list and the detail pane."""
    import ipywidgets as w

    c = explorer.comparison
    names = [v.name for v in c.variants]
    wide = w.Layout(width="auto")
    ws = {
        "a": w.Dropdown(options=names, description="A", layout=wide),
        "b": w.Dropdown(options=names, description="B", layout=wide),
        "score": w.Dropdown(options=c.score_names, description="score", layout=wide),
        "filter": w.Dropdown(
            options=[(v, k) for k, v in FILTERS.items()], description="show", layout=wide
        ),  # fmt: skip
        "previous": w.Button(description="◀ previous", layout=w.Layout(width="110px")),
        "next": w.Button(description="next ▶", layout=w.Layout(width="110px")),
        "page": w.HTML(),
        "cases": w.Select(rows=explorer.page_size, layout=w.Layout(width="100%")),
        "detail": w.HTML(),
    }
    ws["root"] = w.VBox([
        w.HBox([ws["a"], ws["b"], ws["score"]]),
        w.HBox([ws["filter"], ws["previous"], ws["page"], ws["next"]]),
        ws["cases"],
        ws["detail"],
    ])  # fmt: skip
    _connect(explorer, ws)
    return ws


def _connect(explorer: ComparisonExplorer, ws: dict[str, Any]) -> None:
    def guarded(action):
        def handler(change):
            if not ws.get("_syncing"):
                action(change)

        return handler

    ws["a"].observe(guarded(lambda ch: explorer.set_pair(ch["new"], explorer.b)), names="value")
    ws["b"].observe(guarded(lambda ch: explorer.set_pair(explorer.a, ch["new"])), names="value")
    ws["score"].observe(guarded(lambda ch: explorer.set_score(ch["new"])), names="value")
    ws["filter"].observe(guarded(lambda ch: explorer.set_filter(ch["new"])), names="value")
    ws["cases"].observe(guarded(lambda ch: explorer.select(ch["new"])), names="value")
    ws["previous"].on_click(lambda _: explorer.previous_page())
    ws["next"].on_click(lambda _: explorer.next_page())


def sync_widgets(explorer: ComparisonExplorer, ws: dict[str, Any]) -> None:
    """Push the explorer's state into the widgets (without re-triggering the observers)."""
    ws["_syncing"] = True
    try:
        ws["a"].value, ws["b"].value = explorer.a.name, explorer.b.name
        ws["score"].value, ws["filter"].value = explorer.score, explorer.filter
        rows = explorer.page_rows()
        ws["cases"].options = [
            (f"{r.case_id} · Δ {format_delta(r.delta)} · {truncate(r.query, 80)}", r.case_id)
            for r in rows.itertuples(index=False)
        ]
        ws["cases"].rows = max(3, min(explorer.page_size, len(rows)))
        ws["cases"].value = explorer.selected if explorer.selected in set(rows["case_id"]) else None
        ws["page"].value = str(tag("span", f" page {explorer.page + 1}/{explorer.n_pages} · "
                                           f"{fmt_int(len(explorer.rows))} cases "))  # fmt: skip
        ws["previous"].disabled = explorer.page == 0
        ws["next"].disabled = explorer.page >= explorer.n_pages - 1
        ws["detail"].value = _HIDE_FALLBACK + explorer.detail_html()
    finally:
        ws["_syncing"] = False


# --------------------------------------------------------------------------- analysis glue


def case_rows(comparison: Comparison, a: Any, b: Any, score: str, filter_: str) -> pd.DataFrame:
    """Cases present under a or b with both values and the delta, filtered, largest change first."""
    al = comparison.aligned
    s = al.score_index(score)
    ia, ib = al.variant_index(a), al.variant_index(b)
    keep = al.present[:, ia] | al.present[:, ib]
    va, vb = al.values[s][keep, ia], al.values[s][keep, ib]
    ids = al.case_ids[keep]
    frame = pd.DataFrame({"case_id": ids, "query": [al.queries.get(c, "") for c in ids],
                          "value_a": va, "value_b": vb, "delta": vb - va})  # fmt: skip
    frame = frame[_filter_mask(comparison, frame, a, b, score, filter_)]
    change = np.nan_to_num(np.abs(frame["delta"].to_numpy(dtype=float)), nan=-1.0)
    order = np.lexsort((frame["case_id"].to_numpy(dtype=str), -change))  # unpaired cases last
    return frame.iloc[order].reset_index(drop=True)


def _filter_mask(comparison, frame, a, b, score, filter_) -> np.ndarray:
    delta = frame["delta"].to_numpy()
    if filter_ == "all":
        return np.ones(len(frame), dtype=bool)
    if filter_ in ("changed", "better", "worse"):
        with np.errstate(invalid="ignore"):
            test = {"changed": np.abs(delta) > 1e-12, "better": delta > 1e-12,
                    "worse": delta < -1e-12}[filter_]  # fmt: skip
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


# --------------------------------------------------------------------------- side by side


def side_by_side(comparison: Comparison, a: Any, b: Any, case_id: str, score: str) -> Markup:
    """Case ``case_id`` under a and b in two columns, gained / lost evidence highlighted."""
    ra, rb = comparison.case_result(a, case_id), comparison.case_result(b, case_id)
    ev_a, ev_b = _evidence(ra), _evidence(rb)
    found_a = {e["label"] for e in ev_a if e["matched"]}
    found_b = {e["label"] for e in ev_b if e["matched"]}
    query = comparison.aligned.queries.get(case_id, "")
    expected = _expected_answers(ra or rb)
    head = [tag("h3", "Case ", tag("code", case_id)), tag("div", query, class_="hn-answer")]
    if expected:
        head.append(tag("div", tag("b", "expected: "), " | ".join(expected), class_="hn-sub"))
    sides = tag(
        "div",
        _side("A", a, ra, ev_a, found_b, score, gained=False),
        _side("B", b, rb, ev_b, found_a, score, gained=True),
        class_="hn-sides",
    )
    return panel(style(), raw(f"<style>{CSS}</style>"), *head, sides, class_="hn-x")


def _evidence(result: EvaluationCaseResult | None) -> list[dict[str, Any]]:
    return case_evidence(result) if result is not None else []


def _expected_answers(result: EvaluationCaseResult | None) -> list[str]:
    expected = expected_of(result) if result is not None else None
    return list(expected.answers) if expected is not None else []


def _side(title, variant, result, evidence, found_other, score, gained: bool) -> Markup:
    name = getattr(variant, "name", str(variant))
    if result is None:
        return tag("div", tag("h4", f"{title}: {name}"), badge("case missing", "warn"),
                   class_="hn-side")  # fmt: skip
    value = result.score(score)
    parts = [tag("h4", f"{title}: {name}"),
             tag("div", tag("span", _score_text(value), class_="hn-val"), " ", score)]  # fmt: skip
    if result.error is not None:
        parts.append(tag("div", f"{result.error.error_type}: {result.error.message}",
                         class_="hn-error"))  # fmt: skip
    if result.response is not None and result.response.answer:
        parts += [tag("b", "answer"), tag("div", result.response.answer, class_="hn-answer")]
    parts += _reasons(result)
    parts.append(_evidence_list(evidence, found_other, gained))
    parts.append(_results_list(result))
    return tag("div", *parts, class_="hn-side")


def _score_text(score: Any) -> str:
    if score is None:
        return "–"
    if score.status != "scored":
        return score.status
    return fmt_num(score.value)


def _reasons(result: EvaluationCaseResult) -> list[Markup]:
    out = []
    for s in result.scores:
        reason = s.reason or (s.metadata.get("error") or {}).get("message")
        if reason:
            verdict = "" if s.passed is None else (" ✓ passed" if s.passed else " ✗ failed")
            out.append(tag("div", tag("b", f"{s.name}: {_score_text(s)}{verdict}"), tag("br"),
                           reason, class_="hn-reason"))  # fmt: skip
    return out


def _evidence_list(evidence: list[dict[str, Any]], found_other: set[str], gained: bool) -> Markup:
    if not evidence:
        return tag("div", "no expected evidence recorded for this case", class_="hn-note")
    items = []
    for e in evidence:
        change = None
        if e["matched"] and e["label"] not in found_other and gained:
            change = ("gained", "hn-gained", "ok")
        elif not e["matched"] and e["label"] in found_other and gained:
            change = ("lost", "hn-lost", "bad")
        elif e["matched"] and e["label"] not in found_other and not gained:
            change = ("lost by B", "hn-lost", "bad")
        mark = badge(f"found @{e['rank']}", "ok") if e["matched"] else badge("missed", "muted")
        extra = [" ", badge(change[0], change[2])] if change else []
        items.append(tag("li", mark, " ", e["label"], *extra,
                         class_=change[1] if change else None))  # fmt: skip
    n_found = sum(1 for e in evidence if e["matched"])
    return tag("div", tag("b", f"expected evidence: {n_found}/{len(evidence)} found"),
               tag("ul", *items, class_="hn-ev"))  # fmt: skip


def _results_list(result: EvaluationCaseResult) -> Markup:
    rows = case_results(result)
    if not rows:
        return raw("")
    items = []
    for r in rows[:MAX_RESULTS]:
        rel = r["relevance"]
        mark = badge(f"rel {rel}", "ok") if rel else badge("not relevant", "muted")
        mark = mark if rel is not None else badge("unjudged", "muted")
        items.append(tag("div", tag("b", f"#{r['rank']} "), r["document_id"] or r["result_id"],
                         " ", mark, tag("div", truncate(r["text"], 220), class_="hn-chunk"),
                         class_="hn-result hn-rel" if r["relevant"] else "hn-result"))  # fmt: skip
    more = len(rows) - MAX_RESULTS
    tail = [tag("div", f"… {more} more results", class_="hn-note")] if more > 0 else []
    return details(f"retrieved results ({len(rows)})", *items, *tail, open_=True)


__all__ = ["FILTERS", "ComparisonExplorer", "case_rows", "side_by_side"]
