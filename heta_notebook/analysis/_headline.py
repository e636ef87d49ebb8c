"""What a comparison's headline says beside its score: the settings that changed.

(The score a headline shows first is ``schema._headline.headline_score``, the one rule.)

The settings (``setting_changes``): of two flattened recipe manifests, the keys whose values
differ, leaving out names, hashes and timestamps. Keys both recipes set come first; keys only
one sets follow. Two manifests that share no setting at all describe different systems (a
user's own KB next to an embedded recipe): listing every key of one against "—" would say
nothing, so there are no setting changes to list.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

IDENTITY_KEYS = ("name", "type", "kind", "created_at", "updated_at", "manifest_hash", "hash")
UNSET = object()  # a key the manifest does not have


def setting_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """(key, value in a, value in b) of the settings that differ; [] for different systems."""
    a, b = _settings(a), _settings(b)
    if not a.keys() & b.keys():
        return []
    keys = list(dict.fromkeys([*a, *b]))
    changed = [(k, a.get(k, UNSET), b.get(k, UNSET)) for k in keys if _key(a, k) != _key(b, k)]
    return sorted(changed, key=lambda c: UNSET in (c[1], c[2]))  # set on both sides first


def setting_text(value: Any, limit: int = 40) -> str:
    """A setting's value for a line: ``—`` when unset, ``none`` for null/NaN, JSON else; never
    cut mid-value (a list or dict longer than ``limit`` is named by its size: ``{3 keys}``)."""
    if value is UNSET:
        return "—"
    if _is_null(value):
        return "none"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if len(text) <= limit or isinstance(value, str):
        return text
    if isinstance(value, Mapping):
        return f"{{{len(value)} keys}}"
    if isinstance(value, (list, tuple)):
        return f"[{len(value)} items]"
    return text


def _settings(flat: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in flat.items() if k.split(".")[-1] not in IDENTITY_KEYS}


def _key(flat: Mapping[str, Any], key: str) -> str:
    value = flat.get(key, UNSET)
    if value is UNSET or _is_null(value):  # an unset key and a null one say the same
        return "null"
    return json.dumps(value, sort_keys=True, default=str)


def _is_null(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


__all__ = ["setting_changes", "setting_text"]
