"""Compare recipes and query modes: aligned per-case scores, deltas and paired significance.

``compare(reports)`` lines several reports up case by case (see ``alignment``) and returns a
:class:`Comparison`: DataFrames (``summary``, ``deltas``, ``significance``,
``missing_cases``, ``manifest_diff``), one-line headlines, and thin doors to the table HTML
(``_repr_html_``), figures (``.plot``) and the side-by-side explorer (``.explore()``), which
live in ``heta_notebook.display``.

Significance: each variant is compared with its baseline on the cases both scored, with a
paired test (``test=``: the sign-flip randomization test by default, the paired t-test or the
Wilcoxon signed-rank test) and a paired bootstrap CI of the mean difference
(``heta_notebook.analysis._stats``). Holm's correction runs within each score, across the
pairs (modes and slices) compared (``family="score"``), or over every score at once
(``family="all"``). The test and the family are data: ``Comparison.test`` / ``.family``, the
``test`` / ``family`` / ``family_size`` columns of ``significance()``, and ``test_note()``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from itertools import combinations
from os import PathLike
from typing import Any

import numpy as np
import pandas as pd

from heta_notebook._util.formatting import format_delta, format_p
from heta_notebook.analysis import _options as options_
from heta_notebook.analysis import _stats as stats
from heta_notebook.analysis._alignment import Aligned, Variant, align
from heta_notebook.analysis._bounds import bounds_notes, comparison_bounds
from heta_notebook.analysis._compare_frames import (
    SUMMARY_COLUMNS,
    describe_test,
    flatten,
    missing_notes,
    significance_frame,
    summary_stats,
)
from heta_notebook.analysis._compare_inputs import check_benchmarks, collect_reports
from heta_notebook.analysis._compare_stats import ComparisonStatistics
from heta_notebook.analysis._effects import with_statistics as _with_statistics
from heta_notebook.analysis._frames import ReportFrames
from heta_notebook.analysis._headline import setting_changes, setting_text
from heta_notebook.analysis._judged import judged_notes
from heta_notebook.analysis._pairing import (
    comparison_pairs,
    pair_name,
    pairing_notes,
    relevant_changes,
)
from heta_notebook.analysis._slices import SliceKey, case_slices
from heta_notebook.schema._headline import headline_score
from heta_notebook.schema._records import EvaluationCaseResult, EvaluationReport

_IGNORED_MANIFEST_KEYS = ("name", "created_at", "updated_at", "manifest_hash", "hash")


def compare(
    reports: Any,
    baseline: str | Variant | tuple[str, str] | None = None,
    *,
    allow_different_benchmarks: bool = False,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    confidence: float = 0.95,
    by: SliceKey | None = None,
    method: str = "auto",
    test: str = "permutation",
    family: str = "score",
    correction: str = "holm",
    alternative: str = "two-sided",
    **filters: Any,
) -> Comparison:
    """Compare reports (list, dict label → report, a RunCollection, or a ReportStore + filters).

    ``baseline`` is a report label (each mode is compared with that report's same mode; a
    report with one mode pairs with every mode, see ``analysis._pairing``) or
    a variant (``"label · mode"`` or ``(label, mode)``: everything is compared with it).
    Reports of different benchmarks are refused unless ``allow_different_benchmarks``, which
    puts them side by side *unpaired*: cases pair only within one benchmark, so no test is
    formed across benchmarks (``compare_benchmarks`` gives the per-benchmark view).
    ``by`` (a case label or metadata key) makes ``significance()`` test each slice, with
    every slice inside the Holm family. ``test``: ``"permutation"`` (paired sign-flip),
    ``"t-test"`` (paired t) or ``"wilcoxon"`` (signed-rank). ``family``: Holm within each
    score across the pairs, modes and slices (``"score"``) or over every test (``"all"``).
    ``correction``: ``"holm"``, ``"bh"``, ``"bonferroni"`` or ``"none"``; ``alternative``:
    ``"two-sided"``, ``"greater"`` or ``"less"`` (``analysis._options``: the one option set).
    ``method`` picks the permutation test's and the bootstrap's null distributions:
    ``"auto"`` (asymptotic forms at ≥ 20,000 well-spread pairs, else exact / Monte Carlo),
    ``"monte-carlo"`` or ``"asymptotic"`` (see ``heta_notebook.analysis._stats``).
    """
    stats.check_method(method)  # a bad option fails here, not when the table renders
    chosen = options_.check_options(
        test=test, family=family, correction=correction, confidence=confidence,
        alternative=alternative,
    )  # fmt: skip
    collected = collect_reports(reports, **filters)
    check_benchmarks(collected, allow_different_benchmarks)
    return Comparison(
        collected,
        baseline=baseline,
        n_resamples=n_resamples,
        seed=seed,
        by=by,
        method=method,
        **chosen,
    )


# --------------------------------------------------------------------------- the comparison


class Comparison(ComparisonStatistics):
    """Several reports lined up case by case, with paired significance against a baseline.

    Immutable in spirit: ``select``, ``with_baseline`` and ``pivot`` return new comparisons
    that share the aligned data. Displays as a table in Jupyter. ``test`` names the paired
    test (``stats.TESTS``) and ``family`` the Holm family (``stats.FAMILIES``).
    """

    def __init__(
        self,
        reports: Mapping[str, EvaluationReport],
        *,
        baseline: str | Variant | tuple[str, str] | None = None,
        n_resamples: int = stats.DEFAULT_RESAMPLES,
        seed: int = stats.DEFAULT_SEED,
        confidence: float = 0.95,
        pivoted: bool = False,
        by: SliceKey | None = None,
        method: str = "auto",
        test: str = "permutation",
        family: str = "score",
        correction: str = "holm",
        alternative: str = "two-sided",
        _state: dict[str, Any] | None = None,
    ) -> None:
        chosen = options_.check_options(
            test=test, family=family, correction=correction, confidence=confidence,
            alternative=alternative,
        )  # fmt: skip
        test, self.correction, self.alternative = chosen["test"], correction, alternative
        self.reports = dict(reports)
        self.n_resamples, self.seed, self.confidence = n_resamples, seed, confidence
        self.by = by
        self.method = method
        self.test, self.family = test, family
        self.pivoted = pivoted
        state = _state or {}
        self._frames: dict[str, ReportFrames] = state.get("frames") or {}
        self.aligned: Aligned = state.get("aligned") or align(self.reports)
        self._scores: list[str] = state.get("scores") or list(self.aligned.score_names)
        self._variants: list[Variant] = state.get("variants") or list(self.aligned.variants)
        self.baseline = self._resolve_baseline(baseline)

    # -- fluent variations ------------------------------------------------------------------

    def frames(self, label: str) -> ReportFrames:
        """The (cached) ``ReportFrames`` of one report, e.g. for its evidence frame."""
        if label not in self._frames:
            self._frames[label] = self.reports[label].frames()
        return self._frames[label]

    def _copy(self, **changes: Any) -> Comparison:
        state = {
            "frames": self._frames,
            "aligned": self.aligned,
            "scores": self._scores,
            "variants": self._variants,
        }
        state.update({k: v for k, v in changes.items() if k in state})
        options: dict[str, Any] = {
            "baseline": self.baseline,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "confidence": self.confidence,
            "pivoted": self.pivoted,
            "by": self.by,
            "method": self.method,
            "test": self.test,
            "family": self.family,
            "correction": self.correction,
            "alternative": self.alternative,
        }
        options.update({k: v for k, v in changes.items() if k in options})
        return Comparison(self.reports, _state=state, **options)

    def select(
        self,
        scores: Iterable[str] | None = None,
        reports: Iterable[str] | None = None,
        modes: Iterable[str] | None = None,
    ) -> Comparison:
        """A comparison showing only these scores / report labels / modes (Holm family shrinks)."""
        names = [self.aligned.score_names[self.aligned.score_index(s)] for s in scores or ()]
        keep_r, keep_m = set(reports or ()), set(modes or ())
        variants = [
            v
            for v in self._variants
            if (not keep_r or v.report in keep_r) and (not keep_m or v.mode in keep_m)
        ]
        if not variants:
            raise ValueError("select() left no variant to compare")
        baseline = self.baseline
        gone = (
            baseline not in variants
            if isinstance(baseline, Variant)
            else all(v.report != baseline for v in variants)
        )
        if gone:
            baseline = None  # type: ignore[assignment]  # the default baseline
        return self._copy(scores=names or self._scores, variants=variants, baseline=baseline)

    def with_baseline(self, baseline: str | Variant | tuple[str, str]) -> Comparison:
        """The same comparison against another baseline (a report label or a variant)."""
        return self._copy(baseline=baseline)

    def pivot(self) -> Comparison:
        """Swap the table's axes: variants as rows, scores as columns."""
        return self._copy(pivoted=not self.pivoted)

    # -- what is compared -------------------------------------------------------------------

    @property
    def labels(self) -> list[str]:
        """Report labels, in input order."""
        return list(dict.fromkeys(v.report for v in self._variants))

    @property
    def modes(self) -> list[str]:
        """Query modes, in first-seen order."""
        return list(dict.fromkeys(v.mode for v in self._variants))

    @property
    def variants(self) -> list[Variant]:
        """The columns of the table: report label × query mode."""
        return list(self._variants)

    @property
    def score_names(self) -> list[str]:
        """Numeric scores compared (text-valued scores are listed in ``notes()``)."""
        return list(self._scores)

    @property
    def primary_score(self) -> str:
        """The score headlines use (``analysis.headline``: nDCG@10 when present, ...)."""
        return headline_score(self._scores) or ""

    def variant(self, name: str | Variant | tuple[str, str]) -> Variant:
        """A variant from its name ``"label · mode"``, a (label, mode) tuple, or a Variant."""
        if isinstance(name, tuple) and not isinstance(name, Variant):
            name = Variant(*name)
        return self.aligned.variants[self.aligned.variant_index(name)]

    def _resolve_baseline(self, baseline: Any) -> Variant | str:
        if baseline is None:
            labels = self.labels
            return labels[0] if len(labels) > 1 else self._variants[0]
        if isinstance(baseline, str) and baseline in self.labels:
            return baseline
        try:
            return self.variant(baseline)
        except KeyError:
            raise KeyError(
                f"baseline {baseline!r} is neither a report label ({', '.join(self.labels)}) "
                f"nor a variant ({', '.join(v.name for v in self._variants)})"
            ) from None

    def _variants_of(self, label: str) -> list[Variant]:
        return [v for v in self._variants if v.report == label]

    def benchmark_of(self, variant: Any) -> str:
        """The benchmark key (name:version:split) of a variant or report label."""
        return self.reports[_label_of(self, variant)].benchmark.key

    def paired(self, a: Any, b: Any) -> bool:
        """True when a and b can be paired case by case: both run on the same benchmark."""
        return self.benchmark_of(a) == self.benchmark_of(b)

    def baseline_of(self, variant: Variant) -> Variant | None:
        """The (first) variant ``variant`` is compared with (None for a baseline itself, or
        when nothing pairs with it: see ``analysis._pairing``)."""
        return next((a for a, b in self.pairs() if b == variant), None)

    def pairs(self) -> list[tuple[Variant, Variant]]:
        """The comparisons shown: (baseline, variant), paired as ``analysis._pairing`` says (a
        one-mode system against each mode of the others; mode by mode where names match)."""
        return comparison_pairs(self._variants, self.baseline, self.paired)

    # -- frames -----------------------------------------------------------------------------

    def values(self, score: str) -> pd.DataFrame:
        """Per-case values of one score: cases × variants (NaN = missing, failed or skipped)."""
        s = self.aligned.score_index(score)
        cols = [self.aligned.variant_index(v) for v in self._variants]
        return pd.DataFrame(
            self.aligned.values[s][:, cols],
            columns=[v.name for v in self._variants],
            index=pd.Index(self.aligned.case_ids, name="case_id"),
        )

    def summary(self, by: SliceKey | None = None) -> pd.DataFrame:
        """Per variant and score: mean, n, std, 95% CI, pass rate, skipped, errors, missing cases.

        Same conventions as ``evaluators.aggregation.summarize`` (skipped and failed scores
        excluded and counted, t-based CI), vectorised over the aligned matrices. ``by`` (a
        case label or metadata key): the same per slice, in a first ``slice`` column.
        """
        if by is not None:
            from heta_notebook.analysis._interaction import summary_by

            return summary_by(self, by)
        return self._summary.copy()

    @cached_property
    def _summary(self) -> pd.DataFrame:
        al = self.aligned
        s_idx = [al.score_index(s) for s in self._scores]
        v_idx = [al.variant_index(v) for v in self._variants]
        stats_ = summary_stats(al.values, al.passed, self.confidence, s_idx, v_idx)
        missing = self._missing_cases(queries=False)  # counts only: no query lookup
        n_missing = missing[missing["status"] == "missing"].groupby("variant").size()
        rows = []
        for j, v in enumerate(self._variants):
            for i, score in enumerate(self._scores):
                skipped = int(al.counts["n_skipped"][s_idx[i], v_idx[j]])
                errors = int(al.counts["n_error"][s_idx[i], v_idx[j]])
                if stats_["n"][i, j] == 0 and not skipped and not errors:
                    continue  # this variant never reported this score
                rows.append(
                    {
                        "variant": v.name,
                        "report": v.report,
                        "query_mode": v.mode,
                        "score": score,
                        **{k: a[i, j] for k, a in stats_.items()},
                        "n_skipped": skipped,
                        "n_error": errors,
                        "n_missing": int(n_missing.get(v.name, 0)),
                    }
                )
        return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)

    def bounds(self) -> pd.DataFrame:
        """Per variant, each compared score with its upper bound: ``score``, ``upper_score``,
        ``lower`` (trec_eval's mean), ``upper`` (unjudged as relevant), ``condensed``; as
        ``report.frames().bounds()``. Empty without upper bounds (docs/labels.md)."""
        return comparison_bounds(self)

    def table(self, stat: str = "mean") -> pd.DataFrame:
        """Scores × variants of one summary statistic (``mean``, ``n``, ``ci_low``, ...)."""
        table = self.summary().pivot(index="score", columns="variant", values=stat)
        table = table.reindex(index=self._scores, columns=[v.name for v in self._variants])
        return table.T if self.pivoted else table

    def deltas(self, score: str, a: Any = None, b: Any = None) -> pd.DataFrame:
        """Per-case differences (variant − baseline) of ``score`` for the pairs shown, or a vs b.

        Long format: case_id, baseline, variant, baseline_value, value, delta; cases without
        a paired value are left out here and listed by ``missing_cases()``.
        """
        pairs = self._delta_pairs(a, b)
        s = self.aligned.score_index(score)
        parts = []
        for base, v in pairs:
            x = self.aligned.values[s][:, self.aligned.variant_index(base)]
            y = self.aligned.values[s][:, self.aligned.variant_index(v)]
            ok = ~(np.isnan(x) | np.isnan(y))
            parts.append(
                pd.DataFrame(
                    {
                        "case_id": self.aligned.case_ids[ok],
                        "baseline": base.name,
                        "variant": v.name,
                        "baseline_value": x[ok],
                        "value": y[ok],
                        "delta": y[ok] - x[ok],
                    }
                )
            )
        columns = ["case_id", "baseline", "variant", "baseline_value", "value", "delta"]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)

    def _delta_pairs(self, a: Any, b: Any) -> list[tuple[Variant, Variant]]:
        """``deltas``' pairs: a vs b, a vs every variant, every variant's baseline vs b, or
        the pairs shown; a pair across benchmarks is refused by name."""
        if a is None and b is None:
            return self.pairs()
        if a is not None and b is not None:
            pairs = [(self.variant(a), self.variant(b))]
        elif a is not None:
            base = self.variant(a)
            pairs = [(base, v) for v in self._variants if v != base and self.paired(base, v)]
        else:
            target = self.variant(b)
            maybe = self.baseline_of(target)
            pairs = [(maybe, target)] if maybe is not None else []
        for x, y in pairs:
            if not self.paired(x, y):
                raise ValueError(
                    f"{x.name} ({self.benchmark_of(x)}) and {y.name} ({self.benchmark_of(y)}) "
                    "ran on different benchmarks: their cases do not pair"
                )
        return pairs

    def significance(self, all_pairs: bool = False, by: Any = ...) -> pd.DataFrame:
        """Per pair shown and score: mean delta, bootstrap CI, p of the comparison's test (raw
        and Holm), W/T/L, and the ``test``, Holm ``family`` and ``family_size`` of each row.

        ``all_pairs=True`` tests every pair of variants instead (each in the Holm family).
        ``by`` (default: the comparison's ``by``) tests each slice: one row per slice × score ×
        pair, in a first ``slice`` column, every slice inside the Holm family.
        """
        by = self.by if by is ... else by
        if all_pairs:
            pairs = [(a, b) for a, b in combinations(self._variants, 2) if self.paired(a, b)]
            return self.test_pairs(pairs, self._scores, by=by)
        if by is not None:
            return self.test_pairs(self.pairs(), self._scores, by=by)
        return self._significance.copy()

    @cached_property
    def _significance(self) -> pd.DataFrame:
        return self.test_pairs(self.pairs(), self._scores)

    def test_pairs(
        self, pairs: Sequence[tuple[Any, Any]], scores: Sequence[str], by: SliceKey | None = None
    ) -> pd.DataFrame:
        """Run the paired tests for any pairs × scores (× slices of ``by``; Holm across exactly
        these rows)."""
        pairs = [(self.variant(a), self.variant(b)) for a, b in pairs]
        s_idx = [self.aligned.score_index(s) for s in scores]
        a_idx = [self.aligned.variant_index(a) for a, _ in pairs]
        b_idx = [self.aligned.variant_index(b) for _, b in pairs]
        width = len(pairs)  # column i·width + j: score i, pair j
        d = np.empty((len(self.aligned.case_ids), len(s_idx) * width))
        for i, s in enumerate(s_idx):  # one score at a time: no copy of the whole cube
            values = self.aligned.values[s]  # cases × variants
            d[:, i * width : (i + 1) * width] = values[:, b_idx] - values[:, a_idx]
        masks: list[Any] = self.slice_masks(by) if by is not None else [(None, slice(None))]
        if by is not None:  # one block of columns per slice, NaN outside it
            d = np.concatenate([np.where(m[:, None], d, np.nan) for _, m in masks], axis=1)
        result = stats.paired_test(
            d,
            n_resamples=self.n_resamples,
            confidence=self.confidence,
            seed=self.seed,
            method=self.method,
            test=self.test,
            alternative=self.alternative,
        )
        frame = significance_frame(self, pairs, scores, result, masks, self.test, self.family)
        return _with_statistics(frame, d, self.correction, self.alternative, self.confidence)

    def slice_masks(self, by: SliceKey) -> list[tuple[str, np.ndarray]]:
        """(slice, mask over the aligned cases) per slice of ``by``, in first-seen order."""
        labels = case_slices(self.reports, list(self.aligned.case_ids), by)
        return [(name, labels == name) for name in dict.fromkeys(labels.tolist())]

    def missing_cases(self) -> pd.DataFrame:
        """Cases absent from a variant (``missing``) or whose query failed (``query error``).

        A case counts as missing from a variant when another variant of the same comparison
        has it. These cases have no pair and are left out of deltas and tests.
        """
        return self._missing_cases(queries=True)

    def _missing_cases(self, queries: bool) -> pd.DataFrame:
        """``missing_cases()``; without ``queries`` the query column is None (the summary
        and notes only count cases, and looking queries up reads every report's queries)."""
        rows = []
        al = self.aligned
        cols = [al.variant_index(v) for v in self._variants]
        seen = al.present[:, cols].any(axis=1)
        for v, j in zip(self._variants, cols, strict=True):
            own = al.rows_of(self.benchmark_of(v))  # another benchmark's cases are not missing
            for status, mask in (
                ("missing", seen & own & ~al.present[:, j]),
                ("query error", al.failed[:, j]),
            ):
                for case_id in al.case_ids[mask]:
                    rows.append(
                        (
                            v.name,
                            v.report,
                            v.mode,
                            case_id,
                            al.queries.get(case_id) if queries else None,
                            status,
                        )
                    )
        columns = ["variant", "report", "query_mode", "case_id", "query", "status"]
        return pd.DataFrame(rows, columns=columns)

    # -- per-case access (explorer) ---------------------------------------------------------

    def case_result(self, variant: Any, case_id: str) -> EvaluationCaseResult | None:
        """The case result of ``case_id`` under ``variant`` (None when it is missing)."""
        v = self.variant(variant)
        row = self.aligned.rows.get((self.aligned.variant_index(v), case_id))
        return None if row is None else self.reports[v.report].case_results[row]

    def abstentions(self) -> pd.DataFrame:
        """Per variant: responses that abstained (count and share of its case results) and,
        where the benchmark expects abstentions (SQuAD 2.0's unanswerable questions), how
        many of those it abstained on (``correct``) and how often it abstained on an
        answerable case (``on_answerable``)."""
        from heta_notebook.analysis._abstentions import variant_abstentions

        return variant_abstentions(self)

    def evidence_changes(self, a: Any, b: Any) -> pd.DataFrame:
        """Per case and expected evidence item: matched under a, under b, and the change.

        ``change`` is ``gained`` (b found what a missed), ``lost`` (a found, b missed) or ``same``.
        """
        va, vb = self._delta_pairs(a, b)[0]  # a pair across benchmarks is refused
        ea, eb = self._evidence(va), self._evidence(vb)
        both = set(ea["case_id"]) & set(eb["case_id"])  # a missing case is not "lost" evidence
        ea, eb = ea[ea["case_id"].isin(both)], eb[eb["case_id"].isin(both)]
        merged = ea.merge(eb, on=["case_id", "label"], how="outer", suffixes=("_a", "_b"))
        merged["matched_a"] = merged["matched_a"].fillna(False).astype(bool)
        merged["matched_b"] = merged["matched_b"].fillna(False).astype(bool)
        change = np.where(
            merged["matched_b"] & ~merged["matched_a"],
            "gained",
            np.where(merged["matched_a"] & ~merged["matched_b"], "lost", "same"),
        )
        return merged.assign(change=change)

    def misses(self, by: SliceKey | None = None) -> pd.DataFrame:
        """Miss-class deltas per (baseline, variant): counts under a and b (``analysis._misses``)."""
        from heta_notebook.analysis._misses import comparison_misses

        return comparison_misses(self, by=by)

    def _evidence(self, v: Variant) -> pd.DataFrame:
        frame = self.frames(v.report).evidence()
        frame = frame[frame["query_mode"] == v.mode]
        return frame[["case_id", "label", "matched", "rank"]].drop_duplicates(["case_id", "label"])

    def verdict_flips(self, score: str, a: Any, b: Any) -> pd.DataFrame:
        """Cases whose ``passed`` verdict on ``score`` differs between a and b."""
        s = self.aligned.score_index(score)
        ia, ib = (
            self.aligned.variant_index(self.variant(a)),
            self.aligned.variant_index(self.variant(b)),
        )
        pa, pb = self.aligned.passed[s][:, ia], self.aligned.passed[s][:, ib]
        flip = ~np.isnan(pa) & ~np.isnan(pb) & (pa != pb)
        return pd.DataFrame(
            {
                "case_id": self.aligned.case_ids[flip],
                "passed_a": pa[flip] == 1,
                "passed_b": pb[flip] == 1,
            }
        )

    # -- recipes ----------------------------------------------------------------------------

    def manifest_diff(self, a: str | None = None, b: str | None = None) -> pd.DataFrame:
        """Recipe-manifest keys (flattened, dotted) whose values differ: key × report label.

        With ``a`` and ``b`` (report labels or variants), only those two reports.
        """
        labels = self.labels if a is None else [_label_of(self, a), _label_of(self, b)]
        flat = {label: flatten(_manifest(self.reports[label])) for label in labels}
        keys = list(dict.fromkeys(k for f in flat.values() for k in f))
        rows = {k: [flat[label].get(k, "—") for label in labels] for k in keys}
        differ = [
            k
            for k, vals in rows.items()
            if len({json.dumps(v, sort_keys=True, default=str) for v in vals}) > 1
        ]
        meaningful = [k for k in differ if k.split(".")[-1] not in _IGNORED_MANIFEST_KEYS]
        keys = meaningful or differ
        index = pd.Index(keys, name="key")  # object dtype: a null stays None, never NaN
        return pd.DataFrame([rows[k] for k in keys], columns=labels, index=index, dtype=object)

    def change_description(self, a: Variant, b: Variant, max_keys: int = 3) -> str:
        """What differs from a to b: ``"chunking.size 100 → document; mode bm25 → dense"``."""
        parts = []
        if a.report != b.report:
            flat = [flatten(_manifest(self.reports[v.report])) for v in (a, b)]
            changes = relevant_changes(setting_changes(*flat), [a.mode, b.mode])
            parts += [f"{k} {setting_text(x)} → {setting_text(y)}" for k, x, y in changes]
            if len(parts) > max_keys:
                parts = parts[:max_keys] + [f"+{len(changes) - max_keys} more"]
            if not parts:  # same settings, or different systems: name the reports
                parts = [f"{a.report} → {b.report}"]
        if a.mode != b.mode:
            parts.append(f"mode {a.mode} → {b.mode}")
        return "; ".join(parts) or "identical setup"

    def headline(self, score: str | None = None, show_mode: bool | None = None) -> list[str]:
        """One line per comparison shown, named by labels (``analysis._pairing.pair_name``): the
        delta of ``score``, its Holm p, the test and the family (``"mine → bm25: ndcg@10 +0.050
        (p<0.01, paired t-test, Holm over 9 pairs)"``); what changed is ``change_description``.

        With several modes a same-mode line starts with ``[mode]`` (``show_mode=False`` drops it).
        """
        score = score or self.primary_score
        show_mode = len(self.modes) > 1 if show_mode is None else show_mode
        sig = self._significance
        note = self.test_note(score, of_score=False)
        lines = []
        for base, v in self.pairs():
            at = (
                (sig["score"] == score)
                & (sig["variant"] == v.name)
                & (sig["baseline"] == base.name)
            )
            row = sig[at].iloc[0]
            result = (
                f"{format_delta(row['delta'])} ({format_p(row['p_adjusted'])}, {note})"
                if row["n_pairs"]
                else "no paired cases"
            )
            mode = f"[{v.mode}] " if show_mode and base.mode == v.mode else ""
            lines.append(f"{mode}{pair_name(base, v)}: {score} {result}")
        return lines

    def corrected(self, score: str | None = None, *, labels: Any = None) -> pd.DataFrame:
        """Corrected means per variant and paired corrected differences from the baseline
        (judge labels rectified by people's; ``analysis._corrected``, docs/labels.md)."""
        from heta_notebook.analysis._corrected import corrected_table

        return corrected_table(self, score or self.primary_score, labels=labels)

    def test_note(self, score: str | None = None, *, by: Any = None, of_score: bool = True) -> str:
        """The test and Holm family behind ``score``'s p-values, in words:
        ``"Wilcoxon signed-rank test, Holm over 9 pairs of beir_ndcg@10"``.

        ``by`` (a slice key) describes the sliced table's family instead of the overall one.
        """
        score = score or self.primary_score
        sig = self._significance if by is None else self.significance(by=by)
        text = describe_test(sig, self.test, self.family, score, of_score=of_score)
        return text.replace(", Holm over", f", {options_.corrected_over(self.correction)}", 1)

    def depth_notes(self) -> list[str]:
        """Reports whose scores cut deeper than they retrieved (``schema._status``), one note
        per identical sentence."""
        from heta_notebook.schema._status import depth_line

        same: dict[str, list[str]] = {}
        for label, report in self.reports.items():
            line = depth_line(report.metadata)
            if line:
                same.setdefault(line, []).append(label)
        return [f"{', '.join(labels)}: {line}." for line, labels in same.items()]

    def notes(self) -> list[str]:
        """Plain-language caveats: missing cases, failed queries, modes not run, text scores,
        scores cut deeper than their run retrieved, how scores count unjudged documents
        (when condensed scores or bounds are compared), benchmarks that do not pair."""
        notes = missing_notes(self._missing_cases(queries=False))
        notes += pairing_notes(self._variants, self.baseline, self.pairs())  # modes not paired
        if self.aligned.text_scores:
            notes.append(f"text-valued scores not compared: {', '.join(self.aligned.text_scores)}.")
        notes += self.depth_notes()
        notes += judged_notes(self.reports)  # judged@k differences bias a comparison
        notes += bounds_notes(self)  # condensed scores or bounds: each score's convention
        from heta_notebook.analysis._corrected import corrected_notes

        notes += corrected_notes(self)  # people's labels: corrected means per variant
        keys = {r.benchmark.key for r in self.reports.values()}
        if len(keys) > 1:
            notes.append(
                f"different benchmarks side by side, unpaired: {', '.join(sorted(keys))}; "
                "tests pair cases only within one benchmark."
            )
        return notes

    # -- doors into display -----------------------------------------------------------------

    @property
    def plot(self) -> Any:
        """Plotly figures: ``.bars()``, ``.scatter(score, a, b)``, ``.deltas(score)``, ``.at_k("ndcg")``."""
        from heta_notebook.display._comparison_figures import ComparisonPlots

        return ComparisonPlots(self)

    def explore(
        self,
        a: Any = None,
        b: Any = None,
        score: str | None = None,
        *,
        filter: str = "all",  # noqa: A002 - the explorer's name for it
        label: str | None = None,
        search: str = "",
        scope: str = "either",
        miss_a: str | None = None,
        miss_b: str | None = None,
        page_size: int = 15,
        max_cases: int | None = 20_000,
    ) -> Any:
        """Cases of variant ``a`` and ``b`` side by side, biggest change in ``score`` first.

        ``filter``: ``"all"``, ``"changed"``, ``"better"``, ``"worse"``, ``"lost"`` (evidence
        found by A, missed by B), ``"gained"``, ``"flipped"``; ``label`` keeps one slice
        (``"qlen=short"``); ``search`` looks in queries, ids, evidence and reasons under A or B
        as ``scope`` says (``"either"``, ``"both"``, ``"b_not_a"``, ``"a_not_b"``); ``miss_a`` /
        ``miss_b`` keep cases with an evidence item of that miss class under A / B (``"split"``,
        ``"beyond k"``, ...: ``report.misses()``). An option the comparison does not have
        raises ``ExplorerOptionError`` (a ValueError)."""
        from heta_notebook.display._comparison_explorer import ComparisonExplorer

        options: dict[str, Any] = {
            "filter": filter,
            "label": label,
            "search": search,
            "scope": scope,
        }
        options.update(miss_a=miss_a, miss_b=miss_b)
        return ComparisonExplorer(self, a, b, score, page_size, max_cases=max_cases, **options)

    def to_html(self, path: str | PathLike[str] | None = None, **options: Any) -> Any:
        """A self-contained offline page (table, charts, the cases side by side): written to
        ``path``, whose Path is returned; without a path, the page (``HtmlPage``). Options:
        ``max_cases``, ``figures``, ``title``, ``explore`` (the explorer's options)."""
        from heta_notebook.display._export import comparison_to_html

        return comparison_to_html(self, path, **options)

    def _repr_html_(self) -> str:
        from heta_notebook.display._comparison import comparison_html

        return comparison_html(self)

    def to_latex(self, scores: Sequence[str] | None = None, **options: Any) -> str:
        """A booktabs LaTeX table for a paper: variants × scores, best bold, significance
        markers, a caption stating the test, correction, tie rule and ``missing=`` convention.

        Options: ``decimals`` (3); ``markers``: ``"direction"`` (↑/↓ vs the baseline, default),
        ``"letters"`` (ranx-style: the rows a row beats), ``"tukey"`` (Tukey HSD grouping
        letters) or None; ``alpha`` (0.05); ``labels`` (score → shown name); ``caption``
        (replaces the generated one); ``label`` (``\\label{...}``). An unknown option is
        refused with the valid ones."""
        from heta_notebook.display._tables import check_options, comparison_table

        check_options(comparison_table, options)
        return comparison_table(self, scores, **options).to_latex()

    def to_markdown(self, scores: Sequence[str] | None = None, **options: Any) -> str:
        """The same table as Markdown (GitHub pipe table, caption below); the options of
        :meth:`to_latex`."""
        from heta_notebook.display._tables import check_options, comparison_table

        check_options(comparison_table, options)
        return comparison_table(self, scores, **options).to_markdown()

    def __repr__(self) -> str:
        base = self.baseline.name if isinstance(self.baseline, Variant) else self.baseline
        lines = [
            f"<Comparison of {len(self.labels)} report(s) × {len(self.modes)} mode(s), "
            f"{len(self.aligned.case_ids)} cases, baseline {base!r}>"
        ]
        if self._scores and self.pairs():
            lines.append(f"  {self.test_note()}; bootstrap {self.confidence:.0%} CI")
            lines += [f"  {line}" for line in self.headline()]
        lines += self._abstention_lines()
        lines += [f"  note: {note}" for note in self.notes()]
        return "\n".join(lines)

    def _abstention_lines(self) -> list[str]:
        from heta_notebook.analysis._abstentions import abstention_line, any_abstained

        table = self.abstentions() if any_abstained(self) else None
        if table is None or not table["abstained"].any():
            return []
        return [f"  {r.variant}: {abstention_line(r)}" for r in table.itertuples(index=False)]


# --------------------------------------------------------------------------- helpers


def _label_of(comparison: Comparison, item: Any) -> str:
    if isinstance(item, str) and item in comparison.reports:
        return item
    return comparison.variant(item).report


def _manifest(report: EvaluationReport) -> Any:
    if report.recipe_manifest:
        return report.recipe_manifest
    return report.knowledge_base_manifest  # heta-framework reports: the KB manifest


__all__ = ["Comparison", "compare"]
