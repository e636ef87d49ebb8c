"""The same systems on several benchmarks: per-benchmark comparisons and a BEIR-style average.

``compare_benchmarks(reports)`` groups reports by benchmark (name, version, split) and builds
one :class:`~heta_notebook.analysis._compare.Comparison` per benchmark: cases pair only
within a benchmark. For a score, each benchmark's paired tests are Holm-corrected across
that benchmark's pairs (``comparison.select(scores=[score])``); across benchmarks, a system's
score is the mean of its per-benchmark means, and it wins (loses) on a benchmark where it is
significantly better (worse) than the baseline. Cards, figures and tables are thin doors
into ``heta_notebook.display``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook.analysis._alignment import SEPARATOR, Variant
from heta_notebook.analysis._compare import Comparison
from heta_notebook.analysis._compare_inputs import collect_reports
from heta_notebook.schema._headline import headline_score
from heta_notebook.schema._records import EvaluationReport

MEAN = "Mean"


def compare_benchmarks(
    reports: Any,
    baseline: str | Variant | tuple[str, str] | None = None,
    **options: Any,
) -> BenchmarkComparison:
    """Compare the same systems on several benchmarks (reports grouped by benchmark).

    ``reports``: a list, a dict label → report, a RunCollection or a ReportStore (+ filters).
    ``baseline`` (a report label or variant) is the baseline on every benchmark; where it did
    not run, that benchmark's cells carry no test ("n/a" in tables, a note says why). Other
    ``options`` go to each ``compare``: ``test``, ``correction``, ``family``, ``confidence``,
    ``alternative`` (``analysis._options``), ``n_resamples``, ``seed``, ``method``. Each
    benchmark × score is its own correction family (``family="all"`` matters in ``compare``).
    """
    from heta_notebook.analysis._options import check_options

    filters = {k: options.pop(k) for k in list(options) if k not in _COMPARE_OPTIONS}
    check_options(**{k: v for k, v in options.items() if k in _STAT_OPTIONS})
    collected = collect_reports(reports, **filters)
    groups: dict[str, dict[str, EvaluationReport]] = {}
    for label, report in collected.items():
        group = groups.setdefault(report.benchmark.key, {})
        system = _system_label(label, report)
        group[label if system in group else system] = report
    names = _display_names(list(groups))
    comparisons, absent = {}, {}
    for key, group in groups.items():
        missing = _missing_baseline(baseline, group)
        if missing:
            absent[names[key]] = missing
        chosen = None if missing else baseline
        comparisons[names[key]] = Comparison(group, baseline=chosen, **options)
    return BenchmarkComparison(comparisons, absent_baseline=absent)


_STAT_OPTIONS = {"test", "correction", "family", "confidence", "alternative"}
_COMPARE_OPTIONS = {"n_resamples", "seed", "method", *_STAT_OPTIONS}


def _system_label(label: str, report: EvaluationReport) -> str:
    """The label a system carries on every benchmark (duplicate-label suffixes dropped)."""
    return report.label if label.startswith(f"{report.label} (") else label


def _display_names(keys: Sequence[str]) -> dict[str, str]:
    """Benchmark key → column name: the name alone when it is unique, else the full key."""
    names = [k.split(":", 1)[0] for k in keys]
    return {k: (n if names.count(n) == 1 else k) for k, n in zip(keys, names, strict=True)}


def _missing_baseline(baseline: Any, group: dict[str, EvaluationReport]) -> str | None:
    """The baseline's report label when it has no report in ``group`` (else None)."""
    label = baseline.split(SEPARATOR)[0] if isinstance(baseline, str) else None
    if isinstance(baseline, (tuple, Variant)):
        label = baseline.report if isinstance(baseline, Variant) else baseline[0]
    return label if label is not None and label not in group else None


class BenchmarkComparison:
    """Per-benchmark comparisons of the same systems, with a BEIR-style mean over benchmarks.

    ``benchmark(name)`` is the comparison behind a column; ``table(score)`` the systems ×
    benchmarks means (+ ``Mean``); ``significance(score)`` the per-benchmark tests;
    ``wins(score)`` how many benchmarks each system wins or loses significantly.
    """

    def __init__(
        self,
        comparisons: dict[str, Comparison],
        score: str | None = None,
        *,
        absent_baseline: dict[str, str] | None = None,
    ) -> None:
        if not comparisons:
            raise ValueError("compare_benchmarks() needs at least one report")
        self.comparisons = dict(comparisons)
        self._score = score
        self.absent_baseline = dict(absent_baseline or {})  # benchmark → baseline label

    @property
    def benchmarks(self) -> list[str]:
        """Benchmark column names, in first-seen order."""
        return list(self.comparisons)

    def benchmark(self, name: str) -> Comparison:
        """The comparison on one benchmark (its cases, deltas, tests and explorer)."""
        try:
            return self.comparisons[name]
        except KeyError:
            raise KeyError(
                f"no benchmark {name!r} in this comparison (benchmarks: {', '.join(self.benchmarks)})"
            ) from None

    @property
    def variants(self) -> list[str]:
        """System names (``"label · mode"``) over every benchmark, in first-seen order."""
        return list(dict.fromkeys(v.name for c in self.comparisons.values() for v in c.variants))

    @property
    def score_names(self) -> list[str]:
        """Scores every benchmark reports."""
        sets = [c.score_names for c in self.comparisons.values()]
        return [s for s in sets[0] if all(s in other for other in sets[1:])]

    @property
    def primary_score(self) -> str:
        """The score shown by default (the headline score: nDCG@10 when present)."""
        return self._score or headline_score(self.score_names) or self.score_names[0]

    def baseline_name(self, benchmark: str | None = None) -> str:
        """The baseline, as shown (a variant name or ``"label (same mode)"``)."""
        names = [benchmark] if benchmark else []
        names = names or [b for b in self.benchmarks if b not in self.absent_baseline]
        if not names and self.absent_baseline:
            return next(iter(self.absent_baseline.values()))
        base = self.comparisons[names[0]].baseline
        return base.name if isinstance(base, Variant) else f"{base} (same mode)"

    def with_score(self, score: str) -> BenchmarkComparison:
        """The same comparison showing ``score`` by default (card and figure)."""
        self._check_score(score)
        return BenchmarkComparison(self.comparisons, score, absent_baseline=self.absent_baseline)

    def _check_score(self, score: str) -> str:
        if score not in self.score_names:
            raise KeyError(
                f"no score {score!r} on every benchmark (scores: {', '.join(self.score_names)})"
            )
        return score

    # -- frames ------------------------------------------------------------------------------

    def table(self, score: str | None = None) -> pd.DataFrame:
        """Systems × benchmarks: the mean of ``score`` per benchmark, then ``Mean`` over them
        (NaN where a system did not run a benchmark; its ``Mean`` then is NaN too)."""
        score = self._check_score(score or self.primary_score)
        columns = {}
        for name, comparison in self.comparisons.items():
            means = comparison.table("mean")
            row = means.loc[score] if score in means.index else pd.Series(dtype=float)
            columns[name] = row
        frame = pd.DataFrame(columns).reindex(self.variants).astype(float)
        frame[MEAN] = frame.mean(axis=1, skipna=False)
        frame.index.name = "variant"
        return frame

    def significance(self, score: str | None = None) -> pd.DataFrame:
        """Each benchmark's paired tests of ``score`` (Holm across that benchmark's pairs),
        with a ``benchmark`` column and ``direction`` (better / worse / n.s.)."""
        score = self._check_score(score or self.primary_score)
        return self._tests(score).copy()

    def _tests(self, score: str) -> pd.DataFrame:
        if score not in self._cache:
            parts = []
            for name, comparison in self.comparisons.items():
                sig = comparison.select(scores=[score]).significance()
                if name in self.absent_baseline:
                    sig = sig.iloc[:0]  # no baseline there: no test ("n/a", see notes())
                parts.append(sig.assign(benchmark=name))
            frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
            frame.insert(0, "benchmark", frame.pop("benchmark"))
            frame["direction"] = np.where(
                ~frame["significant"].astype(bool),
                "n.s.",
                np.where(frame["delta"] > 0, "better", "worse"),
            )
            self._cache[score] = frame
        return self._cache[score]

    @cached_property
    def _cache(self) -> dict[str, pd.DataFrame]:
        return {}

    def wins(self, score: str | None = None) -> pd.DataFrame:
        """Per system: benchmarks where it is significantly better / worse than the baseline,
        not significantly different, and compared at all."""
        sig = self.significance(score)
        counts = pd.crosstab(sig["variant"], sig["direction"])
        counts = counts.reindex(columns=["better", "worse", "n.s."], fill_value=0)
        counts = counts.reindex(self.variants).fillna(0).astype(int)
        counts.columns = ["wins", "losses", "not_significant"]
        counts["compared"] = counts.sum(axis=1)
        counts.index.name = "variant"
        return counts

    def summary(self, score: str | None = None) -> pd.DataFrame:
        """Long form: benchmark, variant, mean, n, and (vs its baseline) delta, p_holm, direction."""
        score = self._check_score(score or self.primary_score)
        parts = []
        for name, comparison in self.comparisons.items():
            frame = comparison.summary()
            parts.append(frame[frame["score"] == score].assign(benchmark=name))
        frame = pd.concat(parts, ignore_index=True)
        tests = self._tests(score)[
            ["benchmark", "variant", "delta", "d_z", "p_holm", "p_adjusted", "direction"]
        ]
        frame = frame.merge(tests, on=["benchmark", "variant"], how="left")
        frame.insert(0, "benchmark", frame.pop("benchmark"))
        return frame

    def cell(self, variant: str, benchmark: str, score: str | None = None) -> dict[str, Any]:
        """What one cell shows: mean, and against the baseline delta, p (Holm) and direction."""
        score = self._check_score(score or self.primary_score)
        mean = self.table(score).loc[variant, benchmark]
        tests = self._tests(score)
        row = tests[(tests["benchmark"] == benchmark) & (tests["variant"] == variant)]
        if row.empty:
            return {
                "mean": mean,
                "delta": None,
                "p_holm": None,
                "p_adjusted": None,
                "direction": None,
            }
        r = row.iloc[0]
        return {
            "mean": mean,
            "delta": r["delta"],
            "p_holm": r["p_holm"],
            "p_adjusted": r["p_adjusted"],
            "direction": r["direction"],
        }

    def notes(self) -> list[str]:
        """Caveats: systems missing from a benchmark (no ``Mean`` for them), and per benchmark
        its reports whose scores cut deeper than they retrieved."""
        notes = []
        table = self.table()
        for variant, row in table.drop(columns=MEAN).iterrows():
            absent = [b for b, v in row.items() if pd.isna(v)]
            if absent:
                notes.append(f"{variant} has no {self.primary_score} on {', '.join(absent)}.")
        for name, label in self.absent_baseline.items():
            notes.append(
                f"n/a: the baseline {label} has no report on {name}; no test there "
                f"(reports there: {', '.join(self.comparisons[name].labels)})."
            )
        for name, comparison in self.comparisons.items():
            notes += [f"{name}: {note}" for note in comparison.depth_notes()]
        return notes

    # -- doors into display ------------------------------------------------------------------

    @property
    def plot(self) -> Any:
        """Plotly figures: ``.bars(score)`` (per benchmark and Mean, significance marked)."""
        from heta_notebook.display._benchmarks import BenchmarkPlots

        return BenchmarkPlots(self)

    def to_html(self) -> str:
        """The card: systems × benchmarks with markers, W/L, and each benchmark's comparison."""
        from heta_notebook.display._benchmarks import benchmarks_html

        return benchmarks_html(self)

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_latex(self, scores: Sequence[str] | None = None, **options: Any) -> str:
        """A booktabs LaTeX table (benchmarks × scores, Mean, best bold, markers, caption with
        queries per benchmark, test, correction, tie rule and ``missing=`` convention).

        Options: ``decimals`` (3); ``markers``: ``"direction"`` (↑/↓ vs the baseline on each
        benchmark) or None; ``alpha`` (0.05); ``labels`` (score *or benchmark* → shown name,
        e.g. ``{"beir_cranfield": "Cranfield"}``); ``caption``; ``label``. An unknown option
        is refused with the valid ones."""
        from heta_notebook.display._tables import benchmarks_table, check_options

        check_options(benchmarks_table, options)
        return benchmarks_table(self, scores, **options).to_latex()

    def to_markdown(self, scores: Sequence[str] | None = None, **options: Any) -> str:
        """The same table as Markdown (GitHub pipe table, caption below); the options of
        :meth:`to_latex`."""
        from heta_notebook.display._tables import benchmarks_table, check_options

        check_options(benchmarks_table, options)
        return benchmarks_table(self, scores, **options).to_markdown()

    def __repr__(self) -> str:
        score = self.primary_score
        lines = [
            f"<BenchmarkComparison of {len(self.variants)} system(s) on "
            f"{len(self.benchmarks)} benchmark(s), {score}, baseline {self.baseline_name()!r}>"
        ]
        table = self.table(score)
        wins = self.wins(score)
        for variant, row in table.iterrows():
            cells = "  ".join(f"{b} {_num(v)}" for b, v in row.items())
            w = wins.loc[variant]
            lines.append(f"  {variant}: {cells}  (W/L {w['wins']}/{w['losses']})")
        return "\n".join(lines)


def _num(value: float) -> str:
    return "—" if pd.isna(value) else f"{value:.3f}"


__all__ = ["MEAN", "BenchmarkComparison", "compare_benchmarks"]
