"""The caveats a paper table's caption carries: queries per benchmark, the correction, the tie
rule (and a footnote where a marked cell moves under tie-aware scoring), the ``missing=``
convention and benchmarks without a baseline. Analysis computes the numbers; this module
only words them (``display._tables`` joins them into the caption)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.analysis._benchmarks import BenchmarkComparison
    from heta_notebook.analysis._compare import Comparison
    from heta_notebook.schema._records import EvaluationReport

TIE_RULES = {
    "trec_eval": "as trec_eval does (score descending, then document id descending)",
    "as_returned": "in the order each system returned them",
    "expected": "tie-aware (the expected value over the tied orders)",
}
MISSING = (
    'Queries without a relevant judged document are left out (missing="drop"; trec_eval -c '
    "would count them as 0)."
)


def correction_phrase(sig: pd.DataFrame) -> str:
    """``"Holm"``, ``"Benjamini–Hochberg (FDR)"``, ... from a significance frame."""
    from heta_notebook.analysis._options import correction_text

    if "correction" in sig and len(sig):
        return " / ".join(correction_text(str(c)) for c in dict.fromkeys(sig["correction"]))
    return "Holm"


def queries_sentence(bench: BenchmarkComparison, names: Mapping[str, str]) -> str:
    """``"Queries per benchmark: Cranfield 225, topics 6."`` (cases paired per benchmark)."""
    parts = [
        f"{names.get(name, name)} {len(c.aligned.case_ids)}"
        for name, c in bench.comparisons.items()
    ]
    return f" Queries per benchmark: {', '.join(parts)}."


def tie_sentence(reports: Iterable[EvaluationReport], scores: Sequence[str]) -> str:
    """How the shown ``beir_*`` scores break tied scores (their recorded ``ties`` rule)."""
    rules = {_tie_rule(r, s) for r in reports for s in scores if s.startswith("beir_")}
    rules.discard(None)
    if not rules:
        return ""
    words = "; ".join(TIE_RULES.get(str(rule), str(rule)) for rule in sorted(map(str, rules)))
    return f" Tied scores are ranked {words}."


def _tie_rule(report: EvaluationReport, score: str) -> str | None:
    for result in report.case_results[:50]:
        for s in result.scores:
            if s.name == score and s.status == "scored":
                return str((s.metadata or {}).get("ties") or "trec_eval")
    return None


def tie_footnote(
    comparison: Comparison, variant: str, score: str, shown: str, decimals: int, where: str = ""
) -> str:
    """``"a · bm25 nDCG@10 (cranfield): 0.642 in trec_eval's order, 0.665 tie-aware (51 of
    198 queries tied)."`` when the tie-aware mean rounds differently; else ""."""
    from heta_notebook.analysis._ties import tie_effects

    v = comparison.variant(variant)
    effects = tie_effects(comparison.frames(v.report), score)
    row = effects[effects["query_mode"] == v.mode]
    if row.empty:
        return ""
    r = row.iloc[0]
    if round(float(r["expected"]), decimals) == round(float(r["mean"]), decimals):
        return ""
    place = f" ({where})" if where else ""
    return (
        f" {variant} {shown}{place}: {r['mean']:.{decimals}f} as scored, "
        f"{r['expected']:.{decimals}f} tie-aware ({int(r['n_tied'])} of {int(r['n'])} "
        "queries tied)."
    )


def absent_sentence(bench: BenchmarkComparison, names: Mapping[str, str]) -> str:
    """n/a cells: benchmarks on which the baseline has no report."""
    if not bench.absent_baseline:
        return ""
    where = ", ".join(names.get(b, b) for b in bench.absent_baseline)
    label = next(iter(bench.absent_baseline.values()))
    return f" n/a: the baseline {label} did not run on {where}; no test there."


__all__ = [
    "MISSING",
    "TIE_RULES",
    "absent_sentence",
    "correction_phrase",
    "queries_sentence",
    "tie_footnote",
    "tie_sentence",
]
