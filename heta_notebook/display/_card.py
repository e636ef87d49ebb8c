"""The report card: what a notebook shows for ``report`` (``EvaluationReport._repr_html_``).

Benchmark, knowledge base and recipe, query modes, a metrics table (scores as rows, modes as
columns, best per row highlighted, n and 95% CI in small print and on hover), query errors,
abstentions per mode (when any), latency p50/p95 and run time. Every value that came from data is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pandas as pd

from heta_notebook.display._html import Cell, Markup, badge, join, panel, style, table, tag, td
from heta_notebook.display._theme import (
    color_map,
    fmt_ci,
    fmt_duration,
    fmt_int,
    fmt_ms,
    fmt_num,
    fmt_pct,
)
from heta_notebook.schema._headline import headline_score
from heta_notebook.schema._records import EvaluationReport

MAX_MANIFEST_ITEMS = 10


def report_card_html(
    report: EvaluationReport,
    *,
    standalone_style: bool = True,
    by: Any = None,
    scores: Sequence[str] | None = None,
    corrected: Any = None,
    labels: Any = None,
) -> str:
    """The card as an HTML fragment (with the shared ``<style>`` unless told not to).

    ``by`` (a case label or metadata key) adds a per-slice table of ``scores`` (default: the
    headline score, nDCG@10 when present). ``corrected`` (None: when the report's label set
    has people's labels; True: must; False: never; or score names) adds corrected means
    (``analysis._corrected``); ``labels`` is the label set when this session does not hold it.
    """
    frames = report.frames()
    parts = [
        _header(report),
        _facts(report, frames),
        _metrics(report, frames),
        _ties(frames),
        _depth(report),
        _judged(report),
        _corrected(report, frames, corrected, labels),
    ]
    misses = _misses(frames)
    if misses is not None:
        parts.append(misses)
    if by is not None:
        parts.append(_slices(frames, by, scores))
    return str(panel(style() if standalone_style else "", *parts, class_="hn-card"))


class ReportCard:
    """The card as an object a notebook displays (``report.card(by="topic")``)."""

    def __init__(self, report: EvaluationReport, **options: Any) -> None:
        self.report, self.options = report, options

    def _repr_html_(self) -> str:
        return report_card_html(self.report, **self.options)

    def __str__(self) -> str:
        return self._repr_html_()

    def __repr__(self) -> str:
        return f"<ReportCard {self.report.report_id!r} {self.options}>"


# --------------------------------------------------------------------------- header and facts


def _header(report: EvaluationReport) -> Markup:
    badges = [badge("PARTIAL", "warn", title="the run stopped before every case finished")]
    title = tag("h3", f"Evaluation report · {report.label}")
    ident = tag("span", f"id {report.report_id}", class_="hn-sub")
    return tag("div", title, *(badges if report.is_partial else []), ident, class_="hn-head")


def _facts(report: EvaluationReport, frames: Any) -> Markup:
    b = report.benchmark
    counts = frames.case_counts()
    n_cases, n_errors = counts["n_cases"], counts["n_errors"]
    colors = color_map(frames.modes)
    modes = join(
        [
            join([tag("span", class_="hn-swatch", style=f"background:{colors[m]}"), m, " "])
            for m in frames.modes
        ]
    )
    facts = [
        ("benchmark", f"{b.name} · v{b.version} · {b.split}"),
        ("knowledge base", report.knowledge_base_name),
        ("recipe", _manifest_summary(report.recipe_manifest)),
        ("modes", modes or "–"),
        ("cases", f"{fmt_int(n_cases)} ({fmt_int(counts['n_case_results'])} case × mode)"),
        ("query errors", badge(fmt_int(n_errors), "bad" if n_errors else "ok")),
        ("run time", _run_time(report)),
        ("finished", report.finished_at[:19].replace("T", " ")),
    ]
    kb = _manifest_summary(report.knowledge_base_manifest, skip=("name",))
    if kb:
        facts.insert(2, ("kb manifest", kb))
    coverage = _coverage(report)
    if coverage is not None:
        facts.insert(4, ("id coverage", coverage))
    tokens = _tokens(report)
    if tokens is not None:
        facts.insert(-2, ("chat tokens", tokens))
    return tag("div", *(tag("span", tag("b", k), ": ", v) for k, v in facts), class_="hn-facts")


def _coverage(report: EvaluationReport) -> Markup | None:
    """One line when only some results mapped to benchmark documents (the pre-run check)."""
    found = report.metadata.get("id_coverage")
    if not isinstance(found, dict) or not isinstance(found.get("share"), (int, float)):
        return None
    empty = found.get("empty_queries")
    if found["share"] >= 1.0 and empty:  # the dry run's answers that found nothing
        checked = fmt_int(found.get("checked_queries", 0))
        return badge(f"{fmt_int(empty)} of the first {checked} queries found nothing", "warn")
    if found["share"] >= 1.0:
        return None
    text = (
        f"{found['share']:.0%} of results map to benchmark documents "
        f"({fmt_int(found.get('matched', 0))} of {fmt_int(found.get('results', 0))} in the "
        f"first {fmt_int(found.get('checked_queries', 0))} queries; the rest count as misses)"
    )
    return badge(text, "warn")


def _tokens(report: EvaluationReport) -> str | None:
    """Tokens the run's chat answerer and judges spent (read only when the run had them)."""
    answer = report.recipe_manifest.get("answer")
    chat_answer = isinstance(answer, dict) and answer.get("kind") in ("chat", "custom")
    described = report.metadata.get("evaluators") or []
    judges = any(isinstance(e, dict) and "model" in (e.get("manifest") or {}) for e in described)
    if not (chat_answer or judges):
        return None
    from heta_notebook.analysis._usage import usage_totals

    totals = usage_totals(report)
    if not totals["requests"]:
        return None
    cached = f", {fmt_int(totals['cached'])} cached" if totals["cached"] else ""
    return (
        f"{fmt_int(totals['total_tokens'])} ({fmt_int(totals['prompt_tokens'])} prompt + "
        f"{fmt_int(totals['completion_tokens'])} completion) in "
        f"{fmt_int(totals['requests'])} requests{cached}"
    )


def _manifest_summary(manifest: Any, skip: tuple[str, ...] = ()) -> str:
    """``name (key=value, nested.key=value, ...)`` of a recipe/KB manifest's scalar fields."""
    if isinstance(manifest, list):
        manifest = manifest[0] if manifest and isinstance(manifest[0], dict) else {}
    if not isinstance(manifest, dict) or not manifest:
        return ""
    name = manifest.get("name") if "name" not in skip else None
    items = [f"{k}={v}" for k, v in _flat(manifest) if k != "name" and k not in skip]
    more = len(items) - MAX_MANIFEST_ITEMS
    text = ", ".join(items[:MAX_MANIFEST_ITEMS]) + (f", … (+{more})" if more > 0 else "")
    return f"{name} ({text})" if name and text else str(name or text)


def _flat(mapping: dict, prefix: str = "") -> list[tuple[str, Any]]:
    """Scalar leaves of a manifest, one level of nesting spelled ``outer.inner``."""
    out: list[tuple[str, Any]] = []
    for key, value in mapping.items():
        if key in {"hash", "kind", "query_modes", "schema_version"}:
            continue  # identity/bookkeeping, shown elsewhere or noise
        if isinstance(value, (str, int, float, bool)):
            out.append((f"{prefix}{key}", value))
        elif isinstance(value, dict) and not prefix:
            out.extend(_flat(value, f"{key}."))
    return out


def _run_time(report: EvaluationReport) -> str:
    try:
        start = datetime.fromisoformat(report.started_at.replace("Z", "+00:00"))
        end = datetime.fromisoformat(report.finished_at.replace("Z", "+00:00"))
        return fmt_duration((end - start).total_seconds())
    except (TypeError, ValueError):
        return fmt_duration(report.metadata.get("run_seconds"))


def _depth(report: EvaluationReport) -> Markup | str:
    """A line when scores cut deeper than the run retrieved (``schema._status``)."""
    from heta_notebook.schema._status import depth_line

    line = depth_line(report.metadata)
    return tag("div", tag("b", "Depth"), ": ", line, ".", class_="hn-note hn-depth") if line else ""


def _judged(report: EvaluationReport) -> Markup | str:
    """A line when a top k behind the scores is not fully judged (``analysis._judged``)."""
    from heta_notebook.analysis._judged import judged_line

    line = judged_line(report)
    return (
        tag("div", tag("b", "Judged"), ": ", line, ".", class_="hn-note hn-judged") if line else ""
    )


def _corrected(report: EvaluationReport, frames: Any, option: Any, labels: Any) -> Markup | str:
    """Corrected means (judge-filled labels rectified by people's, ``analysis._corrected``)."""
    from heta_notebook.analysis._corrected import corrected_for_card

    rows, why = corrected_for_card(report, option, labels)
    if not rows:
        return tag("div", tag("b", "Corrected means"), ": ", why, class_="hn-note") if why else ""
    modes = [m for m in frames.modes if any(r.mode == m for r in rows)]
    cell = {(r.score, r.mode): r for r in rows}
    body = []
    for score in dict.fromkeys(r.score for r in rows):
        line: list[Any] = [tag("i", score)]
        for mode in modes:
            r = cell.get((score, mode))
            if r is None:
                line.append("–")
                continue
            m = r.mean
            tip = (
                f"judge-filled {m.judge_only:.4f}, as scored {r.shown:.4f}; corrected "
                f"{m.estimate:.4f} [{m.low:.4f}, {m.high:.4f}] ({m.confidence:.0%})"
            )
            line.append(
                td(
                    join(
                        [
                            tag("b", fmt_num(m.estimate)),
                            " ",
                            tag("small", f"[{fmt_num(m.low)}, {fmt_num(m.high)}]"),
                            Markup("<br>"),
                            tag("small", f"judge-filled {fmt_num(m.judge_only)}"),
                        ]
                    ),
                    title=tip,
                )
            )
        body.append(line)
    first = rows[0]
    note = (
        f"Prediction-powered inference: the judge-filled mean over {fmt_int(first.queries)} "
        f"queries, rectified by people's labels on the {fmt_int(first.labelled)} of "
        f"{fmt_int(first.touched)} judge-touched queries they labelled in full "
        f"({fmt_int(first.human_labels)} human labels); 95% CI. Valid when those queries "
        "are a uniform random draw (queries_to_label). The metrics table above uses the "
        "labels in force (people's where they exist); docs/labels.md."
    )
    return tag(
        "div",
        tag("b", "Corrected means"),
        table(["score", *modes], body),
        tag("div", note, class_="hn-sub"),
        class_="hn-corrected",
    )


# --------------------------------------------------------------------------- misses


# A saved report's header holds its miss class counts; other reports are classified for the
# card up to this many case results (~1 s, bench/misses.py), past it the card points to them.
MAX_MISS_CASES = 20_000


def _misses(frames: Any) -> Markup | None:
    """One line per mode: why evidence was missed (``report.misses()``), when any was expected."""
    from heta_notebook.analysis._misses import miss_line

    counts = frames.saved_miss_counts()
    if counts is None:
        if frames.case_counts()["n_case_results"] > MAX_MISS_CASES:
            return tag("div", "Why evidence was missed: report.misses()", class_="hn-note")
        counts = frames.misses()
    if counts.empty:
        return None
    groups = dict(tuple(counts.groupby("query_mode", sort=False)))
    lines = [  # in the report's mode order, as the metrics table's columns
        tag("div", tag("b", mode), ": ", miss_line(groups[mode]))
        for mode in frames.modes
        if mode in groups
    ]
    title = "Why expected evidence was missed: report.misses() (README: Why evidence was missed)"
    return tag("div", *lines, class_="hn-note", title=title)


# --------------------------------------------------------------------------- metrics table


def _metrics(report: EvaluationReport, frames: Any) -> Markup:
    summary = frames.summary()
    if summary.empty:
        return _summary_only(report)
    modes = frames.modes
    header = ["score", *modes]
    groups = dict(_by_score(summary, frames))
    known, pairs = _conventions(report, frames)  # an upper bound is shown in its lower's cells
    rows = [
        _metric_row(
            _score_label(name, known, name in pairs), group, modes, groups.get(pairs.get(name, ""))
        )
        for name, group in groups.items()
        if name not in set(pairs.values())
    ]
    rows += _latency_rows(frames, modes)
    abstained = frames.abstentions()
    if abstained:  # a deliberate no-answer is not an error: counted on its own row
        why = "responses without an answer on purpose (Abstain, or the answer step declined)"
        label = tag("i", "abstained", title=why)
        rows.append([label, *(fmt_int(abstained.get(m, 0)) for m in modes)])
    note = tag(
        "div",
        "Mean over scored cases; small print: n scored and 95% CI. Hover a cell for details. "
        "Skipped and failed scores are excluded from means and counted."
        + (_MISSING if any(str(n).startswith("beir_") for n in frames.score_names) else "")
        + (_BOUNDS if pairs else ""),
        class_="hn-note",
    )
    return join([table(header, rows), note])


_MISSING = (  # the missing= convention of the beir_* means, as the paper captions state it
    ' Queries without a relevant judged document are left out (missing="drop"; '
    "trec_eval -c would count them as 0)."
)


_BOUNDS = (  # the one interval of analysis._bounds, as the captions word it
    " Bounds [lower, upper]: the score with unjudged documents as non-relevant (trec_eval's, "
    "the value shown) … as relevant (its _upper score)."
)


def _conventions(report: EvaluationReport, frames: Any) -> tuple[dict[str, str], dict[str, str]]:
    """Each score's convention for unjudged documents and the ``{lower: upper}`` pairs shown
    as one interval (``analysis._bounds``)."""
    from heta_notebook.analysis._bounds import bound_pairs, conventions

    names = frames.score_names
    known = conventions([report], names)
    return known, bound_pairs(names, known)


def _score_label(name: str, known: dict[str, str], bounded: bool) -> Any:
    """A score's name with, under it, how it counts unjudged documents (``analysis._bounds``)."""
    from heta_notebook.analysis._bounds import hint

    words = hint(name, known, bounded)
    return join([name, tag("span", words, class_="hn-ci")]) if words else name


def _ties(frames: Any) -> Markup | str:
    """A line per mode where tied scores move the headline by more than 0.005 (issue 29)."""
    from heta_notebook.analysis._ties import notable_ties, tie_line

    rows = notable_ties(frames.ties())
    if rows.empty:
        return ""
    lines = [tie_line(r) for r in rows.itertuples(index=False)]
    return tag("div", tag("b", "Ties"), ": ", "; ".join(lines), ".", class_="hn-note hn-ties")


def _by_score(summary: pd.DataFrame, frames: Any) -> list[tuple[str, pd.DataFrame]]:
    groups = dict(tuple(summary.groupby("score", sort=False)))
    return [(name, groups[name]) for name in frames.score_names if name in groups]


def _metric_row(
    name: Any, group: pd.DataFrame, modes: list[str], upper: pd.DataFrame | None = None
) -> list[Any]:
    by_mode = {row.query_mode: row for row in group.itertuples(index=False)}
    uppers = {} if upper is None else {r.query_mode: r for r in upper.itertuples(index=False)}
    means = [by_mode[m].mean for m in modes if m in by_mode and pd.notna(by_mode[m].mean)]
    best = max(means) if len(means) > 1 else None
    cells: list[Any] = [name]
    for mode in modes:
        row = by_mode.get(mode)
        cells.append(_metric_cell(row, best, uppers.get(mode)) if row is not None else "–")
    return cells


def _metric_cell(row: Any, best: float | None, upper: Any = None) -> Cell:
    is_best = best is not None and pd.notna(row.mean) and row.mean >= best - 1e-12
    value: Any = _value_text(row)
    title = _cell_title(row)
    if upper is not None and pd.notna(row.mean) and pd.notna(upper.mean):
        from heta_notebook.analysis._bounds import bounds_text

        interval = bounds_text(row.mean, upper.mean)
        value = join([value, " ", tag("span", interval, class_="hn-bounds")])
        title += (
            f"\nbounds {bounds_text(row.mean, upper.mean, 4)}: unjudged documents as "
            f"non-relevant (trec_eval, {row.score}) … as relevant ({upper.score})"
        )
    ci = f" · {fmt_ci(row.ci_low, row.ci_high, 2)}" if pd.notna(row.ci_low) else ""
    small = f"n={fmt_int(row.n)}{ci}"
    extra = []
    if row.n_skipped:
        extra.append(f"{row.n_skipped} skipped")
    if row.n_error:
        extra.append(f"{row.n_error} errors")
    if extra:
        small += " · " + ", ".join(extra)
    return td(
        value,
        tag("span", small, class_="hn-ci"),
        title=title,
        class_="hn-best" if is_best else None,
    )


def _value_text(row: Any) -> str:
    if pd.notna(row.mean):
        return fmt_num(row.mean)
    counts = row.counts if isinstance(row.counts, dict) else {}
    if counts:  # text-valued scores are counted, not averaged
        top = sorted(counts.items(), key=lambda kv: -kv[1])[:2]
        return ", ".join(f"{value} ×{n}" for value, n in top) + (" …" if len(counts) > 2 else "")
    return "–"


def _cell_title(row: Any) -> str:
    lines = [
        f"{row.score} · {row.query_mode}",
        f"mean {fmt_num(row.mean, 4)}  std {fmt_num(row.std, 4)}",
        f"95% CI {fmt_ci(row.ci_low, row.ci_high, 4)}",
        f"n scored {fmt_int(row.n)}, skipped {fmt_int(row.n_skipped)}, errors {fmt_int(row.n_error)}",
    ]
    if pd.notna(row.pass_rate):
        lines.append(f"pass rate {fmt_pct(row.pass_rate)} ({fmt_int(row.n_passed)} passed)")
    return "\n".join(lines)


def _latency_rows(frames: Any, modes: list[str]) -> list[list[Any]]:
    lat = frames.latency().set_index("query_mode")
    rows = []
    for label, col, fmt in (
        ("latency p50", "p50", fmt_ms),
        ("latency p95", "p95", fmt_ms),
        ("query errors", "n_error", fmt_int),
    ):
        rows.append([tag("i", label), *(fmt(lat[col].get(m)) for m in modes)])
    return rows


# --------------------------------------------------------------------------- slices


def _slices(frames: Any, by: Any, scores: Sequence[str] | None) -> Markup:
    """Slices as rows, query modes as columns: mean of each score with n and CI in small print."""
    summary = frames.summary(by=by)
    key = summary.columns[0]
    names = list(scores or [])
    if not names:
        names = [headline_score(frames.score_names) or ""]
    unknown = [n for n in names if n not in set(summary["score"])]
    if unknown:
        raise KeyError(
            f"no score {unknown[0]!r} in this report (scores: {', '.join(frames.score_names)})"
        )
    modes = frames.modes
    rows = []
    for name in names:
        picked = summary[summary["score"] == name]
        for value, group in picked.groupby(key, sort=False):
            by_mode = {r.query_mode: r for r in group.itertuples(index=False)}
            means = [r.mean for r in by_mode.values() if pd.notna(r.mean)]
            best = max(means) if len(means) > 1 else None
            cells = [_metric_cell(by_mode[m], best) if m in by_mode else "–" for m in modes]
            rows.append([f"{value}", name, *cells])
    title = tag("div", tag("b", f"By {key}"), class_="hn-note")
    note = tag(
        "div",
        "One row per slice: mean over its scored cases, n and 95% CI in small "
        "print (compare slices with compare(..., by=...) for paired tests).",
        class_="hn-note",
    )
    return join([title, table([key, "score", *modes], rows), note])


def _summary_only(report: EvaluationReport) -> Markup:
    if not report.score_summary:
        return tag("div", "No case results in this report.", class_="hn-note")
    rows = [[k, fmt_num(v)] for k, v in report.score_summary.items()]
    return join(
        [
            table(["score", "value"], rows),
            tag("div", "Stored score summary (no case results).", class_="hn-note"),
        ]
    )


__all__ = ["ReportCard", "report_card_html"]
