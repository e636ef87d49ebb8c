"""Shared helpers of the heta-framework adapters: the lazy import and JSON-safe copies."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

INSTALL_HINT = "pip install 'heta-notebook[heta]'"


def require_heta(what: str = "this feature") -> ModuleType:
    """Import ``heta_framework.evaluation`` or fail with the command that installs it."""
    try:
        import heta_framework.evaluation as evaluation
    except ImportError as exc:
        raise ImportError(
            f"{what} needs heta-framework, which is not installed; install it with: {INSTALL_HINT}"
        ) from exc
    return evaluation


def is_heta_object(obj: object) -> bool:
    """True when ``obj`` is an instance of a class defined in ``heta_framework``.

    Looks only at the type's module name, so it never imports heta-framework.
    """
    module = getattr(type(obj), "__module__", "") or ""
    return module == "heta_framework" or module.startswith("heta_framework.")


def json_safe(value: Any) -> Any:
    """A JSON-friendly copy: tuples/sets become lists, paths strings, other objects a note."""
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        return [json_safe(item) for item in value]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return json_safe(to_dict())
    return {"type": type(value).__name__, "manifest_note": "value omitted: not JSON-safe"}
