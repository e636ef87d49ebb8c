"""The one validated option set of every comparison surface: test, correction, family,
confidence, alternative.

``compare``, ``compare_benchmarks``, the paper tables, the CLI and the regression gate all
read their statistical options through :func:`check_options`, so a value means the same
thing everywhere and a misspelled value (or option name) is refused with the valid ones.

- ``test``: ``"permutation"`` (the paired sign-flip test; ``"sign-flip"`` is the same),
  ``"t-test"``, ``"wilcoxon"``, ``"bootstrap"`` (the paired bootstrap test of the mean
  difference: resample the centred differences);
- ``correction``: ``"holm"`` (default), ``"bh"`` (Benjamini–Hochberg FDR), ``"bonferroni"``,
  ``"none"``; equal to statsmodels' ``multipletests`` (``holm``, ``fdr_bh``, ``bonferroni``);
- ``family``: ``"score"`` (one correction per score) or ``"all"`` (one over every test);
- ``confidence``: the level of every interval (0 < confidence < 1);
- ``alternative``: ``"two-sided"``, ``"greater"`` (variant above baseline) or ``"less"``.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

TESTS = ("permutation", "t-test", "wilcoxon", "bootstrap")
TEST_ALIASES = {"sign-flip": "permutation", "signflip": "permutation", "t": "t-test"}
CORRECTIONS = ("holm", "bh", "bonferroni", "none")
CORRECTION_NAMES = {
    "holm": "Holm",
    "bh": "Benjamini–Hochberg (FDR)",
    "bonferroni": "Bonferroni",
    "none": "no correction",
}
FAMILIES = ("score", "all")
ALTERNATIVES = ("two-sided", "greater", "less")
#: every statistical option a comparison surface accepts, with its default
DEFAULTS: dict[str, Any] = {
    "test": "permutation",
    "correction": "holm",
    "family": "score",
    "confidence": 0.95,
    "alternative": "two-sided",
}
#: the other options ``compare()`` takes (by name), for messages about unknown names
COMPARE_KEYWORDS = ("baseline", "by", "method", "n_resamples", "seed", "allow_different_benchmarks")


@dataclass(frozen=True)
class StatOptions:
    """A validated option set (see the module docstring); ``StatOptions.of(**kw)`` checks it."""

    test: str = "permutation"
    correction: str = "holm"
    family: str = "score"
    confidence: float = 0.95
    alternative: str = "two-sided"

    @classmethod
    def of(cls, **options: Any) -> StatOptions:
        """Validate ``options`` (unknown names and values are refused with the valid ones)."""
        return cls(**check_options(**options))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_options(**options: Any) -> dict[str, Any]:
    """The options with defaults filled in and aliases resolved; a ValueError (TypeError for
    an unknown name) lists what is valid."""
    unknown = [k for k in options if k not in DEFAULTS]
    if unknown:
        raise TypeError(unknown_options_message(unknown, DEFAULTS))
    out = {**DEFAULTS, **{k: v for k, v in options.items() if v is not None}}
    out["test"] = check_choice("test", TEST_ALIASES.get(out["test"], out["test"]), TESTS)
    out["correction"] = check_choice("correction", out["correction"], CORRECTIONS)
    out["family"] = check_choice("family", out["family"], FAMILIES)
    out["alternative"] = check_choice("alternative", out["alternative"], ALTERNATIVES)
    confidence = out["confidence"]
    ok = isinstance(confidence, numbers.Real) and not isinstance(confidence, bool)
    if not (ok and math.isfinite(confidence) and 0 < confidence < 1):
        raise ValueError(f"confidence must be a number between 0 and 1 (got {confidence!r})")
    out["confidence"] = float(confidence)
    return out


def check_choice(name: str, value: Any, valid: Sequence[str]) -> str:
    """``value`` if it is one of ``valid``, else a ValueError naming them (and a close one)."""
    if isinstance(value, str) and value in valid:
        return value
    close = difflib.get_close_matches(str(value), [*valid, *TEST_ALIASES], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"{name} must be one of {', '.join(valid)} (got {value!r}){hint}")


def unknown_options_message(
    names: Iterable[str], valid: Iterable[str] | Mapping[str, Any], where: str = "compare()"
) -> str:
    """``"unknown option 'tset' (did you mean 'test'?); compare() takes: ..."``."""
    valid = sorted(set(valid) | set(COMPARE_KEYWORDS) if where == "compare()" else set(valid))
    parts = []
    for name in names:
        close = difflib.get_close_matches(name, valid, n=1)
        parts.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"unknown option {', '.join(parts)}; {where} takes: {', '.join(valid)}"


# --------------------------------------------------------------------------- corrections


def adjust(
    p_values: np.ndarray,
    families: Sequence[Any] | np.ndarray | None = None,
    correction: str = "holm",
) -> np.ndarray:
    """Adjusted p-values under ``correction``, within each family (one label per p-value) or
    over all of them; NaNs are left out of their family and stay NaN."""
    check_choice("correction", correction, CORRECTIONS)
    p = np.asarray(p_values, dtype=float)
    if families is not None:
        labels = np.asarray(families, dtype=object)
        if labels.shape != p.shape:
            raise ValueError(f"families must label every p-value ({labels.shape} vs {p.shape})")
        out = np.full(p.shape, np.nan)
        for label in dict.fromkeys(labels.tolist()):
            mask = labels == label
            out[mask] = adjust(p[mask], None, correction)
        return out
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if m == 0:
        return out
    x = p[ok]
    if correction == "none":
        out[ok] = x
    elif correction == "bonferroni":
        out[ok] = np.minimum(x * m, 1.0)
    elif correction == "holm":
        order = np.argsort(x, kind="stable")
        scaled = (m - np.arange(m)) * x[order]
        values = np.empty(m)
        values[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
        out[ok] = values
    else:  # Benjamini–Hochberg step-up
        order = np.argsort(x, kind="stable")[::-1]  # largest first
        ranks = m - np.arange(m)  # rank of each (1-based, ascending order)
        scaled = np.minimum.accumulate(x[order] * m / ranks)
        values = np.empty(m)
        values[order] = np.minimum(scaled, 1.0)
        out[ok] = values
    return out


def correction_text(correction: str) -> str:
    """How captions name a correction: ``"Holm"``, ``"Benjamini–Hochberg (FDR)"``, ..."""
    return CORRECTION_NAMES[correction]


def corrected_over(correction: str) -> str:
    """``"Holm over"`` / ``"no correction over"`` → the phrase before a family size."""
    return "uncorrected, over" if correction == "none" else f"{CORRECTION_NAMES[correction]} over"


__all__ = [
    "ALTERNATIVES",
    "CORRECTIONS",
    "DEFAULTS",
    "FAMILIES",
    "TESTS",
    "StatOptions",
    "adjust",
    "check_choice",
    "check_options",
    "correction_text",
    "unknown_options_message",
]
