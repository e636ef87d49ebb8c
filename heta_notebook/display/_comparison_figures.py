"""Plotly figures of a comparison (``comparison.plot``): bars, per-case scatter, deltas, @k curves.

Each method returns a ``go.Figure`` the caller can still modify. Colours come from
``display.theme`` (one colour per report label, stable across figures); query modes are told
apart by bar pattern / line dash. Hover text is escaped: labels and queries are data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from heta_notebook._util.formatting import format_delta, format_p
from heta_notebook.display._figures import at_k_figure, at_k_frame, bar_figure, misses_figure
from heta_notebook.display._figures import esc as _h  # the one plotly escaper
from heta_notebook.display._theme import BAD, MUTED, OK, color_map, fit_title, plotly_template

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

    from heta_notebook.analysis._compare import Comparison

PATTERNS = ("", "/", ".", "x", "\\", "+", "-", "|")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
MAX_BAR_SCORES = 8


class ComparisonPlots:
    """Figures of one comparison; every method returns a ``plotly.graph_objects.Figure``."""

    def __init__(self, comparison: Comparison) -> None:
        self.comparison = comparison
        self.colors = color_map(comparison.labels)
        self.mode_style = {m: i for i, m in enumerate(comparison.modes)}

    def _pair(self, a: Any, b: Any) -> tuple[Any, Any]:
        """a vs b; with one of them, the other is b's baseline or a's first paired variant."""
        pairs = self.comparison._delta_pairs(a, b)
        if not pairs:
            raise ValueError("pick two variants: plot.scatter(score, a, b)")
        return pairs[0]

    def bars(self, scores: list[str] | None = None) -> go.Figure:
        """Grouped bars: mean of each score per report × mode, with 95% CI error bars."""
        c = self.comparison
        scores = scores or _default_scores(c)
        summary = c.summary()
        frame = summary[summary["score"].isin(scores)].dropna(subset=["mean"])
        fig = bar_figure(
            frame,
            color="variant",
            title="Scores by recipe and query mode (95% CI)",
            yaxis_title="mean over scored cases",
        )
        fig.update_xaxes(categoryarray=[_h(s) for s in scores])
        return self._style_variants(fig, "bar")

    def misses(self) -> go.Figure:
        """Stacked bars per report × mode: why expected evidence was missed (miss classes)."""
        from heta_notebook.analysis._misses import variant_counts

        return misses_figure(variant_counts(self.comparison), x="variant")

    def _style_variants(self, fig: go.Figure, kind: str) -> go.Figure:
        """Colour each variant's trace by its report and mark its mode (pattern / dash)."""
        by_name = {_h(v.name): v for v in self.comparison.variants}
        for trace in fig.data:
            v = by_name.get(trace.name)
            if v is None:
                continue
            style = self.mode_style[v.mode]
            if kind == "bar":
                trace.marker.color = self.colors[v.report]
                trace.marker.pattern.shape = PATTERNS[style % len(PATTERNS)]
            else:
                trace.line.color = self.colors[v.report]
                trace.line.dash = DASHES[style % len(DASHES)]
                trace.marker.color = self.colors[v.report]
        order = {name: i for i, name in enumerate(by_name)}
        fig.data = tuple(sorted(fig.data, key=lambda t: order.get(t.name, len(order))))
        fig.update_layout(legend_title_text="report · mode")
        return fig

    def scatter(self, score: str | None = None, a: Any = None, b: Any = None) -> go.Figure:
        """Per-case score under a (x) vs b (y) with the diagonal: points above it improved."""
        import plotly.graph_objects as go

        c = self.comparison
        score = score or c.primary_score
        va, vb = self._pair(a, b)
        d = c.deltas(score, va, vb)
        queries = [_h(c.aligned.queries.get(cid, ""))[:120] for cid in d["case_id"]]
        color = np.where(d["delta"] > 0, OK, np.where(d["delta"] < 0, BAD, MUTED))
        fig = go.Figure()
        lo, hi = _range(d["baseline_value"], d["value"])
        fig.add_scatter(
            x=[lo, hi],
            y=[lo, hi],
            mode="lines",
            name="no change",
            line={"color": MUTED, "dash": "dash", "width": 1},
            hoverinfo="skip",
        )
        fig.add_scatter(
            x=d["baseline_value"],
            y=d["value"],
            mode="markers",
            name="cases",
            marker={"color": color, "size": 7, "opacity": 0.65, "line": {"width": 0}},
            customdata=np.column_stack([[_h(x) for x in d["case_id"]], queries, d["delta"]]),
            hovertemplate="%{customdata[0]}: %{customdata[1]}<br>a=%{x:.3f} b=%{y:.3f} "
            "(Δ %{customdata[2]:+.3f})<extra></extra>",
        )
        wins, losses = int((d["delta"] > 0).sum()), int((d["delta"] < 0).sum())
        fig.update_layout(
            template=plotly_template(),
            showlegend=False,
            **fit_title(
                _h(
                    f"{score}: {vb.name} vs {va.name} — {wins} better, "
                    f"{losses} worse, {len(d) - wins - losses} tied"
                )
            ),
            xaxis_title=_h(f"{va.name} (a)"),
            yaxis_title=_h(f"{vb.name} (b)"),
        )
        fig.update_xaxes(range=[lo, hi], constrain="domain")
        fig.update_yaxes(range=[lo, hi], scaleanchor="x", scaleratio=1, constrain="domain")
        return fig

    def deltas(self, score: str | None = None, a: Any = None, b: Any = None) -> go.Figure:
        """Histogram of per-case differences b − a, with the mean, its CI and the p-value."""
        import plotly.graph_objects as go

        c = self.comparison
        score = score or c.primary_score
        va, vb = self._pair(a, b)
        d = c.deltas(score, va, vb)
        row = c.test_pairs([(va, vb)], [score]).iloc[0]
        fig = go.Figure()
        fig.add_histogram(
            x=d["delta"],
            nbinsx=41,
            marker={"color": self.colors[vb.report]},
            name="cases",
            hovertemplate="Δ %{x}<br>%{y} cases<extra></extra>",
        )
        fig.add_vline(x=0, line={"color": MUTED, "width": 1})
        fig.add_vline(x=row["delta"], line={"color": "#111827", "dash": "dash", "width": 2})
        fig.add_vrect(
            x0=row["ci_low"], x1=row["ci_high"], fillcolor="#111827", opacity=0.08, line_width=0
        )
        title = (
            f"{score}: {vb.name} − {va.name}, mean {format_delta(row['delta'])} "
            f"(95% CI {row['ci_low']:+.3f}…{row['ci_high']:+.3f}, {format_p(row['p_value'])} unadjusted); "
            f"W/T/L {row['wins']}/{row['ties']}/{row['losses']}"
        )
        fig.update_layout(
            template=plotly_template(),
            showlegend=False,
            **fit_title(_h(title)),
            xaxis_title=_h(f"per-case difference in {score} (b − a)"),
            yaxis_title="cases",
            bargap=0.05,
        )
        return fig

    def at_k(self, metric: str = "ndcg") -> go.Figure:
        """Metric vs k (``{metric}@{k}`` scores) for every report × mode, with 95% CI bars."""
        c = self.comparison
        summary = c.summary()
        frame = at_k_frame(summary, metric)
        if frame.empty:  # heta-framework names its metrics beir_ndcg@k
            frame = at_k_frame(summary, f"beir_{metric}")
        if frame.empty:
            raise ValueError(f"no '{metric}@k' scores in this comparison (scores: {c.score_names})")
        fig = at_k_figure(
            frame,
            color="variant",
            title=f"{metric}@k by recipe and mode",
            yaxis_title=f"mean {metric}@k",
        )
        return self._style_variants(fig, "line")


def _default_scores(c: Comparison) -> list[str]:
    """The scores at the primary score's k plus scores without a cut-off, in report order."""
    names = c.score_names
    cut = c.primary_score.rpartition("@")[2] if "@" in c.primary_score else None
    picked = [n for n in names if "@" not in n or (cut and n.rpartition("@")[2] == cut)]
    return (picked or names)[:MAX_BAR_SCORES]


def _range(*series: Any) -> tuple[float, float]:
    values = np.concatenate([np.asarray(s, dtype=float) for s in series])
    if values.size == 0:
        return 0.0, 1.0
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    pad = (hi - lo) * 0.03 or 0.05
    return lo - pad, hi + pad


__all__ = ["ComparisonPlots"]
