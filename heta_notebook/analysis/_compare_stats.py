"""The reviewer's statistics of a comparison beyond the paired rows: all-pairs Tukey HSD,
slice interaction and power (each a thin door into its own module; ``Comparison`` has them)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from heta_notebook.analysis._slices import SliceKey


class ComparisonStatistics:
    """Mixed into ``Comparison``: ``tukey``, ``interaction`` and ``power``."""

    # provided by Comparison
    by: Any

    @property
    def primary_score(self) -> str:  # pragma: no cover - Comparison's
        raise NotImplementedError

    def values(self, score: str) -> pd.DataFrame:  # pragma: no cover - Comparison's
        raise NotImplementedError

    def pairs(self) -> list[Any]:  # pragma: no cover - Comparison's
        raise NotImplementedError

    def deltas(self, score: str, a: Any = None, b: Any = None) -> pd.DataFrame:  # pragma: no cover
        raise NotImplementedError

    def tukey(self, score: str | None = None, alpha: float = 0.05) -> pd.DataFrame:
        """Tukey HSD over every variant's per-query values of ``score`` (queries all scored),
        statsmodels' columns; grouping letters in ``.attrs["letters"]``. Classical Tukey:
        the per-query pairing is ignored (``analysis._tukey``)."""
        from heta_notebook.analysis._tukey import tukey_table

        table, letters = tukey_table(self.values(score or self.primary_score), alpha)
        table.attrs["letters"] = letters
        return table

    def interaction(
        self, score: str | None = None, by: SliceKey | None = None, a: Any = None, b: Any = None,
        test: str = "anova",
    ) -> pd.DataFrame:  # fmt: skip
        """Does variant − baseline depend on the slice of ``by``? One row per pair with the
        test (``"anova"``: the system × slice F; ``"kruskal"``), statistic and p."""
        from heta_notebook.analysis._interaction import interaction

        return interaction(self, score or self.primary_score, by or self.by, a, b, test)  # type: ignore[arg-type]

    def power(self, score: str | None = None, alpha: float = 0.05, target: float = 0.8):
        """Per pair shown: n, sd of the differences, the minimum detectable effect at
        ``target`` power and level ``alpha`` (paired t-test; ``analysis._power``)."""
        from heta_notebook.analysis._power import min_detectable_effect

        score = score or self.primary_score
        rows = []
        for base, v in self.pairs():
            d = self.deltas(score, base, v)["delta"].to_numpy()
            n, sd = len(d), float(np.std(d, ddof=1)) if len(d) > 1 else float("nan")
            mde = min_detectable_effect(n, alpha, target, sd) if n > 1 and sd > 0 else np.nan
            row = {"score": score, "baseline": base.name, "variant": v.name, "n": n, "sd": sd}
            rows.append({**row, "alpha": alpha, "power": target, "mde": mde})
        return pd.DataFrame(rows)
