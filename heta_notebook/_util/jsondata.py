"""JSON-safe copies of what users hand us (numpy values, pydantic records, other objects), so
whatever a report keeps round-trips through JSON."""

from __future__ import annotations

import json
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


__all__ = ["json_safe"]
