"""The one number-format module: how every view writes scores, counts, CIs, deltas, p-values
and times (the card, figures, comparison tables and headlines, explorers; ``explorer.js``
mirrors ``fmt_num``, ``fmt_int``, ``fmt_ms`` and ``format_delta``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def _missing(value: Any) -> bool:
    try:
        return value is None or (isinstance(value, float) and math.isnan(value))
    except TypeError:
        return False


def fmt_num(value: Any, digits: int = 3) -> str:
    """A score for humans: ``0.532``; booleans as yes/no; missing as an en dash."""
    if _missing(value):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_int(value: Any) -> str:
    """An integer count with thousands separators (``10,000``)."""
    return "–" if _missing(value) else f"{int(value):,}"


def fmt_pct(value: Any, digits: int = 1) -> str:
    """A fraction as a percentage (``0.531`` → ``53.1%``)."""
    return "–" if _missing(value) else f"{100 * float(value):.{digits}f}%"


def fmt_ci(low: Any, high: Any, digits: int = 3) -> str:
    """A confidence interval ``[0.41, 0.55]``."""
    if _missing(low) or _missing(high):
        return "–"
    return f"[{float(low):.{digits}f}, {float(high):.{digits}f}]"


def fmt_ms(value: Any) -> str:
    """A latency in milliseconds: ``840 ms``, ``1.25 s``, ``2.1 min``."""
    if _missing(value):
        return "–"
    ms = float(value)
    if ms < 1:
        return f"{ms:.2f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.2f} s"
    return f"{ms / 60_000:.1f} min"


def fmt_duration(seconds: Any) -> str:
    """A run time: ``42.0 s``, ``3 min 05 s``, ``1 h 02 min``."""
    if _missing(seconds):
        return "–"
    s = float(seconds)
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60):02d} s"
    return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} min"


def format_delta(value: float, digits: int = 3) -> str:
    """A signed difference: ``+0.040`` / ``−0.012`` / ``±0.000``."""
    if value is None or np.isnan(value):
        return "–"
    if round(value, digits) == 0:
        return f"±{0:.{digits}f}"
    return f"+{value:.{digits}f}" if value > 0 else f"−{abs(value):.{digits}f}"


def format_p(p: float) -> str:
    """``p<0.001``, ``p<0.01``, else ``p=0.23`` (Holm-adjusted p is what tables show)."""
    if p is None or np.isnan(p):
        return "p=–"
    if p < 0.001:
        return "p<0.001"
    if p < 0.01:
        return "p<0.01"
    return f"p={p:.2f}"


def significance_mark(p: float) -> str:
    """``**`` for p < 0.01, ``*`` for p < 0.05, else empty."""
    if p is None or np.isnan(p):
        return ""
    return "**" if p < 0.01 else "*" if p < 0.05 else ""


__all__ = [
    "fmt_ci",
    "fmt_duration",
    "fmt_int",
    "fmt_ms",
    "fmt_num",
    "fmt_pct",
    "format_delta",
    "format_p",
    "significance_mark",
]
