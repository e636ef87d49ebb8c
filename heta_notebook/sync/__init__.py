"""Deprecated: ``run_sync`` lives in ``heta_notebook.runner.loop`` (this alias remains)."""

from __future__ import annotations

import warnings

from heta_notebook.runner.loop import run_sync

__all__ = ["run_sync"]

warnings.warn(
    "heta_notebook.sync moved to heta_notebook.runner.loop", DeprecationWarning, stacklevel=2
)
