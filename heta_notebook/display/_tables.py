"""Paper tables: a summary, a comparison or a multi-benchmark comparison as LaTeX or Markdown.

Analysis computes (means, paired tests, Holm); this module only lays the numbers out. A
:class:`PaperTable` holds rows × columns of values and neutral significance marks
(``"+"`` better than the baseline, ``"-"`` worse, or ranx-style letters naming the rows a
row beats); ``to_latex()`` writes booktabs output a paper can ``\\input`` as it is (best value
per column in bold, markers as superscripts, a caption that states the test, the correction
and its family), ``to_markdown()`` a GitHub pipe table with the caption below.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from string import ascii_lowercase
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from heta_notebook.analysis._bounds import (
    bound_pairs,
    bounds_text,
    comparison_bound_pairs,
    conventions,
    folded,
)
from heta_notebook.analysis._judged import judged_caption

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.analysis._benchmarks import BenchmarkComparison
    from heta_notebook.analysis._compare import Comparison
    from heta_notebook.schema._records import EvaluationReport

MARKERS = ("direction", "letters", "tukey", None)
DEFAULT_TEST = "sign-flip permutation test"
_METRIC_LABELS = {
    "ndcg": "nDCG",
    "map": "MAP",
    "recall": "R",
    "precision": "P",
    "mrr": "MRR",
}
_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "·": r"$\cdot$",
    "—": "---",
    "↑": r"$\uparrow$",
    "↓": r"$\downarrow$",
    "×": r"$\times$",
    "<": r"$<$",
    ">": r"$>$",
    "–": "--",
}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIALS))


@dataclass
class PaperTable:
    """Rows × columns of numbers with significance marks, ready for LaTeX or Markdown."""

    rows: list[str]
    columns: list[str]
    values: np.ndarray  # rows × columns (NaN: no value)
    marks: list[list[str]]  # rows × columns: "", "+", "-" or letters
    caption: str
    groups: list[str] | None = None  # per column its header group (a benchmark), or None
    decimals: int = 3
    label: str | None = None
    row_header: str = "System"
    letters: list[str] = field(default_factory=list)  # per row its letter (letters mode)
    na: np.ndarray | None = None  # rows × columns: True where a missing value reads "n/a"
    upper: np.ndarray | None = None  # rows × columns: a value's upper bound (NaN: none shown)

    def best(self) -> np.ndarray:
        """rows × columns: True where a value is its column's best (as displayed; ties all)."""
        shown = np.round(self.values, self.decimals)
        with np.errstate(invalid="ignore"):
            top = np.nanmax(np.where(np.isnan(shown), -np.inf, shown), axis=0)
        return ~np.isnan(shown) & (shown == top[None, :])

    def _row_names(self) -> list[str]:
        if not self.letters:
            return list(self.rows)
        return [f"({letter}) {row}" for letter, row in zip(self.letters, self.rows, strict=True)]

    def to_latex(self) -> str:
        """booktabs LaTeX: ``table`` with caption and label, ``tabular`` with one ``l`` + ``r``s."""
        best = self.best()
        lines = [
            r"\begin{table}[t]",
            r"\centering",
            r"\caption{" + latex_escape(self.caption) + "}",
        ]
        if self.label:
            lines.append(r"\label{" + self.label + "}")
        lines += [r"\begin{tabular}{l" + "r" * len(self.columns) + "}", r"\toprule"]
        lines += self._latex_header()
        lines.append(r"\midrule")
        for i, name in enumerate(self._row_names()):
            cells = [latex_escape(name)]
            for j in range(len(self.columns)):
                cell = self._latex_cell(self.values[i, j], self.marks[i][j], best[i, j])
                bounds = self._bounds(i, j)
                cell += f" {bounds}" if bounds else ""
                cells.append("n/a" if self._na(i, j) else cell)
            lines.append(" & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def _latex_header(self) -> list[str]:
        names = [latex_escape(c) for c in self.columns]
        if not self.groups:
            return [" & ".join([latex_escape(self.row_header), *names]) + r" \\"]
        top, rules, start = [""], [], 2
        for group, span in _runs(self.groups):
            top.append(rf"\multicolumn{{{span}}}{{c}}{{{latex_escape(group)}}}")
            rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
            start += span
        return [
            " & ".join(top) + r" \\",
            " ".join(rules),
            " & ".join([latex_escape(self.row_header), *names]) + r" \\",
        ]

    def _latex_cell(self, value: float, mark: str, best: bool) -> str:
        if np.isnan(value):
            return "--"
        text = f"{value:.{self.decimals}f}"
        text = r"\textbf{" + text + "}" if best else text
        if mark == "+":
            return text + r"$^{\uparrow}$"
        if mark == "-":
            return text + r"$^{\downarrow}$"
        return text + (r"$^{\mathrm{" + mark + "}}$" if mark else "")

    def to_markdown(self) -> str:
        """A GitHub pipe table (best in bold, ↑/↓ or superscript letters), caption below."""
        best = self.best()
        header = list(self.columns)
        if self.groups:
            header = [
                f"{g}: {c}" if c else g for g, c in zip(self.groups, self.columns, strict=True)
            ]
        lines = [
            "| " + " | ".join([md_escape(self.row_header), *map(md_escape, header)]) + " |",
            "|" + "---|" + "---:|" * len(header),
        ]
        for i, name in enumerate(self._row_names()):
            cells = [md_escape(name)]
            for j in range(len(self.columns)):
                cell = self._md_cell(self.values[i, j], self.marks[i][j], best[i, j])
                bounds = self._bounds(i, j)
                cell += f" {md_escape(bounds)}" if bounds else ""
                cells.append("n/a" if self._na(i, j) else cell)
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", md_escape(self.caption)]
        return "\n".join(lines) + "\n"

    def _bounds(self, i: int, j: int) -> str:
        """``[0.296, 0.697]`` after a value shown with its upper bound (``analysis._bounds``)."""
        if self.upper is None or np.isnan(self.upper[i, j]) or np.isnan(self.values[i, j]):
            return ""
        return bounds_text(self.values[i, j], self.upper[i, j], self.decimals)

    def _na(self, i: int, j: int) -> bool:
        return self.na is not None and bool(self.na[i, j]) and bool(np.isnan(self.values[i, j]))

    def _md_cell(self, value: float, mark: str, best: bool) -> str:
        if np.isnan(value):
            return "–"
        text = f"{value:.{self.decimals}f}"
        text = f"**{text}**" if best else text
        if mark in ("+", "-"):
            return text + (" ↑" if mark == "+" else " ↓")
        return text + (f"<sup>{mark}</sup>" if mark else "")


def check_options(builder: Any, options: Mapping[str, Any]) -> None:
    """Refuse a table option ``builder`` does not take, listing the ones it does."""
    import inspect

    from heta_notebook.analysis._options import unknown_options_message

    params = inspect.signature(builder).parameters
    valid = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY]
    unknown = [k for k in options if k not in valid]
    if unknown:
        raise TypeError(unknown_options_message(unknown, valid, where="the table"))


def latex_escape(text: Any) -> str:
    """Text safe in LaTeX: ``\\ & % $ # _ { } ~ ^ < >`` escaped; ``· ↑ ↓ ×`` as math symbols."""
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIALS[m.group(0)], str(text))


def md_escape(text: Any) -> str:
    """Text safe in a Markdown table cell (pipes, emphasis and HTML brackets escaped)."""
    out = str(text).replace("\\", "\\\\")
    for char in "|*_`<>[]":
        out = out.replace(char, "\\" + char)
    return " ".join(out.split())


def score_label(score: str) -> str:
    """``beir_ndcg@10`` → ``nDCG@10``, ``beir_ndcg_condensed@10`` → ``nDCG@10 (condensed)``,
    ``beir_ndcg_upper@10`` → ``nDCG@10 (upper)`` (other names unchanged)."""
    match = re.fullmatch(
        r"(?:beir_)?(ndcg|map|recall|precision|mrr)(?:_(condensed|upper))?@(\d+)", score
    )
    if not match:
        return score
    twin = f" ({match.group(2)})" if match.group(2) else ""
    return f"{_METRIC_LABELS[match.group(1)]}@{match.group(3)}{twin}"


def _runs(items: Sequence[str]) -> list[tuple[str, int]]:
    runs: list[tuple[str, int]] = []
    for item in items:
        if runs and runs[-1][0] == item:
            runs[-1] = (item, runs[-1][1] + 1)
        else:
            runs.append((item, 1))
    return runs


def _check_markers(markers: str | None) -> None:
    if markers not in MARKERS:
        raise ValueError(f"markers must be one of {MARKERS}, got {markers!r}")


def described_test(sig: pd.DataFrame) -> str:
    """The test a significance frame used (its ``test`` column when recorded), by name."""
    from heta_notebook.analysis._stats import TEST_NAMES

    if "test" in sig and len(sig):
        names = list(dict.fromkeys(TEST_NAMES.get(str(t), str(t)) for t in sig["test"].dropna()))
        if names:
            sides = set(sig["alternative"]) - {"two-sided"} if "alternative" in sig else set()
            one_sided = f", one-sided ({'/'.join(sorted(sides))})" if sides else ""
            return " / ".join(names) + one_sided
    return DEFAULT_TEST


def described_family(sig: pd.DataFrame) -> str:
    """Which p-values one correction covered: each score's comparisons, or all of them."""
    from heta_notebook.display._captions import correction_phrase

    name = correction_phrase(sig)
    if name == "no correction":
        return "no correction for multiple comparisons"
    if "family" in sig and len(sig) and set(sig["family"]) != {"all"}:
        sizes = sorted(set(sig["family_size"])) if "family_size" in sig else []
        each = "/".join(map(str, sizes)) if sizes else "its"
        return f"{name} correction within each score over its {each} comparison(s)"
    return f"{name} correction over all {len(sig)} comparisons"


def _labels(scores: Sequence[str], labels: Mapping[str, str] | None) -> list[str]:
    return [(labels or {}).get(s, score_label(s)) for s in scores]


def _p_adjusted(row: Any) -> float:
    """The p after the comparison's correction (``p_holm`` in frames from before it)."""
    return row["p_adjusted"] if "p_adjusted" in row else row["p_holm"]


def _direction(sig_row: Any, alpha: float) -> str:
    if sig_row is None or not sig_row["n_pairs"] or not _p_adjusted(sig_row) < alpha:
        return ""
    return "+" if sig_row["delta"] > 0 else "-" if sig_row["delta"] < 0 else ""


# --------------------------------------------------------------------------- builders


def comparison_table(
    comparison: Comparison,
    scores: Sequence[str] | None = None,
    *,
    decimals: int = 3,
    markers: str | None = "direction",
    alpha: float = 0.05,
    labels: Mapping[str, str] | None = None,
    caption: str | None = None,
    label: str | None = None,
) -> PaperTable:
    """Variants × scores of one comparison; marks against the baseline or letters."""
    _check_markers(markers)
    footnotes: list[str] = []
    scores = list(scores or comparison.score_names)
    chosen = comparison.select(scores=scores)
    scores = folded(
        scores, comparison_bound_pairs(chosen)
    )  # an upper bound goes in its lower's cell
    chosen = comparison.select(scores=scores)
    variants = [v.name for v in chosen.variants]
    means = chosen.table("mean").reindex(index=scores, columns=variants)
    values = means.T.to_numpy(dtype=float)
    upper = _uppers(chosen.bounds(), "variant", variants, scores)
    marks = [[""] * len(scores) for _ in variants]
    letters: list[str] = []
    n_cases = len(comparison.aligned.case_ids)
    bench = ", ".join(sorted({r.benchmark.name for r in comparison.reports.values()}))
    text = f"Mean over {n_cases} queries of {bench}"
    if markers == "direction":
        sig = chosen.significance(by=None)
        lookup = {(r["score"], r["variant"]): r for _, r in sig.iterrows()}
        for i, v in enumerate(variants):
            for j, s in enumerate(scores):
                marks[i][j] = _direction(lookup.get((s, v)), alpha)
                if marks[i][j]:
                    footnotes.append(_tie_footnote(chosen, v, s, labels, decimals))
        text += (
            f"; best in bold. ↑/↓: significantly better/worse than the "
            f"baseline {_baseline_text(comparison)} ({described_test(sig)}, p < {alpha:g} after "
            f"{described_family(sig)}; {len(chosen.pairs())} pair(s) × {len(scores)} score(s))."
        )
    elif markers == "letters":
        if len(variants) > len(ascii_lowercase):
            raise ValueError(
                f"markers='letters' names at most 26 rows, this table has {len(variants)}; "
                "select() fewer reports or modes, or use markers='direction'"
            )
        letters = list(ascii_lowercase[: len(variants)])
        sig = chosen.significance(all_pairs=True, by=None)
        letter_of = dict(zip(variants, letters, strict=False))
        for _, r in sig.iterrows():
            if not (r["n_pairs"] and _p_adjusted(r) < alpha and r["delta"]):
                continue
            winner, loser = (r["variant"], r["baseline"])
            if r["delta"] < 0:
                winner, loser = loser, winner
            i, j = variants.index(winner), scores.index(r["score"])
            marks[i][j] = "".join(sorted(marks[i][j] + letter_of[loser]))
        text += (
            "; best in bold. A superscript letter marks a significant improvement over the "
            f"system with that letter ({described_test(sig)}, p < {alpha:g} after "
            f"{described_family(sig)} among all pairs of the table)."
        )
    elif markers == "tukey":
        for j, s in enumerate(scores):
            groups = chosen.tukey(s, alpha).attrs["letters"]
            for i, v in enumerate(variants):
                marks[i][j] = groups.get(v, "")
        text += (
            "; best in bold. Superscript letters: Tukey HSD groups per score (systems sharing a "
            f"letter do not differ at α = {alpha:g}; classical Tukey over the queries every "
            "system scored: the per-query pairing is ignored)."
        )
    else:
        text += "; best in bold."
    from heta_notebook.display import _captions as cap

    text += _depth_note(comparison.reports.values(), scores, labels)
    text += judged_caption(comparison.reports.values(), scores, _labeller(labels))
    text += cap.tie_sentence(comparison.reports.values(), scores)
    text += "".join(f for f in dict.fromkeys(footnotes) if f) + " " + cap.MISSING
    return PaperTable(
        rows=variants,
        columns=_labels(scores, labels),
        values=values,
        marks=marks,
        caption=caption or text,
        decimals=decimals,
        label=label,
        letters=letters,
        upper=upper,
    )


def benchmarks_table(
    bench: BenchmarkComparison,
    scores: Sequence[str] | None = None,
    *,
    decimals: int = 3,
    markers: str | None = "direction",
    alpha: float = 0.05,
    labels: Mapping[str, str] | None = None,
    caption: str | None = None,
    label: str | None = None,
) -> PaperTable:
    """Systems × (benchmark × score) + Mean per score, marks per benchmark vs the baseline."""
    if markers not in ("direction", None):
        raise ValueError(
            f"markers must be 'direction' or None for several benchmarks, got {markers!r}"
        )
    from heta_notebook.display import _captions as cap

    scores = list(scores or [bench.primary_score])
    reports = [r for c in bench.comparisons.values() for r in c.reports.values()]
    known = conventions(reports, bench.score_names)  # an upper bound goes in its lower's cell
    bounded = {lo: up for lo, up in bound_pairs(bench.score_names, known).items() if lo in scores}
    scores = folded(scores, bounded)
    names = [*bench.benchmarks, "Mean"]
    shown_names = {b: (labels or {}).get(b, b) for b in names}
    footnotes: list[str] = []
    rows = bench.variants
    values = np.full((len(rows), len(names) * len(scores)), np.nan)
    upper = np.full_like(values, np.nan)
    marks = [[""] * values.shape[1] for _ in rows]
    groups: list[str] = []
    columns: list[str] = []
    families = set()
    for b, name in enumerate(names):
        for s, score in enumerate(scores):
            col = b * len(scores) + s
            groups.append(shown_names[name])
            columns.append(_labels([score], labels)[0] if len(scores) > 1 else "")
            values[:, col] = bench.table(score)[name].reindex(rows).to_numpy(dtype=float)
            if score in bounded:  # its upper bound: a mean of means too, in Mean
                upper[:, col] = bench.table(bounded[score])[name].reindex(rows).to_numpy(float)
            if markers and name != "Mean":
                sig = bench.significance(score)
                sig = sig[sig["benchmark"] == name]
                families.add(len(sig))
                lookup = {r["variant"]: r for _, r in sig.iterrows()}
                for i, v in enumerate(rows):
                    marks[i][col] = _direction(lookup.get(v), alpha)
                    if marks[i][col]:
                        footnotes.append(
                            cap.tie_footnote(
                                bench.comparisons[name],
                                v,
                                score,
                                _labels([score], labels)[0],
                                decimals,
                                shown_names[name],
                            )
                        )
    header: list[str] | None = groups
    if len(scores) == 1:  # one score: benchmarks are the columns, the score goes in the caption
        columns, header = groups, None
    shown = ", ".join(_labels(scores, labels))
    text = (
        f"{shown} per benchmark and the mean over the {len(bench.benchmarks)} benchmarks "
        "(mean of per-benchmark means); best in bold."
    )
    if markers:
        sig = pd.concat([bench.significance(s) for s in scores], ignore_index=True)
        pairs = "/".join(map(str, sorted(f for f in families if f)))
        text += (
            " ↑/↓: significantly better/worse than the baseline "
            f"{bench.baseline_name()} on that benchmark ({described_test(sig)} on the benchmark's "
            f"queries, p < {alpha:g} after {cap.correction_phrase(sig)} correction per "
            f"benchmark and score over its {pairs or 'no'} comparison(s) with the baseline)."
        )
    text += cap.queries_sentence(bench, shown_names)
    text += cap.absent_sentence(bench, shown_names)
    text += _depth_note(reports, scores, labels)
    text += judged_caption(reports, scores, _labeller(labels))
    text += cap.tie_sentence(reports, scores)
    text += "".join(f for f in dict.fromkeys(footnotes) if f)
    text += " " + cap.MISSING
    return PaperTable(
        rows=rows,
        columns=columns,
        values=values,
        marks=marks,
        caption=caption or text,
        groups=header,
        decimals=decimals,
        label=label,
        na=_na_cells(bench, rows, names, len(scores)),
        upper=upper if bounded else None,
    )


def _tie_footnote(
    comparison: Comparison, variant: str, score: str, labels: Any, decimals: int
) -> str:
    from heta_notebook.display._captions import tie_footnote

    return tie_footnote(comparison, variant, score, _labels([score], labels)[0], decimals)


def _na_cells(
    bench: BenchmarkComparison, rows: Sequence[str], names: Sequence[str], width: int
) -> np.ndarray:
    """The baseline's cells on a benchmark it did not run read "n/a" (a caption note says why)."""
    from heta_notebook.analysis._alignment import SEPARATOR

    na = np.zeros((len(rows), len(names) * width), dtype=bool)
    for b, name in enumerate(names):
        label = bench.absent_baseline.get(name)
        for i, row in enumerate(rows):
            if label is not None and row.split(SEPARATOR)[0] == label:
                na[i, b * width : (b + 1) * width] = True
    return na


def summary_table(
    report: EvaluationReport,
    scores: Sequence[str] | None = None,
    *,
    decimals: int = 3,
    labels: Mapping[str, str] | None = None,
    caption: str | None = None,
    label: str | None = None,
) -> PaperTable:
    """Query modes × scores of one report (means over scored cases), best per column bold."""
    summary = report.summary()
    scores = list(scores or dict.fromkeys(summary["score"]))
    unknown = [s for s in scores if s not in set(summary["score"])]
    if unknown:
        known = ", ".join(dict.fromkeys(summary["score"]))
        raise KeyError(f"no score {unknown[0]!r} in report {report.report_id!r} (scores: {known})")
    bounds = report.frames().bounds()  # an upper bound goes in its lower's cell
    shown = bounds[bounds["score"].isin(scores)]
    scores = folded(scores, dict(zip(shown["score"], shown["upper_score"], strict=True)))
    means = summary.pivot_table(index="query_mode", columns="score", values="mean", sort=False)
    modes = list(dict.fromkeys(summary["query_mode"]))
    values = means.reindex(index=modes, columns=scores).to_numpy(dtype=float)
    n = int(summary["n"].max()) if len(summary) else 0
    text = (
        (
            f"{report.label} on {report.benchmark.name}: mean over up to {n} scored queries "
            "per query mode; best in bold."
        )
        + _depth_note([report], scores, labels)
        + judged_caption([report], scores, _labeller(labels))
    )
    return PaperTable(
        rows=modes,
        columns=_labels(scores, labels),
        values=values,
        marks=[[""] * len(scores) for _ in modes],
        caption=caption or text,
        decimals=decimals,
        label=label,
        row_header="Query mode",
        upper=_uppers(bounds, "query_mode", modes, scores),
    )


def _uppers(
    bounds: pd.DataFrame, key: str, rows: Sequence[str], scores: Sequence[str]
) -> np.ndarray | None:
    """rows × scores: each shown score's upper bound from a ``bounds()`` frame (NaN where it
    has none); None when no shown score has one."""
    bounds = bounds[bounds["score"].isin(list(scores))]
    if bounds.empty:
        return None
    table = bounds.pivot_table(index=key, columns="score", values="upper", sort=False)
    return table.reindex(index=list(rows), columns=list(scores)).to_numpy(dtype=float)


def _labeller(labels: Mapping[str, str] | None) -> Any:
    """A score's shown name, as the table's columns name it (for caption sentences)."""
    return lambda score: _labels([score], labels)[0]


def _depth_note(
    reports: Iterable[EvaluationReport], scores: Sequence[str], labels: Mapping[str, str] | None
) -> str:
    """A caption sentence naming the shown scores that cut deeper than their run retrieved
    (``schema._status``): nDCG@100 on 10 results per query is not BEIR's nDCG@100."""
    from heta_notebook.schema._status import KEY

    shallow, depths = [], set()
    for report in reports:
        deeper = report.metadata.get(KEY) or {}
        config = report.metadata.get("config") or {}
        for score in scores:
            if score in deeper:
                shallow.append(score)
                depths.add(config.get("top_k"))
    if not shallow:
        return ""
    names = _labels(list(dict.fromkeys(shallow)), labels)
    retrieved = "/".join(str(k) for k in sorted(k for k in depths if isinstance(k, int)))
    verb = "is" if len(names) == 1 else "are"
    return (
        f" {', '.join(names)} {verb} computed on the top {retrieved} results retrieved per "
        "query, fewer than the cutoff."
    )


def _baseline_text(comparison: Comparison) -> str:
    base = comparison.baseline
    return base.name if hasattr(base, "name") else f"{base} (same query mode)"


__all__ = [
    "PaperTable",
    "check_options",
    "benchmarks_table",
    "comparison_table",
    "latex_escape",
    "md_escape",
    "score_label",
    "summary_table",
]
