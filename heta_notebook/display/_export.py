"""``report.to_html(path)``: one self-contained HTML file that opens offline.

plotly.js is embedded once (``plotly.offline.get_plotlyjs()``), each figure is a div
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

from heta_notebook.display._card import report_card_html
from heta_notebook.display._explorer_data import DEFAULT_MAX_CASES
from heta_notebook.display._figures import ReportPlots, headline_score, parse_at_k
from heta_notebook.display._html import Markup, join, raw, tag
from heta_notebook.display._theme import CSS
from heta_notebook.schema._records import EvaluationReport

PAGE_CSS = (
    "body{margin:24px;background:#fff} section{margin:18px 0 28px 0} "
    ".hn-fig{border:1px solid #E5E7EB;border-radius:6px;margin:10px 0;padding:4px}"
)


def report_to_html(
    report: EvaluationReport,
    path: str | PathLike[str] | None = None,
    *,
    max_cases: int | None = DEFAULT_MAX_CASES,
    figures: bool = True,
    title: str | None = None,
) -> str:
    """Render ``report`` as a standalone HTML page; write it to ``path`` when given.

    ``max_cases`` caps the case results embedded in the case explorer (the most informative
    first; the page says how many were left out); ``None`` embeds every one. Returns the HTML.
    """
    heading = tag("h1", title, style="font-size:20px;margin:0 0 12px 0") if title else raw("")
    title = title or f"Evaluation report · {report.label}"
    body = [
        heading,
        raw(report_card_html(report, standalone_style=False)),
        _charts(report) if figures else raw(""),
        _cases(report, max_cases),
    ]
    page = html_page(title, body, plotly=figures)
    if path is not None:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
    return page


def html_page(title: str, body: Sequence[Any], *, plotly: bool = True) -> str:
    """A complete offline page: shared CSS, plotly.js inlined once (when ``plotly``), ``body``."""
    script = raw(f'<script type="text/javascript">{_plotly_js()}</script>') if plotly else ""
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
        f'<body><div class="hn">{join(body)}</div></body></html>\n'
    )


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    # a literal "</script" inside the library would end the tag early; plotly.js has none,
    # but guard anyway so the page can never break out of its own script element
    return get_plotlyjs().replace("</script", "<\\/script")


def figure_html(fig: Any) -> Markup:
    """One plotly figure as a div for a page that already loaded plotly.js."""
    inner = fig.to_html(
        include_plotlyjs=False, full_html=False, config={"displaylogo": False, "responsive": True}
    )
    return tag("div", raw(inner), class_="hn-fig")


# --------------------------------------------------------------------------- sections


def _charts(report: EvaluationReport) -> Markup:
    if not report.case_results:
        return raw("")
    plots = ReportPlots(report)
    builders = [plots.metrics]
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
    from heta_notebook.display._widgets import pack, standalone_html

    state = ReportExplorer(report).state
    data = pack(encode_report(report, max_cases=max_cases))
    return tag("section", tag("h2", "Cases"), raw(standalone_html("report", data, state)))


def comparison_cases(comparison: Any, max_cases: int | None = DEFAULT_MAX_CASES) -> Markup:
    """The browser comparison explorer (cases side by side) for a plain page."""
    from heta_notebook.display._comparison_explorer import ComparisonExplorer

    return tag(
        "section",
        tag("h2", "Cases side by side"),
        raw(ComparisonExplorer(comparison, max_cases=max_cases).standalone_html()),
    )


__all__ = ["comparison_cases", "figure_html", "html_page", "report_to_html"]
