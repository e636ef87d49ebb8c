"""The comparison table: scores × (recipe × mode), best per row, deltas, significance marks.

Rendered from a ``Comparison``'s frames (analysis computes, this module only formats).
Every label and manifest value is escaped through ``display.html`` builders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from heta_notebook._util.formatting import format_delta, format_p, significance_mark
from heta_notebook.analysis._bounds import bounds_text, comparison_bound_pairs, folded, hint
from heta_notebook.display._html import Markup, badge, details, join, panel, raw, style, tag
from heta_notebook.display._theme import BAD, MUTED, OK, color_map, fmt_ci, fmt_int, fmt_num

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.analysis._compare import Comparison

MAX_DETAIL_ROWS = 300
CSS = (
    """
.hn-cmp table.hn-table td{white-space:nowrap}
.hn-cmp th.hn-group{text-align:center!important;border-bottom:1px solid #D1D5DB}
.hn-cmp th.hn-base{background:#EEF2FF}
.hn-cmp td.hn-base{background:#F5F7FF}
.hn-cmp .hn-delta{display:block;font-size:11px;font-weight:600}
.hn-cmp .hn-up{color:__OK__}.hn-cmp .hn-down{color:__BAD__}.hn-cmp .hn-flat{color:__MUTED__}
.hn-cmp .hn-wtl{display:block;font-size:10px;color:__MUTED__;font-weight:400}
.hn-cmp ul.hn-lines{margin:4px 0 8px 0;padding-left:18px}
.hn-cmp ul.hn-lines li{margin:1px 0}
""".replace("__OK__", OK)
    .replace("__BAD__", BAD)
    .replace("__MUTED__", MUTED)
)


def comparison_html(comparison: Comparison) -> str:
    """The whole comparison view as an HTML fragment (styles included)."""
    if not comparison.score_names:
        return str(panel(style(), tag("p", "No numeric scores to compare.")))
    sig = comparison.significance(by=None)  # the table shows overall tests; slices below
    body = [
        style(),
        raw(f"<style>{CSS}</style>"),
        _header(comparison, sig),
        _headlines(comparison),
        _misses(comparison),
        _table(comparison, sig),
        _notes(comparison),
        _manifest_section(comparison),
        _significance_section(sig),
    ]
    if comparison.by is not None:
        body.append(_slice_section(comparison))
    return str(panel(*body, class_="hn-cmp"))


def _header(comparison: Comparison, sig: pd.DataFrame) -> Markup:
    benchmarks = sorted({r.benchmark.key for r in comparison.reports.values()})
    base = comparison.baseline
    crossed = any(a.mode != b.mode for a, b in comparison.pairs())  # analysis._pairing
    base_text = (
        base.name
        if hasattr(base, "name")
        else f"{base} ({'by query id' if crossed else 'same mode'})"
    )
    sub = (
        f"baseline {base_text} · paired {_test_name(comparison)} and bootstrap 95% CI "
        f"({_resampling(comparison, sig)}), {_holm_family(comparison, sig)} "
        "· * p<0.05, ** p<0.01 (deltas coloured only when significant) · small "
        "numbers: wins/ties/losses per case vs baseline · hover a cell for CI and p-values"
    )
    title = (
        f"Comparison: {len(comparison.labels)} report(s) × {len(comparison.modes)} mode(s), "
        f"{fmt_int(len(comparison.aligned.case_ids))} cases"
    )
    return tag(
        "div",
        tag("h3", title),
        badge(", ".join(benchmarks), "info"),
        tag("div", sub, class_="hn-sub"),
        class_="hn-head",
    )


def _test_name(comparison: Comparison) -> str:
    from heta_notebook.analysis._stats import TEST_NAMES

    return TEST_NAMES[comparison.test].removeprefix("paired ")


def _holm_family(comparison: Comparison, sig: pd.DataFrame) -> str:
    """Which p-values one correction covers: each score's comparisons, or all of them."""
    from heta_notebook.analysis._options import correction_text

    name = correction_text(getattr(comparison, "correction", "holm"))
    if name == "no correction":
        return "not corrected for multiple comparisons"
    if comparison.family == "all":
        return f"{name}-corrected across {len(sig)} comparisons (all scores together)"
    per_score = int(sig.groupby("score").size().max()) if len(sig) else 0
    return f"{name}-corrected across the {per_score} comparisons of each score"


def _resampling(comparison: Comparison, sig: pd.DataFrame) -> str:
    """How the bootstrap CIs (and permutation nulls) were obtained: resampled, asymptotic, both."""
    methods = set(sig["ci_method"]) if "ci_method" in sig else set()
    resampled = f"{fmt_int(comparison.n_resamples)} resamples"
    if "asymptotic" not in methods:
        return resampled
    if methods == {"asymptotic"}:
        return "asymptotic forms"
    return f"{resampled}, asymptotic forms for the large comparisons"


def _headlines(comparison: Comparison) -> Markup:
    lines = comparison.headline(show_mode=False)
    if not lines:
        return raw("")
    items = [tag("li", line) for line in lines]  # named by labels (analysis._pairing)
    return tag("ul", *items[:12], class_="hn-lines")


def _misses(comparison: Comparison) -> Markup:
    """One line per variant ("66 misses: 40 beyond k · ...") and what each pair's b loses."""
    from heta_notebook.analysis._misses import delta_sentence, miss_line, variant_counts

    counts = variant_counts(comparison)
    if counts.empty:
        return raw("")
    items = [
        tag("li", tag("b", name), ": ", miss_line(group))
        for name, group in counts.groupby("variant", sort=False)
    ]
    deltas = comparison.misses(by=None) if comparison.pairs() else None
    if deltas is not None:
        for (a, b), pair in deltas.groupby(["a", "b"], sort=False):
            items.append(tag("li", tag("b", b), " vs ", a, ": ", delta_sentence(pair)))
    title = tag("div", "Why evidence was missed", class_="hn-note")
    return join([title, tag("ul", *items[:24], class_="hn-lines")])


def _table(comparison: Comparison, sig: pd.DataFrame) -> Markup:
    means = comparison.table("mean")
    if comparison.pivoted:
        means = means.T
    ns = comparison.table("n")
    ns = ns.T if comparison.pivoted else ns
    lookup = {(r.score, r.variant): r for r in sig.itertuples(index=False)}
    variants = comparison.variants
    pairs, uppers, known = _bounds(comparison)  # an upper bound is shown in its lower's cells
    rows: list[tuple[str | Markup, list[Markup]]] = []
    for score in folded(comparison.score_names, pairs):
        values = means.loc[score].to_numpy(dtype=float)
        best = np.nanmax(values) if np.isfinite(values).any() else np.nan
        cells = [
            _cell(
                comparison,
                v,
                values[i],
                best,
                ns.loc[score].iloc[i],
                lookup.get((score, v.name)),
                uppers.get((score, v.name)),
            )
            for i, v in enumerate(variants)
        ]
        words = hint(score, known, score in pairs)
        label = join([tag("b", score), tag("span", words, class_="hn-wtl")]) if words else score
        rows.append((label, cells))
    abstained = _abstention_cells(comparison)
    if abstained:  # a deliberate no-answer is not an error: counted on its own row, as on cards
        rows.append((tag("i", "abstained"), abstained))
    if comparison.pivoted:
        return _pivoted_table(comparison, rows)
    head = _column_headers(comparison)
    body = [tag("tr", tag("td", _row_label(label)), *cells) for label, cells in rows]
    return tag("table", tag("thead", *head), tag("tbody", *body), class_="hn-table")


def _bounds(
    comparison: Comparison,
) -> tuple[dict[str, str], dict[tuple[str, str], float], dict[str, str]]:
    """The ``{lower: upper}`` pairs shown as one interval, each pair's upper mean per
    ``(lower, variant)``, and every compared score's convention (``analysis._bounds``)."""
    from heta_notebook.analysis._bounds import conventions

    pairs = comparison_bound_pairs(comparison)
    frame = comparison.bounds() if pairs else None
    rows = [] if frame is None else frame.itertuples(index=False)
    uppers = {(r.score, r.variant): float(r.upper) for r in rows}
    return pairs, uppers, conventions(comparison.reports.values(), comparison.score_names)


def _row_label(label: str | Markup) -> Markup:
    """A score's name in bold; a row with its own markup (the italic "abstained") as is."""
    return label if isinstance(label, Markup) else tag("b", label)


def _column_headers(comparison: Comparison) -> list[Markup]:
    colors = color_map(comparison.labels)
    groups: list[tuple[str, int]] = []
    for v in comparison.variants:
        if groups and groups[-1][0] == v.report:
            groups[-1] = (v.report, groups[-1][1] + 1)
        else:
            groups.append((v.report, 1))
    top = [tag("th", "")] + [
        tag("th", _swatch(colors[label]), label, colspan=str(span), class_="hn-group")
        for label, span in groups
    ]
    bottom = [tag("th", "score")] + [
        tag("th", v.mode, class_="hn-base" if comparison.baseline_of(v) is None else None)
        for v in comparison.variants
    ]
    return [tag("tr", *top), tag("tr", *bottom)]


def _pivoted_table(comparison: Comparison, rows: list[tuple[str | Markup, list[Markup]]]) -> Markup:
    head = tag("tr", tag("th", "variant"), *(tag("th", label) for label, _ in rows))
    body, colors = [], color_map(comparison.labels)
    for i, v in enumerate(comparison.variants):
        body.append(
            tag(
                "tr",
                tag("td", _swatch(colors[v.report]), tag("b", v.report), " · ", v.mode),
                *(cells[i] for _, cells in rows),
            )
        )
    return tag("table", tag("thead", head), tag("tbody", *body), class_="hn-table")


def _abstention_cells(comparison: Comparison) -> list[Markup]:
    """Per variant "7 (18%)" and, where abstentions are expected, "6/9 right · 1 wrong" in
    small print (``Comparison.abstentions()``); none when no variant abstained."""
    from heta_notebook.analysis._abstentions import abstention_line, any_abstained

    if not any_abstained(comparison):  # the usual case, answered without reading columns
        return []
    table = comparison.abstentions()
    if not table["abstained"].any():  # only variants left out by select() abstained
        return []
    cells = []
    for row in table.itertuples(index=False):
        share = "–" if not np.isfinite(row.share) else f"{row.share:.0%}"
        right = f"{row.correct}/{row.n_expected} right" if row.n_expected else ""
        if right and row.on_answerable:  # abstaining on an answerable case is a wrong answer
            right += f" · {row.on_answerable} wrong"
        note = tag("span", right, class_="hn-wtl") if right else ""
        cells.append(
            tag("td", f"{fmt_int(row.abstained)} ({share})", note, title=abstention_line(row))
        )
    return cells


def _cell(
    comparison: Comparison,
    v: Any,
    value: float,
    best: float,
    n: Any,
    row: Any,
    upper: float | None = None,
) -> Markup:
    is_best = np.isfinite(value) and np.isfinite(best) and np.isclose(value, best)
    shown: Any = fmt_num(value)
    bounds = ""
    if upper is not None and np.isfinite(value) and np.isfinite(upper):
        shown = join([shown, " ", tag("span", bounds_text(value, upper), class_="hn-bounds")])
        bounds = (
            f"\nbounds {bounds_text(value, upper, 4)}: unjudged documents as non-relevant "
            "(trec_eval, the value shown) … as relevant"
        )
    classes = " ".join(
        filter(
            None,
            ["hn-best" if is_best else "", "hn-base" if comparison.baseline_of(v) is None else ""],
        )
    )
    if row is None:
        note = tag("span", "baseline", class_="hn-wtl") if comparison.baseline_of(v) is None else ""
        return tag("td", shown, note, class_=classes or None, title=f"n={fmt_int(n)}{bounds}")
    mark = significance_mark(_adjusted(row))
    direction = "hn-up" if row.delta > 0 else "hn-down"
    if not mark or round(row.delta, 3) == 0:  # colour only what the test supports
        direction = "hn-flat"
    tooltip = (
        f"mean {fmt_num(value)} (n={fmt_int(n)}) vs baseline\n"
        f"paired delta {format_delta(row.delta)}, 95% CI {fmt_ci(row.ci_low, row.ci_high)}\n"
        f"p={_p(row.p_value)} raw, {format_p(_adjusted(row))} {_correction(row)}, "
        f"{row.n_pairs} pairs; d_z {_dz(row)}\n"
        f"win/tie/loss {row.wins}/{row.ties}/{row.losses}{bounds}"
    )
    return tag(
        "td",
        shown,
        tag("span", format_delta(row.delta), mark, class_=f"hn-delta {direction}"),
        tag("span", f"{row.wins}/{row.ties}/{row.losses}", class_="hn-wtl"),
        class_=classes or None,
        title=tooltip,
    )


def _p(p: float) -> str:
    return "–" if p is None or np.isnan(p) else f"{p:.4f}"


def _swatch(color: str) -> Markup:
    return tag("span", "", class_="hn-swatch", style=f"background:{color}")


def _notes(comparison: Comparison) -> Markup:
    notes = comparison.notes()
    if not notes:
        return raw("")
    return tag("div", *(tag("div", badge("note", "warn"), " ", n) for n in notes), class_="hn-note")


def _manifest_section(comparison: Comparison) -> Markup:
    if len(comparison.labels) < 2:
        return raw("")
    changed = [
        tag("li", tag("b", f"{a.name} → {b.name}"), ": ", comparison.change_description(a, b))
        for a, b in comparison.pairs()[:24]
    ]
    per_pair = details("What changed, pair by pair", tag("ul", *changed, class_="hn-lines"))
    diff = comparison.manifest_diff()
    if diff.empty:
        return join([per_pair, tag("div", "Recipe manifests are identical.", class_="hn-note")])
    from heta_notebook.analysis._pairing import applies

    read = [applies(str(key), comparison.modes) for key in diff.index]  # settings the modes read
    diff = diff.iloc[sorted(range(len(diff)), key=lambda i: not read[i])]
    header = ["recipe key", *diff.columns]
    rows = [[tag("code", key), *(_value(v) for v in values)] for key, values in diff.iterrows()]
    table = details(
        f"What differs between the recipes ({len(diff)} keys)",
        _simple_table(header, rows),
        open_=len(diff) <= 8,
    )
    return join([per_pair, table]) if changed else table


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, default=str)


def _significance_section(sig: pd.DataFrame) -> Markup:
    header = ["score", "variant", "baseline", "delta", "95% CI", "d_z [CI]", "p", "p (adj.)"]
    header += ["W/T/L", "pairs"]
    rows = [
        [
            r.score,
            r.variant,
            r.baseline,
            join([format_delta(r.delta), significance_mark(_adjusted(r))]),
            fmt_ci(r.ci_low, r.ci_high),
            _dz(r),
            _p(r.p_value),
            _p(_adjusted(r)),
            f"{r.wins}/{r.ties}/{r.losses}",
            fmt_int(r.n_pairs),
        ]
        for r in sig.head(MAX_DETAIL_ROWS).itertuples(index=False)
    ]
    more = len(sig) - MAX_DETAIL_ROWS
    tail = tag("div", f"… {more} more rows in comparison.significance()", class_="hn-note")
    return details(
        "Paired tests: delta, CI, p-values, win/tie/loss",
        _simple_table(header, rows),
        tail if more > 0 else raw(""),
    )


def _slice_section(comparison: Comparison) -> Markup:
    """Per-slice paired tests of the headline score (slices inside its Holm family)."""
    from heta_notebook.analysis._compare_frames import describe_test

    score = comparison.primary_score
    full = comparison.significance()
    sig = full[full["score"] == score]
    header = ["slice", "variant", "baseline", "mean", "delta", "95% CI", "p (adj.)", "pairs"]
    rows = [
        [
            r.slice,
            r.variant,
            r.baseline,
            fmt_num(r.variant_mean),
            join([format_delta(r.delta), significance_mark(_adjusted(r))]),
            fmt_ci(r.ci_low, r.ci_high),
            _p(_adjusted(r)),
            fmt_int(r.n_pairs),
        ]
        for r in sig.head(MAX_DETAIL_ROWS).itertuples(index=False)
    ]
    return details(
        f"By slice: {comparison.primary_score} per slice ("
        f"{describe_test(full, comparison.test, comparison.family, score)})",
        _simple_table(header, rows),
        open_=True,
    )


def _simple_table(header: list[Any], rows: list[list[Any]]) -> Markup:
    head = tag("thead", tag("tr", *(tag("th", h) for h in header)))
    body = tag("tbody", *(tag("tr", *(tag("td", c) for c in row)) for row in rows))
    return tag("table", head, body, class_="hn-table")


__all__ = ["comparison_html"]


def _adjusted(row: Any) -> float:
    """The p after the comparison's correction (``p_holm`` in frames from before it)."""
    return getattr(row, "p_adjusted", row.p_holm)


def _correction(row: Any) -> str:
    from heta_notebook.analysis._options import correction_text

    return correction_text(getattr(row, "correction", "holm"))


def _dz(row: Any) -> str:
    """``"0.42 [0.21, 0.63]"``: d_z and its interval (``–`` without spread)."""
    dz = getattr(row, "d_z", float("nan"))
    if dz != dz:
        return "–"
    return f"{dz:.2f} [{row.d_z_low:.2f}, {row.d_z_high:.2f}]"
