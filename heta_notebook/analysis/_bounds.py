"""Scores that admit holes, shown as what they are: one rule for every surface.

A report scored with ``labeled(..., holes=True)`` (or :func:`~heta_notebook.hole_metrics`)
holds each BEIR score three times (``labels._holes``): ``beir_ndcg@10`` (trec_eval's: unjudged
documents count as non-relevant, the lower bound), ``beir_ndcg_upper@10`` (unjudged = relevant,
the upper bound) and ``beir_ndcg_condensed@10`` (unjudged documents removed, Sakai 2007).

- :func:`bound_pairs` pairs a score with its upper bound (``{lower: upper}``) when both are
  there and their metadata say so; the card, the comparison table, the paper tables and
  ``frames().bounds()`` / ``comparison.bounds()`` all show such a pair as one interval
  ``0.296 [0.296, 0.697]`` (:func:`interval_text`) and drop the upper's own row.
- :func:`conventions` reads each score's convention from its metadata (the evaluator's
  manifest, else the scores themselves: ``unjudged``); a ``beir_*`` score that records none
  is trec_eval's.
- :func:`unjudged_sentence` states, per shown score, the convention it uses, in the words the
  card, the comparison's notes and the captions share.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pydantic_core import from_json

from heta_notebook.labels._holes import CONDENSED_NOTE, UNJUDGED

_TWIN = re.compile(r"^(?P<stem>beir_[a-z]+)(?P<suffix>_upper|_condensed)?@(?P<k>\d+)$")
_AT_K = re.compile(r"^(?P<head>.*?)(?P<suffix>_condensed|_upper)?@(?P<k>\d+)(?P<tail>.*)$")
BOUNDS = "bounds"  # a lower bound shown with its upper: the interval, one "kind" of shown score
BOUNDS_COLUMNS = ("score", "upper_score", "lower", "upper", "condensed")
# How each kind of shown score counts an unjudged document (captions, card and notes say this)
PHRASES = {
    "nonrelevant": "unjudged documents count as non-relevant (trec_eval's convention), so "
    "these scores are lower bounds",
    BOUNDS: "trec_eval's value with its bounds [unjudged documents as non-relevant, as "
    "relevant (grade 1)]",
    "condensed": CONDENSED_NOTE,  # the words the condensed scores' own metadata carry
    "relevant": "unjudged documents count as relevant (grade 1): upper bounds",
}
HINTS = {  # the same, in a few words under a score's name in a table (none: trec_eval's)
    BOUNDS: "unjudged as non-relevant [… as relevant]",
    "condensed": "unjudged removed: overestimates",
    "relevant": "unjudged as relevant: upper bound",
}
ORDER = (BOUNDS, *UNJUDGED)  # the conventions labels._holes makes
MAX_RESULTS = 50  # case results read for a score's metadata when no evaluator manifest has it


def upper_of(score: str) -> str | None:
    """``beir_ndcg@10`` → ``beir_ndcg_upper@10`` (None for a name that is not a plain BEIR score)."""
    match = _TWIN.match(score)
    if not match or match["suffix"]:
        return None
    return f"{match['stem']}_upper@{match['k']}"


def condensed_of(score: str) -> str | None:
    """``beir_ndcg@10`` → ``beir_ndcg_condensed@10`` (None as for :func:`upper_of`)."""
    upper = upper_of(score)
    return upper.replace("_upper@", "_condensed@") if upper else None


def bound_pairs(
    names: Iterable[str], conventions: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``{lower: upper}`` for every score among ``names`` whose upper bound is there too, in
    ``names`` order. With ``conventions`` (:func:`conventions`), a pair must also say so: the
    lower counts unjudged documents as non-relevant, the upper as relevant."""
    names = list(names)
    present = set(names)
    pairs = {}
    for name in names:
        upper = upper_of(name)
        if upper is None or upper not in present:
            continue
        if conventions is not None and (
            conventions.get(name, "nonrelevant") != "nonrelevant"
            or conventions.get(upper) != "relevant"
        ):
            continue
        pairs[name] = upper
    return pairs


def folded(names: Iterable[str], pairs: Mapping[str, str]) -> list[str]:
    """``names`` without the upper bounds ``pairs`` shows inside their lower's interval."""
    uppers = set(pairs.values())
    return [n for n in names if n not in uppers]


def interval_text(lower: float, upper: float, digits: int = 3) -> str:
    """``"0.296 [0.296, 0.697]"``: trec_eval's value, then [unjudged as non-relevant, as
    relevant]."""
    return f"{lower:.{digits}f} {bounds_text(lower, upper, digits)}"


def bounds_text(lower: float, upper: float, digits: int = 3) -> str:
    """``"[0.296, 0.697]"`` (``–`` for a bound that is missing)."""

    def fmt(v: float) -> str:
        return "–" if v is None or v != v else f"{v:.{digits}f}"

    return f"[{fmt(lower)}, {fmt(upper)}]"


def bounds_frame(
    summary: pd.DataFrame, pairs: Mapping[str, str], keys: Sequence[str]
) -> pd.DataFrame:
    """One row per ``keys`` × paired score of a summary frame (``score`` and ``mean``
    columns): ``score`` (the lower), ``upper_score``, ``lower`` and ``upper`` (the two means)
    and ``condensed`` (the condensed mean when the report has it, else NaN)."""
    columns = [*keys, *BOUNDS_COLUMNS]
    if summary.empty or not pairs:
        return pd.DataFrame(columns=columns)
    rows = []
    for key, group in summary.groupby(list(keys), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        means = dict(zip(group["score"], group["mean"].astype(float), strict=True))
        for lower, upper in pairs.items():
            if lower in means and upper in means:
                condensed = means.get(condensed_of(lower) or "", float("nan"))
                rows.append([*key, lower, upper, means[lower], means[upper], condensed])
    frame = pd.DataFrame(rows, columns=columns)
    for col in ("lower", "upper", "condensed"):
        frame[col] = frame[col].astype(float)
    return frame


def comparison_bound_pairs(comparison: Any) -> dict[str, str]:
    """``{lower: upper}`` of a ``Comparison``'s compared scores whose upper bound its reports hold."""
    names = list(comparison.aligned.score_names)
    pairs = bound_pairs(names, conventions(comparison.reports.values(), names))
    return {lower: upper for lower, upper in pairs.items() if lower in comparison._scores}


def comparison_bounds(comparison: Any) -> pd.DataFrame:
    """``Comparison.bounds()``: its summary's means of each bounded score, per variant."""
    pairs = comparison_bound_pairs(comparison)
    keys = ["variant", "report", "query_mode"]
    if not pairs:
        return pd.DataFrame(columns=[*keys, *BOUNDS_COLUMNS])
    known = set(comparison.aligned.score_names)
    twins = [n for lo, up in pairs.items() for n in (up, condensed_of(lo)) if n in known]
    wider = comparison.select(scores=list(dict.fromkeys([*comparison._scores, *twins])))
    return bounds_frame(wider.summary(), pairs, keys)


def bounds_notes(comparison: Any) -> list[str]:
    """The comparison's note on how each compared score counts unjudged documents (none when
    every one is trec_eval's, as captions state it)."""
    said = unjudged_sentence(comparison.reports.values(), comparison._scores)
    return [f"how each score counts unjudged documents: {said}."] if said else []


def conventions(reports: Iterable[Any], names: Iterable[str] | None = None) -> dict[str, str]:
    """``{score: convention}`` (``"nonrelevant"``, ``"condensed"`` or ``"relevant"``) for the
    scores of ``reports`` (only ``names`` when given) that have one: read from the evaluator
    manifests the report recorded, else from the scores' own metadata (``unjudged``); a
    ``beir_*`` score that records none is trec_eval's (``"nonrelevant"``)."""
    wanted = None if names is None else set(names)
    out: dict[str, str] = {}
    for report in reports:
        for name, unjudged in _recorded(report).items():
            if wanted is None or name in wanted:
                out.setdefault(name, unjudged)
        for name in report.score_names if wanted is None else wanted:
            if name not in out and _TWIN.match(name):
                out[name] = "nonrelevant"
    return out


def _recorded(report: Any) -> dict[str, str]:
    found: dict[str, str] = {}
    for described in report.metadata.get("evaluators") or []:
        if not isinstance(described, dict):
            continue
        manifest = described.get("manifest")
        unjudged = manifest.get("unjudged") if isinstance(manifest, dict) else None
        if unjudged in PHRASES and isinstance(described.get("name"), str):
            found[described["name"]] = unjudged
    if found:
        return found
    sample = min(MAX_RESULTS, len(report.case_results))  # reports that recorded no manifests
    for name, meta in report.frames().columns.score_metadata(np.arange(sample, dtype=np.int64)):
        parsed = from_json(meta) if meta and "unjudged" in meta else None
        unjudged = parsed.get("unjudged") if isinstance(parsed, dict) else None
        if unjudged in PHRASES:
            found.setdefault(name, unjudged)
    return found


def shown_kinds(scores: Sequence[str], known: Mapping[str, str]) -> dict[str, list[str]]:
    """The shown scores with a convention, by kind (``"bounds"`` for a score shown with its
    upper bound, whose upper is then not listed; else its convention), in :data:`ORDER`."""
    shown = set(scores)
    pairs = {low: up for low, up in bound_pairs(known, known).items() if low in shown}
    kinds: dict[str, list[str]] = {}
    for score in folded(scores, pairs):
        if score in pairs:
            kinds.setdefault(BOUNDS, []).append(score)
        elif score in known:
            kinds.setdefault(known[score], []).append(score)
    return {kind: kinds[kind] for kind in ORDER if kind in kinds}


def hint(score: str, known: Mapping[str, str], bounded: bool) -> str:
    """A table row's few words on how ``score`` counts unjudged documents (:data:`HINTS`):
    ``bounded`` when it is shown with its upper bound; "" for trec_eval's plain scores."""
    return HINTS.get(BOUNDS if bounded else known.get(score, ""), "")


def unjudged_sentence(
    reports: Iterable[Any],
    scores: Sequence[str],
    label: Callable[[str], str] = str,
    *,
    always: bool = False,
) -> str:
    """Per shown score, how it counts unjudged documents: ``"nDCG@10: trec_eval's value with
    its bounds [...]; nDCG@10 (condensed): condensed lists drop ..."`` (no final stop).

    Empty when every shown score is plain trec_eval (unless ``always``: a caller that says
    the labels have holes) or none has a convention. Scores whose upper bound ``reports``
    hold count as ``"bounds"`` even if the upper itself is not among ``scores``."""
    reports = list(reports)
    known = conventions(reports)
    kinds = shown_kinds(list(scores), known)
    if not kinds or (set(kinds) == {"nonrelevant"} and not always):
        return ""
    if set(kinds) == {"nonrelevant"}:
        return PHRASES["nonrelevant"]
    return "; ".join(f"{name_list(kinds[k], label)}: {PHRASES[k]}" for k in kinds)


def name_list(scores: Sequence[str], label: Callable[[str], str] = str) -> str:
    """Shown names, cutoffs and metrics together: ``nDCG@1/3/10, MAP@10`` or, where metrics
    share their cutoffs, ``beir_ndcg/map_condensed@1/10``."""
    heads: dict[tuple[str, str, str], list[str]] = {}  # (head, suffix, tail) -> cutoffs
    by_cutoffs: dict[str, list[str]] = {}  # "_condensed@1/10" -> heads
    loose: list[str] = []
    for score in scores:
        match = _AT_K.match(label(score))
        if match is None:
            loose.append(label(score))
            continue
        key = (match["head"], match["suffix"] or "", match["tail"])
        heads.setdefault(key, []).append(match["k"])
    for (head, suffix, tail), ks in heads.items():
        by_cutoffs.setdefault(f"{suffix}@{'/'.join(ks)}{tail}", []).append(head)
    parts = [joined for at, names in by_cutoffs.items() for joined in _joined(names, at)]
    return ", ".join([*parts, *loose])


def _joined(heads: list[str], at: str) -> list[str]:
    """``beir_ndcg``, ``beir_map`` and ``@10`` → ``["beir_ndcg/map@10"]`` (heads sharing a
    prefix up to an ``_``); else one name per head (``nDCG@10``, ``R@10``)."""
    prefix = os.path.commonprefix(heads)
    prefix = prefix[: prefix.rfind("_") + 1]
    if len(heads) == 1 or not prefix:
        return [f"{head}{at}" for head in heads]
    return ["/".join([heads[0], *(h[len(prefix) :] for h in heads[1:])]) + at]


__all__ = [
    "BOUNDS",
    "HINTS",
    "PHRASES",
    "bound_pairs",
    "bounds_frame",
    "bounds_text",
    "condensed_of",
    "conventions",
    "folded",
    "hint",
    "interval_text",
    "name_list",
    "shown_kinds",
    "unjudged_sentence",
    "upper_of",
]
