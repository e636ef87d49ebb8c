"""Plotly figures of reports: metric bars with CIs, per-case distributions, metric@k, latency.

The building blocks take tidy DataFrames and return ``go.Figure`` objects that a user can
still modify (plotly-express style), so they work for one report (``report.plot``) and for
several (the comparison view passes a frame with one ``color`` value per recipe × mode).
Colours come from :func:`heta_notebook.display._theme.color_map`, so a label has the same
colour in every figure. Every label and hover text is HTML-escaped (plotly renders them as HTML).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook.display._html import esc as _html_esc
from heta_notebook.display._html import truncate
from heta_notebook.display._theme import color_map, fit_title, fmt_ci, fmt_int, plotly_template
from heta_notebook.schema._headline import parse_at_k
from heta_notebook.schema._records import EvaluationReport

MAX_HOVER_POINTS = 5000


def esc(text: Any) -> str:
    """Escape text for plotly, which renders labels and hover text as (limited) HTML.

    Like ``html.escape(quote=True)`` but quotes become decimal entities, which plotly
    decodes for display (it shows ``&quot;`` literally)."""
    return _html_esc(text).replace("&quot;", "&#34;").replace("&#x27;", "&#39;")


def _go() -> Any:
    import plotly.graph_objects as go

    return go


def _new_figure(title: str, xaxis: str, yaxis: str, legend: str) -> Any:
    fig = _go().Figure()
    fig.update_layout(
        template=plotly_template(),
        **fit_title(esc(title)),
        xaxis_title=esc(xaxis),
        yaxis_title=esc(yaxis),
        legend_title_text=esc(legend),
    )
    return fig


def _labels(values: Sequence[Any]) -> list[str]:
    return [esc(v) for v in values]


# --------------------------------------------------------------------------- tidy-frame builders


def bar_figure(
    frame: pd.DataFrame,
    *,
    x: str = "score",
    y: str = "mean",
    color: str = "query_mode",
    error_low: str | None = "ci_low",
    error_high: str | None = "ci_high",
    title: str = "Mean score by query mode (95% CI)",
    xaxis_title: str = "score",
    yaxis_title: str = "mean over scored cases",
) -> Any:
    """Grouped bars: one bar group per ``x`` value, one colour per ``color`` value, CI whiskers.

    ``frame`` is tidy (e.g. ``ReportFrames.summary()``); ``n``/``n_skipped``/``n_error``
    columns, when present, show up in the hover text.
    """
    fig = _new_figure(title, xaxis_title, yaxis_title, color)
    colors = color_map(frame[color].unique())
    x_order = _labels(pd.unique(frame[x]))
    for label, group in frame.groupby(color, sort=False):
        fig.add_trace(
            _go().Bar(
                name=esc(label),
                x=_labels(group[x]),
                y=group[y].to_numpy(dtype=float),
                marker_color=colors[str(label)],
                error_y=_error_bars(group, y, error_low, error_high),
                customdata=_bar_hover(group, x, y, color, error_low, error_high),
                hovertemplate="%{customdata}<extra></extra>",
            )
        )
    fig.update_layout(barmode="group")
    fig.update_xaxes(categoryorder="array", categoryarray=x_order)
    return fig


def _error_bars(group: pd.DataFrame, y: str, low: str | None, high: str | None) -> dict | None:
    if not low or not high or low not in group or high not in group:
        return None
    values = group[y].to_numpy(dtype=float)
    plus = np.clip(group[high].to_numpy(dtype=float) - values, 0, None)
    minus = np.clip(values - group[low].to_numpy(dtype=float), 0, None)
    return {
        "type": "data",
        "array": np.nan_to_num(plus),
        "arrayminus": np.nan_to_num(minus),
        "visible": True,
        "thickness": 1.2,
        "width": 3,
    }


def _bar_hover(group, x, y, color, low, high) -> list[str]:
    texts = []
    for row in group.to_dict("records"):
        lines = [f"<b>{esc(row[x])}</b> · {esc(row[color])}", f"{esc(y)}: {row[y]:.4f}"]
        if low and high and low in row and pd.notna(row.get(low)):
            lines.append(f"95% CI: {fmt_ci(row[low], row[high], 4)}")
        if "n" in row:
            counts = f"n={fmt_int(row['n'])}"
            for key in ("n_skipped", "n_error"):
                if key in row and row[key]:
                    counts += f", {key[2:]}={fmt_int(row[key])}"
            lines.append(counts)
        texts.append("<br>".join(lines))
    return texts


def distribution_figure(
    frame: pd.DataFrame,
    *,
    value: str = "value",
    color: str = "query_mode",
    hover: Sequence[str] = ("case_id",),
    kind: str = "auto",
    title: str = "Per-case distribution",
    value_title: str = "value",
) -> Any:
    """Per-case distribution per ``color`` value: box plots (``kind="box"``, with points),
    violins, or histograms (``"histogram"``; the default for 0/1 values)."""
    values = frame[value].to_numpy(dtype=float)
    if kind == "auto":
        kind = "histogram" if np.isin(values[~np.isnan(values)], (0.0, 1.0)).all() else "box"
    x_title, y_title = (value_title, "cases") if kind == "histogram" else (color, value_title)
    fig = _new_figure(title, x_title, y_title, color)
    colors = color_map(frame[color].unique())
    for label, group in frame.groupby(color, sort=False):
        fig.add_trace(_distribution_trace(kind, group, value, label, colors[str(label)], hover))
    if kind == "histogram":
        fig.update_layout(barmode="group")
        if np.isin(values[~np.isnan(values)], (0.0, 1.0)).all():
            fig.update_xaxes(tickvals=[0, 1], ticktext=["false / 0", "true / 1"])
    return fig


def _distribution_trace(kind, group, value, label, color, hover) -> Any:
    go = _go()
    y = group[value].to_numpy(dtype=float)
    text = _point_hover(group, hover) if len(group) <= MAX_HOVER_POINTS else None
    common = {"name": esc(label), "marker_color": color, "legendgroup": esc(label)}
    if kind == "histogram":
        return go.Histogram(x=y, **common, hovertemplate="%{x}: %{y} cases<extra></extra>")
    trace = go.Violin if kind == "violin" else go.Box
    extra = (
        {"boxpoints": "all" if len(group) <= 500 else "outliers", "jitter": 0.4, "pointpos": 0}
        if kind == "box"
        else {"points": "outliers", "box_visible": True}
    )
    return trace(
        y=y,
        x=[esc(label)] * len(y),
        text=text,
        hoverinfo="y+text" if text else "y",
        **common,
        **extra,
    )


def _point_hover(group: pd.DataFrame, hover: Sequence[str]) -> list[str]:
    columns = [c for c in hover if c in group]
    rows = zip(*(group[c].tolist() for c in columns), strict=True) if columns else []
    return [
        "<br>".join(f"{esc(c)}: {esc(truncate(v, 80))}" for c, v in zip(columns, row, strict=True))
        for row in rows
    ]


def at_k_figure(
    frame: pd.DataFrame,
    *,
    k: str = "k",
    y: str = "mean",
    color: str = "query_mode",
    error_low: str | None = "ci_low",
    error_high: str | None = "ci_high",
    title: str = "Metric vs k",
    yaxis_title: str = "mean",
) -> Any:
    """Lines of ``y`` against cut-off ``k``, one per ``color`` value, with CI whiskers."""
    fig = _new_figure(title, "k (cut-off)", yaxis_title, color)
    colors = color_map(frame[color].unique())
    for label, group in frame.sort_values(k).groupby(color, sort=False):
        hover = _bar_hover(group.assign(**{"@k": group[k]}), "@k", y, color, error_low, error_high)
        fig.add_trace(
            _go().Scatter(
                name=esc(label),
                x=group[k].to_numpy(),
                y=group[y].to_numpy(dtype=float),
                mode="lines+markers",
                line={"color": colors[str(label)], "width": 2},
                error_y=_error_bars(group, y, error_low, error_high),
                customdata=hover,
                hovertemplate="%{customdata}<extra></extra>",
            )
        )
    ks = sorted(frame[k].unique())
    log = len(ks) > 1 and ks[0] > 0 and ks[-1] / ks[0] >= 20
    fig.update_xaxes(type="log" if log else "linear", tickvals=ks, ticktext=[str(v) for v in ks])
    return fig


def latency_figure(
    frame: pd.DataFrame,
    *,
    value: str = "latency_ms",
    color: str = "query_mode",
    hover: Sequence[str] = ("case_id",),
    title: str = "Query latency per case",
) -> Any:
    """Box plot of per-case latency (ms) per ``color`` value; log axis when latencies spread widely."""
    fig = distribution_figure(
        frame.dropna(subset=[value]),
        value=value,
        color=color,
        hover=hover,
        kind="box",
        title=title,
        value_title="latency (ms)",
    )
    values = frame[value].dropna().to_numpy(dtype=float)
    positive = values[values > 0]
    if len(positive) and positive.max() / max(positive.min(), 1e-9) >= 50:
        fig.update_yaxes(type="log", dtick=1, minor={"showgrid": False})
    return fig


MISS_COLORS = {  # fixed per class: found greens, misses warm, undecidable grey
    "found": "#2e7d32",
    "found, not cited": "#81c784",
    "found, answer wrong": "#c5e1a5",
    "not indexed": "#6d4c41",
    "lost at stage": "#8e24aa",
    "split": "#f9a825",
    "beyond k": "#ef6c00",
    "not retrieved": "#c62828",
    "unknown depth": "#9e9e9e",
}


def misses_figure(
    counts: pd.DataFrame, *, x: str = "variant", title: str = "Why expected evidence was missed"
) -> Any:
    """Stacked bars: evidence items per miss class (``report.misses()``), one bar per ``x``."""
    fig = _new_figure(title, "", "expected evidence items", "class")
    fig.update_layout(barmode="stack")
    if counts.empty:
        return fig
    x_order = _labels(pd.unique(counts[x]))
    for cls, group in counts.groupby("miss_class", sort=False):
        base = str(cls).split(" stage ")[0] + (" stage" if " stage " in str(cls) else "")
        hover = [
            f"{esc(v)}<br>{esc(cls)}: {fmt_int(n)} ({share:.0%})"
            for v, n, share in zip(group[x], group["count"], group["share"], strict=True)
        ]
        fig.add_bar(
            x=_labels(group[x]),
            y=group["count"].tolist(),
            name=esc(cls),
            marker_color=MISS_COLORS.get(base, "#607d8b"),
            hovertext=hover,
            hoverinfo="text",
        )
    fig.update_xaxes(categoryorder="array", categoryarray=x_order)
    return fig


# --------------------------------------------------------------------------- one report


class ReportPlots:
    """Figures of one report (``report.plot``): every method returns a ``go.Figure``."""

    def __init__(self, report: EvaluationReport) -> None:
        self.report = report
        self.frames = report.frames()

    def metrics(self, scores: Sequence[str] | None = None) -> Any:
        """Grouped bars: mean of each score per query mode with 95% CI whiskers."""
        summary = self.frames.summary().dropna(subset=["mean"])
        if scores is not None:
            summary = summary[summary["score"].isin(list(scores))]
        return bar_figure(summary, title=f"{self.report.label}: mean score by query mode (95% CI)")

    def distribution(self, score: str, kind: str = "auto") -> Any:
        """Per-case distribution of ``score`` per query mode (skipped/failed cases left out)."""
        long = self.frames.scores()
        picked = long[(long["score"] == score) & (long["status"] == "scored")]
        if picked.empty:
            raise ValueError(
                f"no scored values for {score!r}; scores: {list(self.frames.score_names)}"
            )
        cases = self.frames.cases()[["row", "query"]]
        picked = picked.merge(cases, on="row", how="left")
        return distribution_figure(
            picked,
            hover=("case_id", "query"),
            kind=kind,
            title=f"{self.report.label}: {score} per case",
            value_title=score,
        )

    def at_k(self, metric: str = "ndcg") -> Any:
        """``metric@k`` against k, one line per query mode (names like ``ndcg@10``)."""
        frame = at_k_frame(self.frames.summary(), metric)
        if frame.empty:
            raise ValueError(
                f"no '{metric}@k' scores in this report: {list(self.frames.score_names)}"
            )
        return at_k_figure(
            frame,
            title=f"{self.report.label}: {metric}@k by query mode",
            yaxis_title=f"mean {metric}@k",
        )

    def latency(self) -> Any:
        """Per-case query latency per mode (box plot)."""
        return latency_figure(
            self.frames.cases(),
            hover=("case_id", "query"),
            title=f"{self.report.label}: query latency per case",
        )

    def misses(self) -> Any:
        """Stacked bars per query mode: why expected evidence was missed (``report.misses()``)."""
        counts = self.frames.misses()
        if counts.empty:
            raise ValueError("no expected evidence in this report: nothing to classify")
        return misses_figure(
            counts, x="query_mode", title=f"{self.report.label}: why expected evidence was missed"
        )

    def _repr_html_(self) -> str:
        return (
            "<p>Figures: <code>.metrics()</code>, <code>.distribution(score)</code>, "
            "<code>.at_k(metric)</code>, <code>.latency()</code>, <code>.misses()</code></p>"
        )


def at_k_frame(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows of a summary-like frame whose ``score`` is ``{metric}@k``, with a ``k`` column.

    Falls back to a prefixed family (``beir_ndcg@k`` for ``"ndcg"``) when there is no exact one.
    """
    parsed = summary["score"].astype(str).map(parse_at_k)
    families = {p[0] for p in parsed if p is not None}
    if metric not in families:
        metric = next((f for f in sorted(families) if f.endswith(f"_{metric}")), metric)
    mask = parsed.map(lambda p: p is not None and p[0] == metric)
    out = summary[mask.astype(bool)].copy()
    out["k"] = [p[1] for p in parsed[mask.astype(bool)]]
    return out.dropna(subset=["mean"]) if "mean" in out else out


__all__ = [
    "ReportPlots",
    "at_k_figure",
    "at_k_frame",
    "bar_figure",
    "distribution_figure",
    "latency_figure",
    "misses_figure",
]
