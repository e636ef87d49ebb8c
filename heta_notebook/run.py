"""Deprecated: the run machinery moved into the ``heta_notebook.runner`` package.

``heta_notebook.run.<module>`` still imports (each old module name maps to its new home).
"""

from __future__ import annotations

import sys
import warnings

from heta_notebook.runner import (
    _inputs,
    _plan,
    _pool,
    _progress,
    _scoring,
    _statistics,
    config,
    result,
)

_MOVED = {
    "config": config,
    "result": result,
    "inputs": _inputs,
    "session": _plan,
    "execute": _pool,
    "scoring": _scoring,
    "report": _statistics,
    "progress": _progress,
}
for _name, _module in _MOVED.items():
    sys.modules[f"{__name__}.{_name}"] = _module
    globals()[_name] = _module

warnings.warn("heta_notebook.run moved to heta_notebook.runner", DeprecationWarning, stacklevel=2)
