"""Which variants a comparison pairs, how a pair is named, and which settings matter to it.

With a report label as the baseline (the default: the first report), cases pair by the
benchmark's query ids, never across benchmarks, and variants pair as a user means them:

- the baseline report has **one mode** (a system of one's own, mode ``default``): every other
  report's variants pair with it, whatever their mode;
- another report has one mode and the baseline several: it pairs with each baseline mode;
- both have several: **mode by mode where the names match**; modes without a match pair with
  nothing, and a note says so and how to choose (``baseline="label · mode"``).

With a variant as the baseline, everything pairs with it. Pairs across modes are said in one
note (text and HTML read the same ``Comparison.notes()``).

A pair is named by its labels (``mine → bm25-docs``, or ``mine · default → kb · vector_search``
across modes); the settings that differ go to a details section, and a setting the pair's
modes do not read (``dense.dims`` between two BM25 runs) never leads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from heta_notebook.analysis._alignment import Variant

Paired = Callable[[Variant, Variant], bool]


def comparison_pairs(
    variants: Sequence[Variant], baseline: Variant | str, paired: Paired
) -> list[tuple[Variant, Variant]]:
    """(baseline, variant) pairs the comparison tests, in variant order (module docstring)."""
    if isinstance(baseline, Variant):
        return [(baseline, v) for v in variants if v != baseline and paired(baseline, v)]
    modes = _modes(variants)
    base_modes = modes.get(baseline, [])
    out = []
    for v in variants:
        if v.report == baseline:
            continue
        for mode in _partner_modes(base_modes, modes[v.report], v.mode):
            base = Variant(baseline, mode)
            if paired(base, v):
                out.append((base, v))
    return out


def _partner_modes(base_modes: list[str], own: list[str], mode: str) -> list[str]:
    if len(base_modes) == 1:
        return base_modes
    if len(own) == 1:
        return base_modes
    return [mode] if mode in base_modes else []


def _modes(variants: Sequence[Variant]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for v in variants:
        out.setdefault(v.report, []).append(v.mode)
    return out


def pairing_notes(
    variants: Sequence[Variant], baseline: Variant | str, pairs: Sequence[tuple[Variant, Variant]]
) -> list[str]:
    """One line per report whose pairing is not mode by mode: what was paired, how to choose."""
    if isinstance(baseline, Variant):
        return []
    modes = _modes(variants)
    base_modes = modes.get(baseline, [])
    notes = []
    for label, own in modes.items():
        if label == baseline:
            continue
        mine = [(a, b) for a, b in pairs if b.report == label]
        if mine and all(a.mode == b.mode for a, b in mine):
            continue
        if not mine:
            notes.append(
                f"{label}'s modes ({', '.join(own)}) share no name with {baseline}'s "
                f"({', '.join(base_modes)}): nothing paired; choose a pair with "
                f"baseline='{baseline} · {base_modes[0]}' (everything against that variant)."
            )
            continue
        if len(base_modes) == 1:
            said = (
                f"{label}'s modes ({', '.join(own)}) each paired with {baseline} · {base_modes[0]}"
            )
        else:
            said = f"{label} · {own[0]} paired with each of {baseline}'s modes ({', '.join(base_modes)})"
        notes.append(
            f"{said}, case by case by query id; to pair otherwise pass "
            f"baseline='label · mode' or select(modes=[...])."
        )
    return notes


def pair_name(a: Variant, b: Variant) -> str:
    """``"a → b"`` by labels: report labels when the modes match, full variant names else."""
    if a.mode == b.mode:
        return f"{a.report} → {b.report}"
    if a.report == b.report:
        return f"{a.report}: {a.mode} → {b.mode}"
    return f"{a.name} → {b.name}"


def applies(key: str, modes: Sequence[str]) -> bool:
    """Whether a flattened manifest setting ``key`` is read by any of ``modes`` (settings of
    the embedded recipe's sections a mode does not read, e.g. ``dense.*`` under BM25, do not;
    anything is read by a mode the embedded recipe does not know)."""
    from heta_notebook.kb._recipe import MODE_SETTINGS

    section = key.split(".")[0].split("[")[0]
    known = {s for sections in MODE_SETTINGS.values() for s in sections}
    if section not in known:
        return True
    return any(section in MODE_SETTINGS.get(m, known) for m in modes)


def relevant_changes(changes: Sequence[tuple[str, Any, Any]], modes: Sequence[str]) -> list[Any]:
    """``changes`` (key, a, b) the pair's modes read, in their order."""
    return [c for c in changes if applies(c[0], modes)]


__all__ = [
    "applies",
    "comparison_pairs",
    "pair_name",
    "pairing_notes",
    "relevant_changes",
]
