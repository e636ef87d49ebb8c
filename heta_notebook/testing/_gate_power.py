"""What a regression gate can see: its minimum detectable drop, and a refusal to pass when it
is asked for a power it does not have.

For each check (score × mode, the overall rows; slices have fewer queries and are not
summarised here) the gate's power is the paired t-test's (``analysis._power``) at the check's
n paired queries, the observed sd of the per-query differences and the level a single check
must reach under the correction (α/m for Holm, Bonferroni and BH over m checks of a family:
their first step; α uncorrected). The sentence is always in the gate's output:
``"at n = 198 and α = 0.05 this gate detects drops ≥ 0.031 beir_ndcg@10 with 80% power"``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

TARGET = 0.8


def power_rows(comparison: Any, sig: pd.DataFrame, alpha: float, correction: str) -> pd.DataFrame:
    """Per overall check: n, sd of the differences, the level per check, the MDE at 80%."""
    from heta_notebook.analysis._power import min_detectable_effect

    rows = []
    overall = sig if "slice" not in sig else sig.iloc[:0]
    for r in overall.to_dict("records"):
        deltas = comparison.deltas(r["score"], r["baseline"], r["variant"])["delta"].to_numpy()
        n = len(deltas)
        sd = float(np.std(deltas, ddof=1)) if n > 1 else math.nan
        m = int(r.get("family_size") or 1)
        level = alpha if correction == "none" else alpha / max(m, 1)
        mde = min_detectable_effect(n, level, TARGET, sd) if n > 1 and sd > 0 else math.nan
        if n > 1 and sd == 0:
            mde = 0.0
        mode = comparison.variant(r["variant"]).mode
        rows.append(
            {
                "score": r["score"],
                "mode": mode,
                "n": n,
                "sd": sd,
                "level": level,
                "m": m,
                "mde": mde,
            }
        )
    return pd.DataFrame(rows, columns=["score", "mode", "n", "sd", "level", "m", "mde"])


def power_lines(rows: pd.DataFrame, alpha: float) -> list[str]:
    """The sentence per check (one per score when every mode says the same)."""
    lines = []
    for r in rows.itertuples(index=False):
        level = f"α = {alpha:g}" if r.m <= 1 or r.level == alpha else f"α = {alpha:g}/{r.m}"
        if math.isnan(r.mde):
            lines.append(
                f"{r.score} · {r.mode}: too few paired queries (n = {r.n}) for a power figure"
            )
            continue
        lines.append(
            f"at n = {r.n} and {level} this gate detects drops ≥ {r.mde:.3f} {r.score} "
            f"with {TARGET:.0%} power ({r.mode}; paired t-test power at the observed sd "
            f"{r.sd:.3f} of the per-query differences)"
        )
    return lines


def check_power(rows: pd.DataFrame, min_power: float, detect: float) -> None:
    """Refuse (GateInputError: exit 2) a check whose power to see a drop of ``detect`` is
    below ``min_power``, saying how many queries it would need."""
    from heta_notebook.analysis._power import power, queries_needed
    from heta_notebook.testing._gates import GateInputError

    if not (isinstance(min_power, (int, float)) and 0 < min_power < 1):
        raise GateInputError(f"min_power must be between 0 and 1 (got {min_power!r})")
    if not (isinstance(detect, (int, float)) and math.isfinite(detect) and detect > 0):
        raise GateInputError(
            "min_power needs the drop to guard: pass detect= (e.g. 0.02) or a max_drop > 0"
        )
    for r in rows.itertuples(index=False):
        if r.n < 2 or math.isnan(r.sd):
            raise GateInputError(
                f"{r.score} · {r.mode}: {r.n} paired queries cannot give {min_power:.0%} power"
            )
        have = power(detect, r.n, r.level, r.sd)
        if have < min_power:
            needed = queries_needed(detect, r.sd, r.level, min_power)
            raise GateInputError(
                f"{r.score} · {r.mode}: at n = {r.n} this gate has {have:.0%} power to detect a "
                f"drop of {detect:g} (sd of the differences {r.sd:.3f}, level {r.level:.3g}); "
                f"min_power={min_power:g} needs about {needed} queries"
            )


__all__ = ["TARGET", "check_power", "power_lines", "power_rows"]
