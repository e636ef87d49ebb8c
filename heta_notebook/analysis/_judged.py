"""Judged@k on every surface: the card's line, the comparison's note, the paper caption.

Reads the ``judged@k`` means a report holds (``report.score_summary``, keys
``"{mode}.judged@{k}"``: fresh and saved reports alike); says nothing when there is none or
when everything shown was fully judged, unless a shown score counts unjudged documents
otherwise than trec_eval (condensed or bounds), whose convention is then stated per score
(``analysis._bounds``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from heta_notebook.analysis._bounds import PHRASES, unjudged_sentence

_JUDGED = re.compile(r"^(?P<mode>.*)\.judged@(?P<k>\d+)$")
_AT_K = re.compile(r"@(\d+)$")
FULL = 0.9995  # below this mean a top k is not fully judged (shown as < 100%)
SPREAD = 0.05  # a comparison notes judged@k differences above 5 points


def judged_means(report: Any) -> dict[tuple[str, int], float]:
    """``{(mode, k): mean judged@k}`` of a report (empty when it has no judged@k score)."""
    summary = getattr(report, "score_summary", None) or {}
    out = {}
    for key, value in summary.items():
        match = _JUDGED.match(str(key))
        if match and isinstance(value, (int, float)):
            out[(match["mode"], int(match["k"]))] = float(value)
    return out


def _shown_ks(scores: Iterable[str] | None) -> set[int] | None:
    if scores is None:
        return None
    return {int(m.group(1)) for s in scores if (m := _AT_K.search(str(s)))}


def judged_line(report: Any, scores: Iterable[str] | None = None) -> str | None:
    """The card's sentence when a top k behind a shown score (any @k score when ``scores``
    is None) is not fully judged, or when a shown score counts unjudged documents otherwise
    than trec_eval (condensed, bounds: ``analysis._bounds``); None otherwise."""
    ks = _shown_ks(scores)
    low = {
        key: v
        for key, v in judged_means(report).items()
        if v < FULL and (ks is None or key[1] in ks)
    }
    parts = []
    for k in sorted({k for _, k in low}):
        modes = ", ".join(f"{v:.0%} ({m})" for (m, kk), v in low.items() if kk == k)
        parts.append(f"judged@{k} {modes}")
    shown = list(report.score_names if scores is None else scores)
    conventions = unjudged_sentence([report], shown, always=bool(parts))
    if not conventions:
        return None
    if conventions == PHRASES["nonrelevant"]:
        return (
            f"{'; '.join(parts)}: {conventions}; see docs/labels.md for condensed scores, "
            "bounds and filling the holes"
        )
    lead = f"{'; '.join(parts)}. " if parts else ""
    return f"{lead}How each score counts unjudged documents: {conventions} (docs/labels.md)"


def judged_notes(reports: Mapping[str, Any]) -> list[str]:
    """A comparison's notes: one per k where variants differ in judged@k by more than 5 points."""
    by_k: dict[int, dict[str, float]] = {}
    for label, report in reports.items():
        for (mode, k), value in judged_means(report).items():
            by_k.setdefault(k, {})[f"{label} · {mode}"] = value
    notes = []
    for k, values in sorted(by_k.items()):
        if max(values.values()) - min(values.values()) > SPREAD:
            low, high = min(values, key=values.__getitem__), max(values, key=values.__getitem__)
            notes.append(
                f"judged@{k} differs by {100 * (values[high] - values[low]):.0f} points across "
                f"variants ({high} {values[high]:.0%}, {low} {values[low]:.0%}): the labels "
                "favour the better-judged variants, which biases this comparison."
            )
    return notes


def judged_caption(
    reports: Iterable[Any], scores: Sequence[str], label: Callable[[str], str] = str
) -> str:
    """A paper caption's sentences: the judged@k range behind the shown @k scores, and how
    each shown score counts unjudged documents (``analysis._bounds``; ``label`` names a
    score as the table does)."""
    reports = list(reports)
    ks = _shown_ks(scores) or set()
    values: dict[int, list[float]] = {}
    for report in reports:
        for (_, k), v in judged_means(report).items():
            if k in ks:
                values.setdefault(k, []).append(v)
    parts = [
        f"judged@{k} {min(v):.0%}" + (f"–{max(v):.0%}" if max(v) - min(v) >= 0.005 else "")
        for k, v in sorted(values.items())
        if min(v) < FULL
    ]
    conventions = unjudged_sentence(reports, scores, label, always=bool(parts))
    if not conventions:
        return ""
    share = f" Labelled share of the top k ({', '.join(parts)})" if parts else ""
    if conventions == PHRASES["nonrelevant"]:
        return f"{share}; {conventions}."
    return f"{share}{'.' if share else ''} Unjudged documents: {conventions}."


__all__ = ["judged_caption", "judged_line", "judged_means", "judged_notes"]
