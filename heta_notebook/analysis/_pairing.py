"""Which variants a comparison pairs, how a pair is named, and which settings matter to it.

With a report label as the baseline (the default: the first report), cases pair by the
benchmark's query ids, never across benchmarks, and variants pair as a user means them:

- the baseline report has **one mode** (a system of one's own, mode ``default``): every other
  report's variants pair with it, whatever their mode;
- another report has one mode and the baseline several: it pairs with each baseline mode;
- both have several: **mode by mode where the names match**; modes without a match pair with
  nothing, and one note per report says which (``b · sparse paired with nothing (a has no
  mode sparse; b has no mode dense)``) and how to choose (``baseline='a · dense'``); a report
  that matched every mode it ran but not every baseline mode gets "did not run mode(s) …".

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
    """The comparison's notes on modes: one line per report whose variants do not all pair mode
    by mode (what was paired, or paired with nothing, and how to choose), and one per report
    that did not run a mode it would have been paired on."""
    modes = _modes(variants)
    if isinstance(baseline, Variant):
        return _absent_notes(modes)
    notes = []
    for label, own in modes.items():
        if label != baseline:
            mine = [(a, b) for a, b in pairs if b.report == label]
            note = _report_note(label, own, baseline, modes.get(baseline, []), mine)
            if note:
                notes.append(note)
    return notes


def _report_note(
    label: str,
    own: list[str],
    baseline: str,
    base_modes: list[str],
    mine: list[tuple[Variant, Variant]],
) -> str | None:
    """The one line on how report ``label``'s variants paired with the baseline report's."""
    if not mine:
        return (
            f"{label}'s modes ({', '.join(own)}) share no name with {baseline}'s "
            f"({', '.join(base_modes)}): nothing paired; choose a pair with "
            f"baseline='{baseline} · {base_modes[0]}' (everything against that variant)."
        )
    if any(a.mode != b.mode for a, b in mine):
        if len(base_modes) == 1:
            said = (
                f"{label}'s modes ({', '.join(own)}) each paired with {baseline} · {base_modes[0]}"
            )
        else:
            said = f"{label} · {own[0]} paired with each of {baseline}'s modes ({', '.join(base_modes)})"
        return (
            f"{said}, case by case by query id; to pair otherwise pass "
            f"baseline='label · mode' or select(modes=[...])."
        )
    alone = [m for m in own if m not in base_modes]
    lacking = [m for m in base_modes if m not in own]
    if alone:
        return _unpaired_note(label, alone, baseline, base_modes, lacking)
    if lacking:
        return f"{label} did not run mode(s) {', '.join(lacking)}."
    return None


def _unpaired_note(
    label: str, alone: list[str], baseline: str, base_modes: list[str], lacking: list[str]
) -> str:
    """Modes of ``label`` that matched no baseline mode by name (the others did): which ones,
    why, and the baseline variant to choose to compare them (one of the baseline's modes
    ``label`` did not run, when there is one)."""
    names = ", ".join(f"{label} · {m}" for m in alone)
    why = f"{baseline} has no mode {', '.join(alone)}"
    if lacking:
        why += f"; {label} has no mode {', '.join(lacking)}"
    choice = lacking[0] if lacking else base_modes[0]
    return (
        f"{names} paired with nothing ({why}); to compare {'it' if len(alone) == 1 else 'them'}, "
        f"choose baseline='{baseline} · {choice}' (everything against that variant)."
    )


def _absent_notes(modes: dict[str, list[str]]) -> list[str]:
    """With a variant as the baseline: reports that did not run a mode the others ran (none
    when a report has one mode: it pairs across modes)."""
    if any(len(own) == 1 for own in modes.values()):
        return []
    every = list(dict.fromkeys(m for own in modes.values() for m in own))
    notes = []
    for label, own in modes.items():
        absent = [m for m in every if m not in own]
        if absent:
            notes.append(f"{label} did not run mode(s) {', '.join(absent)}.")
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
