"""The one place that makes pages: ``report.to_html``, ``comparison.to_html``, the CLI export
and the gate page are self-contained HTML files that open offline.

``to_html(path)`` writes the page and returns the path; ``to_html()`` returns an
:class:`HtmlPage`, the page as a string that displays as a one-line note (never megabytes of
text in a notebook) and has ``save(path)``. plotly.js is embedded once per page, gzip-compressed
(``display._setup.plotlyjs_block``, as in an exported notebook), each figure is a div
(``include_plotlyjs=False``), and no ``<script src>`` points anywhere. The page holds the
report card, the charts and the case explorer: the same ES module and columnar data as
``report.explore()`` in a notebook (``display/widgets.standalone_html``), so every case can be
filtered, searched and opened with no Jupyter. Above ``max_cases`` case results the most
informative ones are embedded and the page says how many were left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from heta_notebook._util.paths import atomic_write_text
from heta_notebook.display._card import report_card_html
from heta_notebook.display._explorer_data import DEFAULT_MAX_CASES
from heta_notebook.display._figures import ReportPlots
from heta_notebook.display._html import Markup, join, raw, tag
from heta_notebook.display._theme import CSS
from heta_notebook.schema._headline import headline_score, parse_at_k
from heta_notebook.schema._records import EvaluationReport

PAGE_CSS = (
    "body{margin:24px;background:#fff} section{margin:18px 0 28px 0} "
    ".hn-fig{border:1px solid #E5E7EB;border-radius:6px;margin:10px 0;padding:4px}"
)


class HtmlPage(str):
    """A complete offline HTML page. It is a ``str`` (write it, search it), but a notebook
    shows it as a one-line note rather than megabytes of text; ``save(path)`` writes it."""

    title: str  # type: ignore[assignment]  # the page's title, not str.title()

    def __new__(cls, html: str, title: str) -> HtmlPage:
        page = super().__new__(cls, html)
        page.title = title
        return page

    def save(self, path: str | PathLike[str]) -> Path:
        """Write the page to ``path`` (atomically, folders created) and return the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, str(self))
        return target

    def __repr__(self) -> str:
        return f"<HtmlPage {self.title!r}, {len(self) / 1e6:.1f} MB: .save(path) writes it>"

    def _repr_html_(self) -> str:
        note = f"HTML page “{self.title}”, {len(self) / 1e6:.1f} MB: call .save(path) to write it"
        return str(tag("div", note, class_="hn-note"))


def deliver(page: str, title: str, path: str | PathLike[str] | None) -> HtmlPage | Path:
    """``page`` written to ``path`` (the path returned), or as an :class:`HtmlPage`."""
    html = HtmlPage(page, title)
    return html if path is None else html.save(path)


def report_to_html(
    report: EvaluationReport,
    path: str | PathLike[str] | None = None,
    *,
    max_cases: int | None = DEFAULT_MAX_CASES,
    figures: bool = True,
    title: str | None = None,
) -> HtmlPage | Path:
    """``report`` as a standalone page: card, charts, case explorer; written to ``path``.

    ``max_cases`` caps the case results embedded in the case explorer (the most informative
    first; the page says how many were left out); ``None`` embeds every one. Returns the
    path written, or without ``path`` the page (:class:`HtmlPage`).
    """
    heading = tag("h1", title, style="font-size:20px;margin:0 0 12px 0") if title else raw("")
    title = title or f"Evaluation report · {report.label}"
    body = [
        heading,
        raw(report_card_html(report, standalone_style=False)),
        _charts(report) if figures else raw(""),
        _cases(report, max_cases),
    ]
    return deliver(html_page(title, body, plotly=figures), title, path)


def comparison_to_html(
    comparison: Any,
    path: str | PathLike[str] | None = None,
    *,
    max_cases: int | None = DEFAULT_MAX_CASES,
    figures: bool = True,
    title: str | None = None,
    head: Sequence[Any] = (),
    explore: dict[str, Any] | None = None,
) -> HtmlPage | Path:
    """A comparison as a standalone page: ``head`` (e.g. a gate's verdict), the table, bars
    and deltas, and the comparison explorer opened with ``explore`` options (e.g. on the
    regressed cases). Returns the path written, or without ``path`` the page."""
    title = title or "Comparison · " + " vs ".join(comparison.labels)
    body, charted = comparison_section(comparison, max_cases, figures=figures, explore=explore)
    return deliver(html_page(title, [*head, body], plotly=charted), title, path)


def comparison_section(
    comparison: Any,
    max_cases: int | None = DEFAULT_MAX_CASES,
    *,
    figures: bool = True,
    explore: dict[str, Any] | None = None,
) -> tuple[Markup, bool]:
    """A comparison's table, bars, deltas and explorer for a page that holds plotly.js once
    (a comparison page, or each benchmark of ``compare_benchmarks``); and whether it has charts."""
    from heta_notebook.display._comparison import comparison_html

    figs = [comparison.plot.bars()] if figures else []
    if figures and comparison.pairs():  # reports with no mode in common have no deltas
        figs.append(comparison.plot.deltas())
    body = [
        raw(comparison_html(comparison)),
        *(figure_html(f) for f in figs),
        comparison_cases(comparison, max_cases, **(explore or {})),
    ]
    return join(body), bool(figs)


def html_page(title: str, body: Sequence[Any], *, plotly: bool = True) -> str:
    """A complete offline page: shared CSS, plotly.js once, compressed (when ``plotly``: the
    cartesian bundle unless a figure of ``body`` needs another trace), then ``body``."""
    from heta_notebook.display._setup import plotlyjs_block

    content = join(body)
    full = FULL_PLOTLY_MARK in content
    script = raw(plotlyjs_block("full" if full else "cartesian")) if plotly else ""
    head = join(
        [
            raw('<meta charset="utf-8">'),
            raw('<meta name="viewport" content="width=device-width, initial-scale=1">'),
            tag("title", title),
            raw(f"<style>{CSS}\n{PAGE_CSS}</style>"),
            script,
        ]
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head>{head}</head>'
        f'<body><div class="hn">{content}</div></body></html>\n'
    )


FULL_PLOTLY_MARK = "hn-fig-full-plotly"  # a figure the cartesian bundle cannot draw


def figure_html(fig: Any) -> Markup:
    """One plotly figure as a div for a page that already loaded plotly.js (marked when one of
    its traces is outside the cartesian bundle, so its page carries the full library)."""
    from heta_notebook.display._setup import CARTESIAN_TRACES

    inner = fig.to_html(
        include_plotlyjs=False, full_html=False, config={"displaylogo": False, "responsive": True}
    )
    full = any((trace.type or "scatter") not in CARTESIAN_TRACES for trace in fig.data)
    return tag("div", raw(inner), class_=f"hn-fig {FULL_PLOTLY_MARK}" if full else "hn-fig")


# --------------------------------------------------------------------------- sections


def _charts(report: EvaluationReport) -> Markup:
    if not report.case_results:
        return raw("")
    plots = ReportPlots(report)
    builders: list[Any] = [plots.metrics]
    builders += [lambda m=metric: plots.at_k(m) for metric in _at_k_metrics(report.score_names)[:2]]
    headline = headline_score(report.score_names)
    if headline is not None:
        builders.append(lambda: plots.distribution(headline))
    builders.append(plots.latency)
    figs = []
    for build in builders:
        try:
            figs.append(build())
        except ValueError:  # nothing to draw (e.g. only skipped or text scores)
            continue
    return tag("section", tag("h2", "Charts"), *(figure_html(f) for f in figs))


def _at_k_metrics(names: Sequence[str]) -> list[str]:
    counts: dict[str, int] = {}
    for name in names:
        parsed = parse_at_k(name)
        if parsed:
            counts[parsed[0]] = counts.get(parsed[0], 0) + 1
    return [m for m, c in counts.items() if c > 1]


def _cases(report: EvaluationReport, max_cases: int | None) -> Markup:
    """The browser case explorer over the report, with no Jupyter needed."""
    from heta_notebook.display._explorer import ReportExplorer
    from heta_notebook.display._explorer_data import encode_report
    from heta_notebook.display._widgets import standalone_html

    state = ReportExplorer(report).state
    data = encode_report(report, max_cases=max_cases)
    return tag("section", tag("h2", "Cases"), raw(standalone_html("report", data, state)))


def comparison_cases(
    comparison: Any, max_cases: int | None = DEFAULT_MAX_CASES, **options: Any
) -> Markup:
    """The browser comparison explorer (cases side by side) for a plain page, opened with
    ``options`` (``a``, ``b``, ``score``, ``filter``, ... as ``comparison.explore`` takes)."""
    from heta_notebook.display._comparison_explorer import ComparisonExplorer

    explorer = ComparisonExplorer(comparison, max_cases=max_cases, **options)
    return tag("section", tag("h2", "Cases side by side"), raw(explorer.standalone_html()))


__all__ = [
    "HtmlPage",
    "comparison_cases",
    "comparison_section",
    "comparison_to_html",
    "deliver",
    "figure_html",
    "html_page",
    "report_to_html",
]
