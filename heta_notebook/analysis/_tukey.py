"""All-pairs comparison: Tukey's HSD with compact grouping letters.

``tukey_hsd(values)`` runs classical Tukey HSD (``scipy.stats.tukey_hsd``; equal to
statsmodels' ``pairwise_tukeyhsd`` on the same vectors) over one score's per-query values of
several systems. **Classical Tukey treats the systems' values as independent groups: the
per-query pairing is ignored** (the query variance stays in the error term, so it is
conservative next to the paired tests). ``grouping_letters`` gives the compact letter display
(Piepho's insert-and-absorb): systems sharing a letter do not differ significantly; letters
are assigned from the best mean down.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from string import ascii_lowercase

import numpy as np
import pandas as pd

COLUMNS = ["group1", "group2", "meandiff", "p_adj", "lower", "upper", "reject"]


def tukey_hsd(values: Mapping[str, Sequence[float]] | pd.DataFrame, alpha: float = 0.05):
    """One row per pair (group1, group2): meandiff = mean2 − mean1, Tukey-adjusted p, the
    simultaneous ``1 − alpha`` interval and whether it rejects (statsmodels' columns)."""
    from scipy import stats as sps

    groups = _groups(values)
    names = list(groups)
    if len(names) < 2:
        raise ValueError("Tukey HSD needs at least two systems")
    result = sps.tukey_hsd(*groups.values())
    ci = result.confidence_interval(confidence_level=1 - alpha)
    rows = []
    for i, j in combinations(range(len(names)), 2):
        rows.append(
            {
                "group1": names[i],
                "group2": names[j],
                "meandiff": float(np.mean(groups[names[j]]) - np.mean(groups[names[i]])),
                "p_adj": float(result.pvalue[i, j]),
                "lower": float(-ci.high[i, j]),
                "upper": float(-ci.low[i, j]),
                "reject": bool(result.pvalue[i, j] < alpha),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def grouping_letters(
    means: Mapping[str, float], different: Sequence[tuple[str, str]]
) -> dict[str, str]:
    """Compact letter display: ``{system: "ab"}`` where systems sharing a letter are not in
    ``different`` (pairs that differ significantly); ``a`` goes to the best mean's group."""
    names = list(means)
    columns: list[set[str]] = [set(names)]
    for x, y in different:
        split: list[set[str]] = []
        for column in columns:
            if x in column and y in column:
                split += [column - {x}, column - {y}]
            else:
                split.append(column)
        columns = [c for c in split if not any(c < other for other in split)]
        columns = [c for k, c in enumerate(columns) if c and c not in columns[:k]]
    order = sorted(names, key=lambda n: -means[n])
    columns.sort(key=lambda c: min(order.index(n) for n in c))
    if len(columns) > len(ascii_lowercase):
        raise ValueError("more than 26 letter groups")
    return {n: "".join(ascii_lowercase[k] for k, c in enumerate(columns) if n in c) for n in names}


def tukey_table(values: pd.DataFrame, alpha: float = 0.05) -> tuple[pd.DataFrame, dict[str, str]]:
    """Tukey HSD over the columns of ``values`` (queries × systems; queries every system
    scored) and the grouping letters."""
    complete = values.dropna()
    table = tukey_hsd(complete, alpha)
    pairs = [(r.group1, r.group2) for r in table.itertuples() if r.reject]
    letters = grouping_letters(complete.mean().to_dict(), pairs)
    return table, letters


def _groups(values: Mapping[str, Sequence[float]] | pd.DataFrame) -> dict[str, np.ndarray]:
    if isinstance(values, pd.DataFrame):
        return {str(c): values[c].dropna().to_numpy(float) for c in values.columns}
    return {str(k): np.asarray(v, dtype=float) for k, v in values.items()}


__all__ = ["grouping_letters", "tukey_hsd", "tukey_table"]
