"""How much tied scores move a report's numbers.

Retrieval metrics mark a case whose top k holds equal scores (``metadata["tied"]``) and give
its value under each tie rule (``metadata["by_tie_rule"]``: ``trec_eval`` order, the system's
order ``as_returned``, the tie-aware ``expected`` value). ``tie_effects`` turns that into one
row per query mode: how many cases are tied and the score's mean under each rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from heta_notebook.schema._headline import headline_score

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.analysis._frames import ReportFrames

RULES = ("trec_eval", "as_returned", "expected")
COLUMNS = ("query_mode", "score", "n", "n_tied", "mean", *RULES)
NOTABLE = 0.005  # a tie-aware and an as-returned mean further apart than this are worth a line


def tie_effects(frames: ReportFrames, score: str | None = None) -> pd.DataFrame:
    """Per mode: scored cases, tied cases and the mean of ``score`` (default the headline)
    as reported and under each tie rule; empty when the score has no tie information."""
    score = score or headline_score(frames.score_names)
    columns = frames.score_arrays()
    if score is None or score not in columns["names"]:
        return pd.DataFrame(columns=list(COLUMNS))
    picked = np.flatnonzero(
        (columns["name_codes"] == columns["names"].index(score)) & (columns["status"] == 0)
    )
    modes = frames.case_column("query_mode")[columns["rows"][picked]]
    values = columns["values"][picked]
    metadata = columns["metadata"][picked]
    rows = [
        _mode_row(mode, score, values[modes == mode], metadata[modes == mode])
        for mode in frames.modes
    ]
    return pd.DataFrame([r for r in rows if r is not None], columns=list(COLUMNS))


def _mode_row(mode: str, score: str, values: np.ndarray, metadata: np.ndarray) -> dict | None:
    if not len(values):
        return None
    by_rule = [_rules(md) for md in metadata]
    tied = [i for i, rules in enumerate(by_rule) if rules is not None]
    row: dict[str, Any] = {
        "query_mode": mode,
        "score": score,
        "n": len(values),
        "n_tied": len(tied),
        "mean": float(values.mean()),
    }
    for rule in RULES:
        under = values.copy()
        under[tied] = [by_rule[i][rule] for i in tied]  # type: ignore[index]  # tied: not None
        row[rule] = float(under.mean())
    return row


def _rules(metadata: Any) -> dict[str, float] | None:
    rules = metadata.get("by_tie_rule") if isinstance(metadata, dict) else None
    return rules if isinstance(rules, dict) and all(r in rules for r in RULES) else None


def notable_ties(effects: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``tie_effects`` whose tie-aware and as-returned means differ by > 0.005."""
    if effects.empty:
        return effects
    return effects[(effects["expected"] - effects["as_returned"]).abs() > NOTABLE]


def tie_line(row: Any) -> str:
    """One row of :func:`notable_ties` in words (the card and the CLI say the same)."""
    from heta_notebook._util.formatting import fmt_int, fmt_num
    from heta_notebook.schema._headline import parse_at_k

    parsed = parse_at_k(row.score)
    cutoff = str(parsed[1]) if parsed else "k"
    return (
        f"{row.query_mode}: {fmt_int(row.n_tied)} of {fmt_int(row.n)} cases have tied scores in "
        f"their top {cutoff}, so {row.score} is {fmt_num(row.as_returned)} in the order "
        f"returned, {fmt_num(row.expected)} tie-aware (mean over tied orders) and "
        f"{fmt_num(row.trec_eval)} in trec_eval's order"
    )


__all__ = ["COLUMNS", "NOTABLE", "RULES", "notable_ties", "tie_effects", "tie_line"]
