"""Lazy package exports: a subpackage names what it exports, and each name loads on first use.

Subpackage ``__init__``s stay import-free this way, so importing one internal module never
drags in its siblings (and no import cycle can form through an ``__init__``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, exports: dict[str, str]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for ``package``: name -> its module."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    names = sorted(exports)
    return names, __getattr__, lambda: names


__all__ = ["lazy_exports"]
