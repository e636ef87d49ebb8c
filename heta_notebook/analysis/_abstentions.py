"""Abstentions per variant of a comparison: how often each abstained, and, where the benchmark
expects abstentions (SQuAD 2.0's unanswerable questions), how many of them were right.

``Comparison.abstentions()`` returns the table; ``abstention_line`` says one row in words for
the comparison's text and HTML views (display only formats it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

COLUMNS = (
    "variant",
    "report",
    "query_mode",
    "n",  # case results of the variant
    "abstained",  # responses that abstained (``Abstain``, the answer step's own)
    "share",  # abstained / n
    "n_expected",  # cases whose right answer is to abstain
    "correct",  # abstained where an abstention was expected
    "on_answerable",  # abstained where an answer was expected
)


def variant_abstentions(comparison: Any) -> pd.DataFrame:
    """One row per variant of ``comparison`` (its order), counted over its case results."""
    rows = [
        (v.name, v.report, *_counts(comparison.frames(v.report), v.mode))
        for v in comparison.variants
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def mode_abstentions(frames: Any) -> pd.DataFrame:
    """The same counts for one report (its ``frames()``), one row per query mode."""
    rows = [(mode, "", *_counts(frames, mode)) for mode in frames.modes]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def any_abstained(comparison: Any) -> bool:
    """Whether any report of ``comparison`` abstained (from each report's cheap per-mode
    counts: a saved report keeps them in its header, no column is read)."""
    return any(comparison.frames(label).abstentions() for label in comparison.labels)


def _counts(frames: Any, mode: str) -> tuple[Any, ...]:
    mine = frames.case_column("query_mode") == mode
    n = int(mine.sum())
    if frames.abstentions().get(mode):  # else no column is read (a saved report's JSON)
        abstained = frames.case_column("abstained")[mine]
    else:
        abstained = np.zeros(n, dtype=bool)
    expected = frames.case_column("expects_abstention")[mine]
    return (
        mode,
        n,
        int(abstained.sum()),
        float(abstained.sum() / n) if n else np.nan,
        int(expected.sum()),
        int((abstained & expected).sum()),
        int((abstained & ~expected).sum()),
    )


def abstention_line(row: Any) -> str:
    """``"abstained on 7 of 40 (18%); 6 of 9 expected abstentions right, 1 on an
    answerable case"`` for one row of :func:`variant_abstentions`."""
    line = f"abstained on {row.abstained} of {row.n} ({_percent(row.share)})"
    if row.n_expected:
        line += (
            f"; {row.correct} of {row.n_expected} expected abstentions right, "
            f"{row.on_answerable} on {_plural(row.on_answerable, 'answerable case')}"
        )
    return line


def _percent(share: float) -> str:
    return "–" if not np.isfinite(share) else f"{share:.0%}"


def _plural(n: int, word: str) -> str:
    return word if n == 1 else f"{word}s"


__all__ = ["COLUMNS", "abstention_line", "any_abstained", "mode_abstentions", "variant_abstentions"]
