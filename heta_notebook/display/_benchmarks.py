"""The multi-benchmark card and figure: systems × benchmarks, the mean over them, W/L counts.

Rendered from a ``BenchmarkComparison``'s frames (analysis computes, this module formats).
Each benchmark cell links to that benchmark's own comparison, shown below the table in a
collapsible section, so every number of the table opens the per-case comparison behind it.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from heta_notebook._util.formatting import format_delta, format_p
from heta_notebook.display._figures import esc as _h
from heta_notebook.display._html import Markup, details, panel, raw, style, tag
from heta_notebook.display._theme import (
    BAD,
    MUTED,
    OK,
    color_map,
    fit_title,
    fmt_num,
    plotly_template,
)

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

    from heta_notebook.analysis._benchmarks import BenchmarkComparison

UP, DOWN = "▲", "▼"
CSS = (
    """
.hn-bench td a{color:inherit;text-decoration:none;display:block}
.hn-bench td a:hover{text-decoration:underline}
.hn-bench .hn-up{color:__OK__;font-size:10px;margin-left:3px}
.hn-bench .hn-down{color:__BAD__;font-size:10px;margin-left:3px}
.hn-bench td.hn-mean{border-left:2px solid #D1D5DB;font-weight:600}
.hn-bench td.hn-wl{color:__MUTED__}
""".replace("__OK__", OK)
    .replace("__BAD__", BAD)
    .replace("__MUTED__", MUTED)
)


def benchmarks_html(bench: BenchmarkComparison, score: str | None = None) -> str:
    """The card: a systems × benchmarks table with markers, Mean, W/L, and the comparisons."""
    from heta_notebook.display._export import comparison_section
    from heta_notebook.display._setup import plotlyjs_for_card

    score = score or bench.primary_score
    anchor = _anchor(bench)
    parts = [comparison_section(bench.benchmark(name)) for name in bench.benchmarks]
    sections = [
        details(tag("b", f"{name}: the comparison behind this column"), body, id=f"{anchor}-{i}")
        for i, (name, (body, _)) in enumerate(zip(bench.benchmarks, parts, strict=True))
    ]
    if any(charted for _, charted in parts):  # plotly.js once for all its comparisons
        sections.insert(0, raw(plotlyjs_for_card()))
    notes = [tag("p", note, class_="hn-note") for note in bench.notes()]
    return str(
        panel(
            style(),
            raw(f"<style>{CSS}</style>"),
            _header(bench, score),
            _table(bench, score, anchor),
            *notes,
            *sections,
            class_="hn-bench",
        )
    )


def _anchor(bench: BenchmarkComparison) -> str:
    key = "|".join([*bench.benchmarks, *bench.variants])
    return "hn-bench-" + hashlib.blake2s(key.encode("utf-8"), digest_size=4).hexdigest()


def _header(bench: BenchmarkComparison, score: str) -> Markup:
    title = f"{score}: {len(bench.variants)} system(s) on {len(bench.benchmarks)} benchmark(s)"
    sub = (
        f"baseline {bench.baseline_name()} · paired sign-flip permutation test within each "
        f"benchmark (cases never pair across benchmarks), Holm-corrected per benchmark over "
        f"its pairs · {UP}/{DOWN} significantly better/worse than the baseline (p<0.05) · "
        "Mean: mean of per-benchmark means · W/L: benchmarks won/lost significantly · "
        "click a cell to open that benchmark's comparison"
    )
    return tag("div", tag("h3", title), tag("div", sub, class_="hn-sub"), class_="hn-head")


def _table(bench: BenchmarkComparison, score: str, anchor: str) -> Markup:
    means = bench.table(score)
    wins = bench.wins(score)
    colors = color_map(bench.variants)
    best = {c: np.nanmax(means[c].to_numpy()) if means[c].notna().any() else np.nan for c in means}
    head = tag(
        "tr",
        tag("th", "system"),
        *(tag("th", name) for name in bench.benchmarks),
        tag("th", "Mean"),
        tag("th", "W/L", title="benchmarks where the system is significantly better / worse"),
    )
    body = []
    for variant, row in means.iterrows():
        cells = [tag("td", _swatch(colors[variant]), variant)]
        for i, name in enumerate(bench.benchmarks):
            cells.append(_cell(bench, variant, name, score, row[name], best[name], f"{anchor}-{i}"))
        mean_best = _is_best(row["Mean"], best["Mean"])
        cells.append(
            tag("td", fmt_num(row["Mean"]), class_="hn-mean" + (" hn-best" if mean_best else ""))
        )
        w = wins.loc[variant]
        cells.append(tag("td", f"{w['wins']}/{w['losses']}", class_="hn-wl"))
        body.append(tag("tr", *cells))
    return tag("table", tag("thead", head), tag("tbody", *body), class_="hn-table")


def _cell(
    bench: BenchmarkComparison,
    variant: str,
    name: str,
    score: str,
    value: float,
    best: float,
    target: str,
) -> Markup:
    info = bench.cell(variant, name, score)
    mark: Any = ""
    tooltip = f"{name}: mean {fmt_num(value)}"
    if info["delta"] is not None:
        tooltip += (
            f"\ndelta vs baseline {format_delta(info['delta'])}, "
            f"{format_p(info['p_adjusted'])} adjusted"
        )
        if info["direction"] == "better":
            mark = tag("span", UP, class_="hn-up")
        elif info["direction"] == "worse":
            mark = tag("span", DOWN, class_="hn-down")
    elif not pd.isna(value):
        tooltip += "\n(baseline, or no paired baseline on this benchmark)"
    link = tag("a", fmt_num(value), mark, href=f"#{target}")
    return tag("td", link, class_="hn-best" if _is_best(value, best) else None, title=tooltip)


def _is_best(value: float, best: float) -> bool:
    return bool(np.isfinite(value) and np.isfinite(best) and np.isclose(value, best))


def _swatch(color: str) -> Markup:
    return tag("span", "", class_="hn-swatch", style=f"background:{color}")


class BenchmarkPlots:
    """Figures of a multi-benchmark comparison; every method returns a ``go.Figure``."""

    def __init__(self, bench: BenchmarkComparison) -> None:
        self.bench = bench

    def bars(self, score: str | None = None) -> go.Figure:
        """Grouped bars per benchmark and the Mean, one colour per system, ▲/▼ on the bars
        significantly better/worse than the baseline."""
        import plotly.graph_objects as go

        bench = self.bench
        score = score or bench.primary_score
        means = bench.table(score)
        colors = color_map(bench.variants)
        x = [_h(b) for b in [*bench.benchmarks, "Mean"]]
        fig = go.Figure()
        for variant, row in means.iterrows():
            marks, hovers = [], []
            for name in bench.benchmarks:
                info = bench.cell(variant, name, score)
                direction = info["direction"]
                marks.append(UP if direction == "better" else DOWN if direction == "worse" else "")
                delta = "" if info["delta"] is None else f"<br>Δ {format_delta(info['delta'])}, "
                delta += "" if info["delta"] is None else f"{format_p(info['p_adjusted'])} adj."
                hovers.append(f"{_h(variant)} on {_h(name)}: {fmt_num(row[name])}{delta}")
            marks.append("")
            hovers.append(f"{_h(variant)}: mean over benchmarks {fmt_num(row['Mean'])}")
            fig.add_bar(
                x=x,
                y=row.to_numpy(dtype=float),
                name=_h(variant),
                marker_color=colors[variant],
                text=marks,
                textposition="outside",
                hovertext=hovers,
                hoverinfo="text",
            )
        fig.update_layout(
            template=plotly_template(),
            barmode="group",
            **fit_title(_h(f"{score} per benchmark ({UP}/{DOWN}: significant vs baseline)")),
            xaxis_title="benchmark",
            yaxis_title=_h(f"mean {score}"),
            legend_title_text="system",
            uniformtext_minsize=8,
        )
        top = np.nanmax(means.to_numpy(dtype=float)) if means.notna().any().any() else 1.0
        fig.update_yaxes(range=[0, top * 1.12])
        return fig

    def __call__(self, score: str | None = None) -> go.Figure:
        return self.bars(score)


__all__ = ["BenchmarkPlots", "benchmarks_html"]
