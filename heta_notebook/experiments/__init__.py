"""Deprecated: ``evaluate``/``aevaluate`` live in ``heta_notebook.runner`` (this alias remains)."""

from __future__ import annotations

import warnings

from heta_notebook.runner.evaluate import *  # noqa: F403
from heta_notebook.runner.evaluate import __all__, response_from_outputs  # noqa: F401

warnings.warn(
    "heta_notebook.experiments moved to heta_notebook.runner (import evaluate from there or "
    "from heta_notebook)",
    DeprecationWarning,
    stacklevel=2,
)
