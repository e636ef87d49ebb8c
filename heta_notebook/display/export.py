"""``report.to_html(path)``: one self-contained HTML file that opens offline.

plotly.js is embedded once (``plotly.offline.get_plotlyjs()``), each figure is a div
(``include_plotlyjs=False``), and no ``<script src>`` points anywhere. The page holds the
report card, the charts and a collapsible section per case × mode with matched/missing
evidence and judge reasons. Large reports are capped (``max_cases``) and the page says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from heta_notebook.display.card import report_card_html
from heta_notebook.display.case_detail import case_detail_html
from heta_notebook.display.figures import ReportPlots, headline_score, parse_at_k
from heta_notebook.display.html import Markup, badge, details, join, raw, tag, truncate
from heta_notebook.display.theme import CSS, fmt_int, fmt_num
from heta_notebook.schema import EvaluationCaseResult, EvaluationReport

DEFAULT_MAX_CASES = 200
PAGE_CSS = "body{margin:24px;background:#fff} section{margin:18px 0 28px 0} " \
           ".hn-fig{border:1px solid #E5E7EB;border-radius:6px;margin:10px 0;padding:4px}"  # fmt: skip


def report_to_html(
    report: EvaluationReport,
    path: str | PathLike[str] | None = None,
    *,
    max_cases: int | None = DEFAULT_MAX_CASES,
    figures: bool = True,
    title: str | None = None,
) -> str:
    """Render ``report`` as a standalone HTML page; write it to ``path`` when given.

    ``max_cases`` caps the per-case sections (case × mode results, in report order);
    ``None`` includes every case. Returns the HTML text.
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
    head = join([raw('<meta charset="utf-8">'),
                 raw('<meta name="viewport" content="width=device-width, initial-scale=1">'),
                 tag("title", title), raw(f"<style>{CSS}\n{PAGE_CSS}</style>"), script])  # fmt: skip
    return f"<!DOCTYPE html>\n<html lang=\"en\"><head>{head}</head>" \
           f"<body><div class=\"hn\">{join(body)}</div></body></html>\n"  # fmt: skip


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    # a literal "</script" inside the library would end the tag early; plotly.js has none,
    # but guard anyway so the page can never break out of its own script element
    return get_plotlyjs().replace("</script", "<\\/script")


def figure_html(fig: Any) -> Markup:
    """One plotly figure as a div for a page that already loaded plotly.js."""
    inner = fig.to_html(include_plotlyjs=False, full_html=False,
                        config={"displaylogo": False, "responsive": True})  # fmt: skip
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
    results = report.case_results
    shown = results if max_cases is None else results[:max_cases]
    note = (
        f"Showing all {fmt_int(len(results))} case results."
        if len(shown) == len(results)
        else f"Showing the first {fmt_int(len(shown))} of {fmt_int(len(results))} case results "
        f"(report order); export with max_cases=None to include all."
    )
    headline = headline_score(report.score_names)
    sections = [details(_case_summary(r, headline), raw(case_detail_html(r))) for r in shown]
    return tag("section", tag("h2", "Cases"), tag("div", note, class_="hn-note"), *sections)


def _case_summary(result: EvaluationCaseResult, headline: str | None) -> Markup:
    parts: list[Any] = [tag("b", result.case_id), f" · {result.query_mode} · "]
    if result.error is not None:
        parts.append(badge("query error", "bad"))
    score = result.score(headline) if headline else None
    if score is not None and score.status == "scored":
        parts.append(f"{score.name} {fmt_num(score.value)} ")
    evidence = next((s for s in result.scores if "missing_evidence" in s.metadata), None)
    if evidence is not None:
        missing = len(evidence.metadata.get("missing_evidence") or [])
        parts.append(badge(f"{missing} evidence missing", "bad") if missing
                     else badge("all evidence found", "ok"))  # fmt: skip
    judged = [s for s in result.scores if s.reason and s.status == "scored"]
    if judged:
        parts.append(badge(f"{len(judged)} judge reason{'s' if len(judged) > 1 else ''}", "info"))
    parts.append(tag("span", " " + truncate(result.query, 90), class_="hn-sub"))
    return join(parts)


__all__ = ["figure_html", "html_page", "report_to_html"]
