"""One look for every view: stable colours per label, one plotly template, number formats.

A query mode or recipe keeps its colour in every figure and every call: the colour comes
from the label itself (a few common mode names are pinned, others hash into the palette),
so ``bm25`` is the same blue in the metrics bars, the latency box plot and a comparison.
"""

from __future__ import annotations

import hashlib
import textwrap
from collections.abc import Iterable
from typing import Any

from heta_notebook._util.formatting import (  # noqa: F401 - one number-format module, re-exported
    fmt_ci,
    fmt_duration,
    fmt_int,
    fmt_ms,
    fmt_num,
    fmt_pct,
)

# Paul Tol's "muted" scheme (colour-blind safe, distinct in print and greyscale order): nine
# colours for nine or more lines, then a neutral grey kept for collisions.
PALETTE: tuple[str, ...] = (
    "#332288",  # indigo
    "#CC6677",  # rose
    "#117733",  # green
    "#88CCEE",  # cyan
    "#882255",  # wine
    "#44AA99",  # teal
    "#999933",  # olive
    "#AA4499",  # purple
    "#DDCC77",  # sand
    "#777777",  # grey
)
# Common query-mode names get fixed, meaningful slots; everything else hashes.
PINNED: dict[str, int] = {
    "bm25": 0,
    "full_text_search": 0,
    "keyword": 0,
    "keyword_search": 0,
    "dense": 1,
    "vector": 1,
    "vector_search": 1,
    "dense_search": 1,
    "naive": 1,
    "hybrid": 2,
    "hybrid_search": 2,
    "mix": 2,
    "local": 4,
    "global": 5,
}
FIRST_FREE_SLOT = 3  # slots 0-2: the full-text, vector and hybrid colours
TEMPLATE_NAME = "heta"
OK, BAD, WARN, MUTED = "#2E7D32", "#C62828", "#B26A00", "#6B7280"
FONT = "-apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"


def _slot(label: str) -> int:
    key = str(label).strip().lower()
    if key in PINNED:
        return PINNED[key]
    digest = hashlib.blake2s(key.encode("utf-8"), digest_size=4).digest()
    # Other labels (recipes, custom modes) hash into the slots no common mode name pins, so a
    # recipe never wears hybrid_search's green; grey (the last colour) is kept for collisions.
    free = len(PALETTE) - 1 - FIRST_FREE_SLOT
    return FIRST_FREE_SLOT + int.from_bytes(digest, "big") % free


def color_for(label: Any) -> str:
    """The colour of ``label`` (deterministic across processes, figures and calls)."""
    return PALETTE[_slot(str(label))]


def color_map(labels: Iterable[Any]) -> dict[str, str]:
    """Colours for several labels: each label's own colour, collisions moved to a free slot.

    Collisions are resolved in sorted label order, so the result does not depend on the
    order the labels arrive in (the same set of labels always gets the same colours).
    """
    unique = sorted({str(label) for label in labels})
    taken: set[int] = set()
    out: dict[str, str] = {}
    # pinned/hashed first choices win in sorted order; later labels probe to the next free slot
    for label in unique:
        slot = _slot(label)
        if len(taken) < len(PALETTE):
            while slot in taken:
                slot = (slot + 1) % len(PALETTE)
        taken.add(slot)
        out[label] = PALETTE[slot]
    return out


def fit_title(text: str, width: int = 70) -> dict[str, Any]:
    """Layout updates for a title that fits a static export: the (escaped) text wrapped at
    ``width`` characters with ``<br>``, and a top margin tall enough for every line."""
    lines = textwrap.wrap(str(text), width=width, break_long_words=False) or [""]
    title = {"text": "<br>".join(lines), "yref": "container", "y": 1, "yanchor": "top"}
    title["pad"] = {"t": 14}
    return {"title": title, "margin": {"t": 44 + 21 * len(lines)}}


def plotly_template() -> Any:
    """The ``heta`` plotly template (registered once in ``plotly.io.templates``)."""
    import plotly.graph_objects as go
    import plotly.io as pio

    if TEMPLATE_NAME not in pio.templates:
        base = pio.templates["plotly_white"]
        template = go.layout.Template(base)
        template.layout.update(
            colorway=list(PALETTE),
            font={"family": FONT, "size": 13, "color": "#1F2937"},
            title={"font": {"size": 16}, "x": 0.01, "xanchor": "left"},
            hoverlabel={"align": "left", "font": {"family": FONT, "size": 12}},
            legend={"title": {"font": {"size": 12}}, "font": {"size": 12}},
            margin={"l": 60, "r": 20, "t": 60, "b": 50},
            bargap=0.18,
            bargroupgap=0.06,
        )
        pio.templates[TEMPLATE_NAME] = template
    return pio.templates[TEMPLATE_NAME]


__all__ = [
    "CSS",
    "BAD",
    "MUTED",
    "OK",
    "PALETTE",
    "TEMPLATE_NAME",
    "WARN",
    "color_for",
    "color_map",
    "fit_title",
    "fmt_ci",
    "fmt_duration",
    "fmt_int",
    "fmt_ms",
    "fmt_num",
    "fmt_pct",
    "plotly_template",
]


# Shared stylesheet of cards, explorers and exports. Every rule is scoped under ``.hn`` so it
# never restyles the notebook around it. A white background keeps it readable on dark themes.
CSS = """
.hn{font-family:__FONT__;font-size:13px;line-height:1.45;color:#1F2937;background:#fff;max-width:100%}
.hn *{box-sizing:border-box}
.hn h3{font-size:16px;margin:0 0 4px 0;font-weight:600}
.hn h4{font-size:14px;margin:12px 0 4px 0;font-weight:600}
.hn .hn-sub{color:#6B7280;font-size:12px}
.hn .hn-head{display:flex;flex-wrap:wrap;align-items:baseline;gap:8px;margin-bottom:6px}
.hn .hn-facts{display:flex;flex-wrap:wrap;gap:4px 18px;margin:6px 0 10px 0;font-size:12px}
.hn .hn-facts b{font-weight:600;color:#374151}
.hn table.hn-table{border-collapse:collapse;margin:4px 0;font-size:12.5px}
.hn table.hn-table th,.hn table.hn-table td{border-bottom:1px solid #E5E7EB;padding:3px 10px;
 text-align:right;vertical-align:top}
.hn table.hn-table th:first-child,.hn table.hn-table td:first-child{text-align:left}
.hn table.hn-table thead th{border-bottom:2px solid #9CA3AF;font-weight:600;background:#F9FAFB}
.hn table.hn-left td,.hn table.hn-left th{text-align:left}
.hn td.hn-best{font-weight:700;background:#E8F5E9}
.hn .hn-ci{display:block;color:#6B7280;font-size:10.5px;font-weight:400}
.hn .hn-bounds{font-size:11.5px;font-weight:400;color:#374151;white-space:nowrap}
.hn .hn-badge{display:inline-block;border-radius:9px;padding:0 7px;font-size:11px;font-weight:600;
 line-height:17px;border:1px solid transparent;white-space:nowrap}
.hn .hn-ok{background:#E8F5E9;color:#1B5E20;border-color:#A5D6A7}
.hn .hn-bad{background:#FFEBEE;color:#B71C1C;border-color:#EF9A9A}
.hn .hn-warn{background:#FFF8E1;color:#8D5B00;border-color:#FFD54F}
.hn .hn-info{background:#E3F2FD;color:#0D47A1;border-color:#90CAF9}
.hn .hn-muted{background:#F3F4F6;color:#4B5563;border-color:#D1D5DB}
.hn .hn-swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;
 vertical-align:baseline}
.hn pre.hn-json,.hn pre.hn-text{white-space:pre-wrap;word-break:break-word;background:#F9FAFB;
 border:1px solid #E5E7EB;border-radius:4px;padding:6px 8px;margin:2px 0;font-size:12px;
 max-height:260px;overflow:auto}
.hn .hn-reason{border-left:4px solid #F58518;background:#FFF7ED;padding:6px 10px;margin:4px 0;
 white-space:pre-wrap;word-break:break-word}
.hn .hn-answer{border-left:4px solid #4C78A8;background:#F0F5FB;padding:6px 10px;margin:4px 0;
 white-space:pre-wrap;word-break:break-word}
.hn .hn-error{border-left:4px solid #C62828;background:#FFEBEE;padding:6px 10px;margin:4px 0;
 white-space:pre-wrap;word-break:break-word}
.hn .hn-result{border:1px solid #E5E7EB;border-radius:4px;padding:4px 8px;margin:4px 0}
.hn .hn-result.hn-rel{border-left:4px solid #2E7D32}
.hn .hn-chunk{color:#374151;font-size:12px;white-space:pre-wrap;word-break:break-word}
.hn dl.hn-dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0}
.hn dl.hn-dl dt{font-weight:600;color:#374151}
.hn dl.hn-dl dd{margin:0;word-break:break-word}
.hn details{margin:3px 0;border:1px solid #E5E7EB;border-radius:4px;padding:2px 8px}
.hn details>summary{cursor:pointer;padding:2px 0}
.hn .hn-note{color:#6B7280;font-size:12px;font-style:italic;margin:4px 0}
""".replace("__FONT__", FONT)
