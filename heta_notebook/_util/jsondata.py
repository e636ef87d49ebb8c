"""JSON-safe copies, the one home of both rules: ``json_safe`` for what users hand us (numpy
values, pydantic records, other objects: JSON data kept as it is), so whatever a report keeps
round-trips through JSON; ``json_copy`` for heta-framework's records (always a new tree, and
an object that is not JSON a note, never its text)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def json_safe(value: Any) -> Any:
    """``value`` unchanged when it is JSON data, else a JSON copy (numpy → lists, records →
    their JSON form, anything else → ``str``)."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=_jsonable))


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return str(value)


def json_copy(value: Any) -> Any:
    """A JSON-friendly copy: tuples/sets become lists, paths strings, other objects a note."""
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(key): json_copy(item) for key, item in value.items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        return [json_copy(item) for item in value]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return json_copy(to_dict())
    return {"type": type(value).__name__, "manifest_note": "value omitted: not JSON-safe"}


__all__ = ["json_copy", "json_safe"]
