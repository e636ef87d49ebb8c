"""The benchmark's own text for a result that came back as a bare id (``(id, score)`` pairs).

A run of a user's system keeps the benchmark's documents here, by benchmark key, in this
process (the last ``MAX_KEPT`` benchmarks; nothing goes into a report). The explorers ask
:func:`shown_text` for each result: a result with no text of its own whose document is known
shows the benchmark document's text, marked as the benchmark's (``BENCHMARK_TEXT``), never as
the system's. A report opened in another process shows what it stored.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

MAX_KEPT = 3
BENCHMARK_TEXT = "[benchmark's text: the system returned this document without text] "
_KEPT: OrderedDict[str, dict[str, Any]] = OrderedDict()


def remember_documents(key: str, documents: Sequence[Any]) -> None:
    """Keep ``documents`` (``BenchmarkDocument``s) as the texts of benchmark ``key``."""
    _KEPT[key] = {d.document_id: d for d in documents}
    _KEPT.move_to_end(key)
    while len(_KEPT) > MAX_KEPT:
        _KEPT.popitem(last=False)


def benchmark_text(key: str | None, document_id: str | None) -> str | None:
    """The text of document ``document_id`` of benchmark ``key``, when this process has it."""
    document = _KEPT.get(key or "", {}).get(document_id or "")
    if document is None:
        return None
    try:
        return str(document.read_text()) or None
    except (OSError, ValueError):  # a file moved since the run: nothing to show
        return None


def shown_text(text: str | None, key: str | None, document_id: str | None) -> str | None:
    """``text`` when the system gave one, else the benchmark's text marked as such (or None)."""
    if text:
        return text
    found = benchmark_text(key, document_id)
    return BENCHMARK_TEXT + found if found else text


__all__ = ["BENCHMARK_TEXT", "benchmark_text", "remember_documents", "shown_text"]
