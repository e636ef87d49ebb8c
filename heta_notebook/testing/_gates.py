"""Evaluation as a test: regression gates for pytest and CI.

``assert_no_regression(report, baseline)`` fails only on a drop that is *significant* (the
comparison's paired test, ``test=``: sign-flip permutation by default, paired t-test or
Wilcoxon signed-rank; Holm-corrected within each score over the modes × slices checked, or
over every check with ``family="all"``) and *larger than* ``max_drop``; noise passes. The failure message is a table (score, mode,
baseline → new, delta with its CI, p, example cases that lost evidence or flipped verdict),
and the comparison page is written next to the test output (its path is in the message).
``assert_scores(report, {"beir_ndcg@10": ">= 0.33"})`` checks absolute floors.

Both are plain functions (any test runner); ``heta_notebook.testing.pytest_plugin`` adds a baseline
fixture, ``--heta-update-baseline`` and a terminal summary; ``python -m heta_notebook gate``
gives CI an exit code (0 pass, 1 regression, 2 unusable input).
"""

from __future__ import annotations

import math
import numbers
import operator
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from heta_notebook.schema._records import EvaluationReport
from heta_notebook.testing._gate_power import check_power, power_lines, power_rows

BASELINE, NEW = "baseline", "new"
MAX_EXAMPLES = 3
GATE_DIR_ENV = "HETA_GATE_DIR"
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
}


class GateInputError(ValueError):
    """The gate cannot judge: different benchmarks, missing scores or modes, unreadable input."""


class RegressionError(AssertionError):
    """A significant drop larger than ``max_drop``; ``result`` holds the rows and the page."""

    def __init__(self, message: str, result: GateResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class GateResult:
    """What a gate found: one row per score × mode (× slice), the verdict and the page."""

    kind: str  # "regression" or "floor"
    rows: pd.DataFrame
    passed: bool
    page: Path | None = None
    notes: tuple[str, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def failures(self) -> pd.DataFrame:
        """The rows that fail the gate."""
        return self.rows[self.rows["failed"]]

    def message(self) -> str:
        """The readable table of a failure (or a one-line pass)."""
        return format_message(self)

    def to_markdown(self) -> str:
        """A Markdown summary for a CI step summary."""
        return format_markdown(self)


# --------------------------------------------------------------------------- the gates


def assert_no_regression(
    report: Any,
    baseline: Any,
    scores: Sequence[str] = ("beir_ndcg@10",),
    max_drop: float = 0.0,
    alpha: float = 0.05,
    modes: Sequence[str] | None = None,
    by: Any = None,
    *,
    output_dir: str | os.PathLike[str] | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    method: str = "auto",
    test: str = "permutation",
    family: str = "score",
    correction: str = "holm",
    min_power: float | None = None,
    detect: float | None = None,
    corrected: bool = False,
    labels: Any = None,
) -> GateResult:
    """Fail on a significant drop (paired ``test``, Holm per score over modes × slices) > ``max_drop``.

    Raises ``RegressionError`` (an AssertionError) with the table and the comparison page's
    path; ``GateInputError`` when the reports cannot be compared. Returns the result otherwise.
    ``test`` (``"permutation"``, ``"t-test"``, ``"wilcoxon"``), ``family`` (``"score"`` or
    ``"all"``: one Holm family over every score too) and ``method`` (the null
    distributions) are those of :func:`heta_notebook.compare`, and ``correction``
    (``"holm"``, ``"bh"``, ``"bonferroni"``, ``"none"``). The result always states the drop
    the gate can detect with 80% power; ``min_power`` (with ``detect``, the drop to guard,
    default ``max_drop``) refuses, as unusable input, a gate too small to see it.
    ``corrected=True`` tests the corrected difference instead (judge labels rectified by
    people's on the same queries, a normal test; ``analysis._corrected``, docs/labels.md).
    """
    __tracebackhide__ = True  # pytest shows the caller's line and our message, not this body
    result = check_regression(
        report,
        baseline,
        scores=scores,
        max_drop=max_drop,
        alpha=alpha,
        modes=modes,
        by=by,
        output_dir=output_dir,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
        test=test,
        family=family,
        correction=correction,
        min_power=min_power,
        detect=detect,
        corrected=corrected,
        labels=labels,
    )
    _notify(result)
    if not result.passed:
        raise RegressionError(result.message(), result)
    return result


def assert_scores(
    report: Any,
    floors: Mapping[str, str | float],
    modes: Sequence[str] | None = None,
    *,
    corrected: bool = False,
    labels: Any = None,
) -> GateResult:
    """Fail when a score's mean misses its floor in any mode: ``{"beir_ndcg@10": ">= 0.33"}``.

    A bare number means ``>=``. Means are over scored cases (skipped and failed left out).
    ``corrected=True`` gates the corrected mean (judge labels rectified by people's,
    docs/labels.md) instead; ``labels`` is the report's label set when not in this session.
    """
    __tracebackhide__ = True
    result = check_scores(report, floors, modes=modes, corrected=corrected, labels=labels)
    _notify(result)
    if not result.passed:
        raise AssertionError(result.message())
    return result


def check_regression(
    report: Any,
    baseline: Any,
    scores: Sequence[str] = ("beir_ndcg@10",),
    max_drop: float = 0.0,
    alpha: float = 0.05,
    modes: Sequence[str] | None = None,
    by: Any = None,
    *,
    output_dir: str | os.PathLike[str] | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    write_page: bool = True,
    method: str = "auto",
    test: str = "permutation",
    family: str = "score",
    correction: str = "holm",
    min_power: float | None = None,
    detect: float | None = None,
    corrected: bool = False,
    labels: Any = None,
) -> GateResult:
    """:func:`assert_no_regression` without raising on a regression (the CLI's engine)."""
    from heta_notebook.analysis import _stats as stats
    from heta_notebook.analysis._compare import compare
    from heta_notebook.analysis._options import CORRECTIONS, check_choice

    _check_settings(max_drop, alpha, n_resamples)
    new, old = load_report(report, "report"), load_report(baseline, "baseline")
    if old.benchmark.key != new.benchmark.key:
        raise GateInputError(
            f"different benchmarks: baseline is {old.benchmark.key}, the new report is "
            f"{new.benchmark.key}; a gate compares the same cases (name:version:split)"
        )
    try:
        stats.check_test(test)
        stats.check_family(family)
        check_choice("correction", correction, CORRECTIONS)
    except ValueError as exc:
        raise GateInputError(str(exc)) from None
    scores = _as_list(scores, "scores")
    comparison = compare(
        {BASELINE: old, NEW: new},
        baseline=BASELINE,
        by=by,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
        test=test,
        family=family,
        correction=correction,
    )
    modes = _check_inputs(comparison, old, new, scores, modes)
    comparison = comparison.select(scores=scores, modes=modes)
    sig = comparison.significance()
    if corrected:
        if by is not None:
            raise GateInputError("corrected=True tests whole reports: drop by=")
        sig = _corrected(
            "corrected_significance", comparison, sig, labels=labels, correction=correction
        )
    rows = _regression_rows(comparison, sig, max_drop, alpha)
    powers = power_rows(comparison, sig, alpha, correction)
    if min_power is not None:
        check_power(powers, min_power, detect if detect is not None else max_drop)
    notes = tuple(comparison.notes()) + tuple(power_lines(powers, alpha))
    if corrected:
        notes += (CORRECTED_NOTE,)
    settings = {
        "scores": scores,
        "modes": modes,
        "max_drop": max_drop,
        "alpha": alpha,
        "by": by if isinstance(by, str) or by is None else "custom",
        "method": method,
        "test": test,
        "family": family,
        "correction": correction,
        "corrected": corrected,
        "baseline": old.report_id,
        "new": new.report_id,
    }
    result = GateResult("regression", rows, not rows["failed"].any(), None, notes, settings)
    if write_page:
        page = write_gate_page(result, comparison, gate_dir(output_dir), _page_stem(old, new))
        result = GateResult(result.kind, rows, result.passed, page, notes, settings)
    return result


def _corrected(name: str, *args: Any, **options: Any) -> Any:
    """``analysis._corrected.<name>``, its refusals (no human labels, ...) as gate input errors."""
    from heta_notebook.analysis import _corrected as corrected

    try:
        return getattr(corrected, name)(*args, **options)
    except ValueError as exc:
        raise GateInputError(f"corrected=True: {exc}") from None


CORRECTED_NOTE = (
    "corrected=True: means, deltas and p are prediction-powered (judge labels rectified by "
    "people's on the queries they labelled in full; a normal test on the paired difference); "
    "the power lines and the comparison page describe the uncorrected test"
)
MAX_RESAMPLES = 10_000_000  # beyond this a null distribution does not fit in memory


def _check_settings(max_drop: float, alpha: float, n_resamples: int) -> None:
    """Refuse settings under which a gate could not fail (NaN compares False with every drop)."""
    if isinstance(max_drop, bool) or not (
        isinstance(max_drop, numbers.Real) and math.isfinite(max_drop) and max_drop >= 0
    ):  # True would read as 1.0: a gate that could never fail
        raise GateInputError(f"max_drop must be a finite number >= 0 (got {max_drop!r})")
    if not (isinstance(alpha, numbers.Real) and 0 < alpha < 1):
        raise GateInputError(f"alpha must be between 0 and 1, exclusive (got {alpha!r})")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral):
        raise GateInputError(f"n_resamples must be a whole number >= 1 (got {n_resamples!r})")
    if not 1 <= n_resamples <= MAX_RESAMPLES:
        raise GateInputError(
            f"n_resamples must be a whole number from 1 to {MAX_RESAMPLES:,} (got {n_resamples!r})"
        )


def check_scores(
    report: Any,
    floors: Mapping[str, str | float],
    modes: Sequence[str] | None = None,
    *,
    corrected: bool = False,
    labels: Any = None,
) -> GateResult:
    """:func:`assert_scores` without raising: one row per score × mode with its floor."""
    rep = load_report(report, "report")
    summary = rep.summary()
    if corrected:
        summary = _corrected("corrected_summary", rep, list(floors), labels=labels)
    wanted = list(modes) if modes is not None else list(dict.fromkeys(summary["query_mode"]))
    rows = []
    for name, rule in floors.items():
        op, bound = parse_floor(rule)
        picked = summary[summary["score"] == name]
        if picked.empty:
            raise GateInputError(_missing(f"score {name!r}", list(dict.fromkeys(summary["score"]))))
        for mode in wanted:
            row = picked[picked["query_mode"] == mode]
            if row.empty:
                raise GateInputError(
                    _missing(f"mode {mode!r} for {name!r}", list(picked["query_mode"]))
                )
            r = row.iloc[0]
            ok = bool(pd.notna(r["mean"]) and _OPS[op](float(r["mean"]), bound))
            rows.append(
                {
                    "score": name,
                    "mode": mode,
                    "mean": r["mean"],
                    "n": int(r["n"]),
                    "ci_low": r["ci_low"],
                    "ci_high": r["ci_high"],
                    "rule": f"{op} {bound:g}",
                    "failed": not ok,
                }
            )
    frame = pd.DataFrame(
        rows, columns=["score", "mode", "mean", "n", "ci_low", "ci_high", "rule", "failed"]
    )
    return GateResult(
        "floor",
        frame,
        not frame["failed"].any(),
        None,
        (),
        {"report": rep.report_id, "floors": dict(floors), "corrected": corrected},
    )


def parse_floor(rule: str | float) -> tuple[str, float]:
    """``">= 0.33"`` → (">=", 0.33); a bare number means ``>=``."""
    if isinstance(rule, (int, float)) and not isinstance(rule, bool):
        return ">=", float(rule)
    match = re.fullmatch(
        r"\s*(>=|<=|==|>|<)?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*", str(rule)
    )
    if not match:
        raise GateInputError(f"cannot read the floor {rule!r}; write e.g. '>= 0.33'")
    return match.group(1) or ">=", float(match.group(2))


# --------------------------------------------------------------------------- inputs


def load_report(source: Any, what: str = "report") -> EvaluationReport:
    """A report from a report, a run result, a ``report.json`` path or a folder holding one."""
    from heta_notebook.reports._resolve import resolve_report

    try:
        return resolve_report(source)
    except TypeError:
        raise GateInputError(
            f"{what}: cannot gate a {type(source).__name__}; pass a report or a path"
        ) from None
    except (ValueError, OSError) as exc:
        raise GateInputError(f"{what}: {exc}") from exc


def slim_report(report: EvaluationReport) -> EvaluationReport:
    """A copy without retrieved or cited texts and traces: what a committed baseline needs
    (scores, result ids, answers, evidence) at a fraction of the size."""
    results = []
    for r in report.case_results:
        response = r.response
        if response is not None and (
            response.trace
            or any(x.text for x in response.results)
            or any(c.text for c in response.citations)
        ):
            response = response.model_copy(
                update={
                    "results": tuple(x.model_copy(update={"text": ""}) for x in response.results),
                    "citations": tuple(
                        c.model_copy(update={"text": None}) for c in response.citations
                    ),
                    "trace": (),
                }
            )
            r = r.model_copy(update={"response": response})
        results.append(r)
    return report.model_copy(update={"case_results": tuple(results)})


def _check_inputs(
    comparison: Any,
    old: EvaluationReport,
    new: EvaluationReport,
    scores: list[str],
    modes: Sequence[str] | None,
) -> list[str]:
    """The modes to check (both reports' shared modes by default); every score must exist."""
    for label, rep in ((BASELINE, old), (NEW, new)):
        known = set(rep.score_names)
        for name in scores:
            if name not in known:
                raise GateInputError(
                    _missing(f"score {name!r} in the {label} report", list(rep.score_names))
                )
    numeric = set(comparison.score_names)
    text = [s for s in scores if s not in numeric]
    if text:
        raise GateInputError(f"score {text[0]!r} is not numeric; a gate compares numbers")
    by_label = {
        lab: {v.mode for v in comparison.variants if v.report == lab} for lab in (BASELINE, NEW)
    }
    shared = [m for m in comparison.modes if m in by_label[BASELINE] and m in by_label[NEW]]
    if modes is None:
        if not shared:
            raise GateInputError(
                "the reports share no query mode: "
                f"baseline {sorted(by_label[BASELINE])}, "
                f"new {sorted(by_label[NEW])}"
            )
        return shared
    modes = _as_list(modes, "modes")
    for mode in modes:
        if mode not in shared:
            raise GateInputError(_missing(f"mode {mode!r} in both reports", shared))
    return modes


def _as_list(values: Sequence[str] | str, what: str) -> list[str]:
    items = [values] if isinstance(values, str) else list(values)
    if not items:
        raise GateInputError(f"no {what} to check")
    return items


def _missing(what: str, known: Iterable[str]) -> str:
    return f"no {what} (known: {', '.join(known) or 'none'})"


# --------------------------------------------------------------------------- rows and examples


def _regression_rows(comparison: Any, sig: pd.DataFrame, max_drop: float, alpha: float):
    rows = []
    for r in sig.to_dict("records"):
        a, b = comparison.variant(r["baseline"]), comparison.variant(r["variant"])
        drop = -float(r["delta"]) if not math.isnan(r["delta"]) else 0.0
        p = r.get("p_adjusted", r["p_holm"])
        significant = bool(p < alpha) if not math.isnan(p) else False
        failed = significant and drop > 0 and drop > max_drop
        rows.append(
            {
                **({"slice": r["slice"]} if "slice" in r else {}),
                "score": r["score"],
                "mode": b.mode,
                "baseline_mean": r["baseline_mean"],
                "new_mean": r["variant_mean"],
                "delta": r["delta"],
                "ci_low": r["ci_low"],
                "ci_high": r["ci_high"],
                "p_value": r["p_value"],
                "p_holm": r["p_holm"],
                "p_adjusted": r.get("p_adjusted", r["p_holm"]),
                "p_method": r.get("p_method", ""),
                "test": r["test"],
                "family": r["family"],
                "family_size": r["family_size"],
                "n_pairs": r["n_pairs"],
                "wins": r["wins"],
                "losses": r["losses"],
                "failed": failed,
                "examples": _examples(comparison, r["score"], a, b, r.get("slice"))
                if failed
                else [],
            }
        )
    return pd.DataFrame(rows)


def _examples(comparison: Any, score: str, a: Any, b: Any, slice_: Any) -> list[str]:
    """A few cases that lost evidence or flipped verdict, among the largest per-case drops."""
    deltas = comparison.deltas(score, a, b)
    if slice_ is not None:
        mask = dict(comparison.slice_masks(comparison.by)).get(slice_)
        deltas = deltas[deltas["case_id"].isin(set(comparison.aligned.case_ids[mask]))]
    drops = deltas[deltas["delta"] < 0].sort_values("delta", kind="stable")
    flips = comparison.verdict_flips(score, a, b)
    flipped = set(flips[flips["passed_a"] & ~flips["passed_b"]]["case_id"])
    lines, plain = [], []
    for d in drops.head(_CANDIDATES).itertuples(index=False):
        change = f"{score} {d.baseline_value:.3f} → {d.value:.3f}"
        lost = _lost_evidence(comparison, a, b, d.case_id)
        if lost or d.case_id in flipped:
            what = [f"lost evidence {', '.join(lost[:3])}"] if lost else []
            what += ["verdict passed → failed"] if d.case_id in flipped else []
            lines.append(f"{d.case_id}: {'; '.join(what)} ({change})")
        else:
            plain.append(f"{d.case_id}: {change}")
    return (lines + plain)[:MAX_EXAMPLES]


_CANDIDATES = 20  # the largest drops looked at for lost evidence / flipped verdicts


def _lost_evidence(comparison: Any, a: Any, b: Any, case_id: str) -> list[str]:
    """Labels of expected evidence matched under ``a`` and missed under ``b`` for one case."""
    from heta_notebook.analysis._case_rows import case_evidence

    ra, rb = comparison.case_result(a, case_id), comparison.case_result(b, case_id)
    if ra is None or rb is None:
        return []
    found_b = {row["label"] for row in case_evidence(rb) if row["matched"]}
    return [
        str(row["label"])
        for row in case_evidence(ra)
        if row["matched"] and row["label"] not in found_b
    ]


# --------------------------------------------------------------------------- messages


def _fmt(value: Any, digits: int = 3) -> str:
    return (
        "–"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else f"{value:.{digits}f}"
    )


def _signed(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:+.3f}"


def _p(value: float) -> str:
    if math.isnan(value):
        return "–"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _table_rows(result: GateResult, only_failed: bool) -> tuple[list[str], list[list[str]]]:
    rows = result.failures if only_failed else result.rows
    if result.kind == "floor":
        header = ["score", "mode", "mean", "95% CI", "rule", "n", "status"]
        body = [
            [
                r["score"],
                r["mode"],
                _fmt(r["mean"]),
                f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]",
                r["rule"],
                str(r["n"]),
                "FAIL" if r["failed"] else "ok",
            ]
            for r in rows.to_dict("records")
        ]
        return header, body
    sliced = "slice" in result.rows.columns
    header = [
        *(["slice"] if sliced else []),
        "score",
        "mode",
        "baseline → new",
        "delta [95% CI]",
        f"p ({_SHORT.get(result.settings.get('correction', 'holm'), 'Holm')})",
        "W/L",
        "status",
    ]
    body = []
    for r in rows.to_dict("records"):
        status = "REGRESSION" if r["failed"] else "ok"
        body.append(
            [
                *([str(r["slice"])] if sliced else []),
                r["score"],
                r["mode"],
                f"{_fmt(r['baseline_mean'])} → {_fmt(r['new_mean'])}",
                f"{_signed(r['delta'])} [{_signed(r['ci_low'])}, {_signed(r['ci_high'])}]",
                _p(r.get("p_adjusted", r["p_holm"])),
                f"{r['wins']}/{r['losses']}",
                status,
            ]
        )
    return header, body


def _text_table(header: list[str], body: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body, strict=True)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, body)])


_SHORT = {"holm": "Holm", "bh": "BH", "bonferroni": "Bonferroni", "none": "raw"}


def _correction(result: GateResult) -> str:
    from heta_notebook.analysis._options import correction_text

    return correction_text(result.settings.get("correction", "holm"))


def _test_and_family(result: GateResult) -> str:
    """``"paired t-test, Holm over the 2 checks of each score"`` (``"over 4 checks"``: all)."""
    from heta_notebook.analysis._stats import TEST_NAMES

    s, rows = result.settings, result.rows
    name = "corrected (prediction-powered) z-test" if s.get("corrected") else TEST_NAMES[s["test"]]
    if s.get("correction", "holm") != "holm":
        return f"{name}, {_correction(result)} over {len(rows)} check(s)"
    checks = lambda n: f"{n} check" if n == 1 else f"{n} checks"  # noqa: E731
    per_score = rows.groupby("score", sort=False).size() if len(rows) else pd.Series()
    if s["family"] == "all" or len(per_score) <= 1:
        return f"{name}, Holm over {checks(len(rows))}"
    if per_score.nunique() == 1:
        return f"{name}, Holm over the {checks(int(per_score.iloc[0]))} of each score"
    sizes = ", ".join(f"{n} of {score}" for score, n in per_score.items())
    return f"{name}, Holm within each score ({sizes})"


def format_message(result: GateResult) -> str:
    """The failure message: what failed, a table, example cases, the page."""
    if result.kind == "floor":
        header, body = _table_rows(result, only_failed=False)
        verdict = "below their floor" if not result.passed else "at or above their floor"
        what = "corrected means" if result.settings.get("corrected") else "scores"
        return f"{what} {verdict}:\n{_text_table(header, body)}"
    s = result.settings
    if result.passed:
        head = (
            f"no significant regression beyond max_drop={s['max_drop']:g} "
            f"({len(result.rows)} checks, alpha={s['alpha']:g}, {_test_and_family(result)})"
        )
    else:
        head = (
            f"{len(result.failures)} significant regression(s) beyond "
            f"max_drop={s['max_drop']:g} ({_test_and_family(result)}, "
            f"alpha={s['alpha']:g}); "
            f"baseline {s['baseline']!r} → new {s['new']!r}"
        )
    header, body = _table_rows(result, only_failed=not result.passed)
    parts = [head, _text_table(header, body)]
    parts += [n for n in result.notes if n.startswith("at n = ")]
    for r in result.failures.to_dict("records"):
        if r["examples"]:
            where = f"{r['score']} · {r['mode']}" + (f" · {r['slice']}" if "slice" in r else "")
            parts.append(f"examples ({where}):\n" + "\n".join(f"  - {e}" for e in r["examples"]))
    if result.page is not None:
        parts.append(f"comparison page: {result.page}")
    return "\n".join(parts)


def format_markdown(result: GateResult) -> str:
    """The result as Markdown: a verdict line, the table, examples and notes."""
    header, body = _table_rows(result, only_failed=False)
    verdict = "✅ passed" if result.passed else "❌ failed"
    what = "Regression gate" if result.kind == "regression" else "Score floors"
    lines = [f"### {what}: {verdict}", ""]
    if result.kind == "regression":
        s = result.settings
        lines += [
            f"Baseline `{s['baseline']}` → new `{s['new']}`; {_test_and_family(result)}, "
            f"alpha {s['alpha']:g}, max drop {s['max_drop']:g}.",
            "",
        ]
    esc = lambda text: str(text).replace("|", "\\|")  # noqa: E731
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    lines += ["| " + " | ".join(map(esc, row)) + " |" for row in body]
    lines.append("")
    for r in result.failures.to_dict("records") if result.kind == "regression" else ():
        for example in r.get("examples") or ():
            lines.append(f"- `{esc(r['score'])}` · {esc(r['mode'])}: {esc(example)}")
    lines += [f"> {esc(note)}" for note in result.notes]
    if result.page is not None:
        lines.append(f"\nComparison page: `{result.page}`")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the page


def gate_dir(output_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where comparison pages go: ``output_dir``, the pytest plugin's folder, $HETA_GATE_DIR,
    else ``./heta-gates``."""
    if output_dir is not None:
        return Path(output_dir)
    if _LISTENERS and _LISTENERS[-1].gate_dir is not None:
        return Path(_LISTENERS[-1].gate_dir)
    return Path(os.environ.get(GATE_DIR_ENV) or "heta-gates")


def _page_stem(old: EvaluationReport, new: EvaluationReport) -> str:
    """The running test's id when under pytest, else ``gate-{new}-vs-{baseline}``."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    text = current or f"gate-{new.report_id}-vs-{old.report_id}"
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:150] or "gate"
    _PAGES[stem] = _PAGES.get(stem, 0) + 1
    return stem if _PAGES[stem] == 1 else f"{stem}-{_PAGES[stem]}"


_PAGES: dict[str, int] = {}


def write_gate_page(result: GateResult, comparison: Any, folder: Path, stem: str) -> Path:
    """The gate's table above the full comparison view, as one offline HTML page."""
    from heta_notebook.display._export import comparison_to_html
    from heta_notebook.display._html import table, tag

    header, body = _table_rows(result, only_failed=False)
    verdict = "passed" if result.passed else "FAILED"
    head = result.message().split("\n", 1)[0]
    examples = [
        tag("li", f"{r['score']} · {r['mode']}: {e}")
        for r in result.failures.to_dict("records")
        for e in r["examples"]
    ]
    gate = [
        tag("h2", f"Regression gate {verdict}"),
        tag("p", head),
        table(header, body),
        tag("ul", *examples) if examples else "",
    ]
    failed = result.failures.to_dict("records")
    explore: dict[str, Any] = (
        {"a": (BASELINE, failed[0]["mode"]), "b": (NEW, failed[0]["mode"])} if failed else {}
    )
    if failed:  # the explorer opens on the cases that regressed
        explore.update(score=failed[0]["score"], filter="worse")
    path = (folder / f"{stem}.html").resolve()
    title = f"heta gate · {stem}"
    return comparison_to_html(  # type: ignore[return-value]  # a path given: a Path back
        comparison, path, figures=False, title=title, head=gate, explore=explore
    )


# --------------------------------------------------------------------------- listeners (pytest)


@dataclass
class GateListener:
    """Collects the gates that ran (the pytest plugin's terminal summary) and sets the page folder."""

    gate_dir: Path | None = None
    records: list[tuple[str, GateResult]] = field(default_factory=list)


_LISTENERS: list[GateListener] = []


def _notify(result: GateResult) -> None:
    if _LISTENERS:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        _LISTENERS[-1].records.append((test, result))


def summary_line(result: GateResult) -> str:
    """One line per gate for a terminal: verdict, the worst delta, the page."""
    if result.kind == "floor":
        bad = result.failures
        what = f"{len(bad)} below floor" if len(bad) else f"{len(result.rows)} floors met"
        return f"{'PASS' if result.passed else 'FAIL'} {what}"
    rows = result.rows
    worst = rows.loc[rows["delta"].astype(float).idxmin()] if rows["delta"].notna().any() else None
    detail = (
        f"worst {worst['score']} · {worst['mode']} {_signed(float(worst['delta']))} "
        f"(p={_p(float(worst['p_holm']))})"
        if worst is not None
        else "no pairs"
    )
    page = f" → {result.page}" if result.page else ""
    return f"{'PASS' if result.passed else 'FAIL'} {len(rows)} checks, {detail}{page}"


__all__ = [
    "GateInputError",
    "GateResult",
    "RegressionError",
    "assert_no_regression",
    "assert_scores",
    "check_regression",
    "check_scores",
    "load_report",
    "parse_floor",
    "slim_report",
]
