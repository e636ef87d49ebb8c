"""Sums for small JSON files we write (a store's ``summary.json`` listing rows): a sealed object
carries the sha256 of its own canonical JSON, so any changed byte is detected on read.

``seal(obj)`` adds the sum; ``unseal(text)`` returns ``(obj, None)`` when the sum holds,
``(obj, NO_SUM)`` for an object written before sums (unchecked: the caller decides), or
``(None, problem)`` naming what is wrong (not JSON, not an object, a wrong sum). A reader then
rebuilds the file from its source (the report) instead of trusting it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

SUM_KEY = "_sha256"
NO_SUM = "no checksum"


def _digest(obj: dict[str, Any]) -> str:
    body = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(body.encode("ascii")).hexdigest()


def seal(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with the sha256 of its canonical JSON under ``_sha256`` (JSON round-trips
    floats exactly, so a reader recomputes the same sum)."""
    clean = json.loads(json.dumps({k: v for k, v in obj.items() if k != SUM_KEY}, default=str))
    return {**clean, SUM_KEY: _digest(clean)}


def unseal(text: str | bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The object in sealed JSON ``text`` and None, or None and what is wrong with it."""
    try:
        obj = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"not valid JSON ({exc})"
    if not isinstance(obj, dict):
        return None, "not a JSON object"
    given = obj.pop(SUM_KEY, None)
    if given is None:
        return obj, NO_SUM
    if given != _digest(obj):
        return None, "its checksum does not match its content"
    return obj, None


__all__ = ["NO_SUM", "SUM_KEY", "seal", "unseal"]
