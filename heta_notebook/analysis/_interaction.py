"""Does the difference between two systems depend on the slice? And summaries per slice.

``interaction(comparison, score, by, a, b)`` takes the per-query differences d = b − a and
tests whether their mean is the same in every slice of ``by``:

- ``test="anova"`` (default): one-way ANOVA of d across slices (``scipy.stats.f_oneway``).
  With two systems measured on the same queries and queries nested in slices, this F is
  exactly the system × slice interaction F of the two-way mixed ANOVA (system within
  queries, slice between them);
- ``test="kruskal"``: the Kruskal–Wallis rank test of d across slices (no normality).

The answer is stated with the test used (``interaction_line``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.analysis._compare import Comparison

TESTS = {
    "anova": "one-way ANOVA of the per-query differences across slices (system × slice F)",
    "kruskal": "Kruskal–Wallis test of the per-query differences across slices",
}


def interaction(
    comparison: Comparison, score: str, by: Any, a: Any = None, b: Any = None, test: str = "anova"
) -> pd.DataFrame:
    """One row per (baseline, variant) pair: the test, its statistic and p, and per slice
    n and the mean difference (``slices``: a dict slice → (n, mean delta))."""
    from scipy import stats as sps

    from heta_notebook.analysis._options import check_choice

    check_choice("test", test, tuple(TESTS))
    if by is None:
        raise ValueError("interaction() needs by= (a case label or metadata key)")
    pairs = comparison._delta_pairs(a, b)
    masks = comparison.slice_masks(by)
    s = comparison.aligned.score_index(score)
    rows = []
    for base, v in pairs:
        x = comparison.aligned.values[s][:, comparison.aligned.variant_index(base)]
        y = comparison.aligned.values[s][:, comparison.aligned.variant_index(v)]
        d = y - x
        groups = {name: d[m & ~np.isnan(d)] for name, m in masks}
        groups = {k: g for k, g in groups.items() if len(g)}
        usable = [g for g in groups.values() if len(g) > 1]
        stat = p = float("nan")
        if len(usable) >= 2:
            result = sps.f_oneway(*usable) if test == "anova" else sps.kruskal(*usable)
            stat, p = float(result.statistic), float(result.pvalue)
        rows.append(
            {
                "score": score,
                "baseline": base.name,
                "variant": v.name,
                "by": by if isinstance(by, str) else "custom",
                "test": test,
                "statistic": stat,
                "p_value": p,
                "slices": {k: (len(g), float(g.mean())) for k, g in groups.items()},
            }
        )
    return pd.DataFrame(rows)


def interaction_line(row: Any) -> str:
    """``"the beir_ndcg@10 difference a → b depends on qlen (p=0.003, one-way ANOVA ...)"``."""
    from heta_notebook._util.formatting import format_p

    verdict = "depends" if row["p_value"] < 0.05 else "does not detectably depend"
    return (
        f"the {row['score']} difference {row['baseline']} → {row['variant']} {verdict} on "
        f"{row['by']} ({format_p(row['p_value'])}, {TESTS[row['test']]})"
    )


def summary_by(comparison: Comparison, by: Any) -> pd.DataFrame:
    """``Comparison.summary()`` per slice of ``by``: a first ``slice`` column."""
    from heta_notebook.analysis._compare_frames import summary_stats

    al = comparison.aligned
    s_idx = [al.score_index(s) for s in comparison.score_names]
    v_idx = [al.variant_index(v) for v in comparison.variants]
    rows = []
    for name, mask in comparison.slice_masks(by):
        values, passed = np.asarray(al.values)[:, mask], np.asarray(al.passed)[:, mask]
        stats = summary_stats(values, passed, comparison.confidence, s_idx, v_idx)
        for j, v in enumerate(comparison.variants):
            for i, score in enumerate(comparison.score_names):
                if stats["n"][i, j] == 0:
                    continue
                rows.append(
                    {
                        "slice": name,
                        "variant": v.name,
                        "report": v.report,
                        "query_mode": v.mode,
                        "score": score,
                        **{k: arr[i, j] for k, arr in stats.items()},
                    }
                )
    return pd.DataFrame(rows)


__all__ = ["TESTS", "interaction", "interaction_line", "summary_by"]
