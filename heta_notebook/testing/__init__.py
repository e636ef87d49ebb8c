"""Regression gates for pytest and CI: ``assert_no_regression``, ``assert_scores`` and the
checks behind them (``_gates``), and the pytest plugin (``pytest_plugin``: the
``heta_baseline`` fixture and ``--heta-update-baseline``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_notebook._util.lazy import lazy_exports

_EXPORTS = {
    "GateInputError": "heta_notebook.testing._gates",
    "GateResult": "heta_notebook.testing._gates",
    "RegressionError": "heta_notebook.testing._gates",
    "assert_no_regression": "heta_notebook.testing._gates",
    "assert_scores": "heta_notebook.testing._gates",
    "check_regression": "heta_notebook.testing._gates",
    "check_scores": "heta_notebook.testing._gates",
    "load_report": "heta_notebook.testing._gates",
    "parse_floor": "heta_notebook.testing._gates",
    "slim_report": "heta_notebook.testing._gates",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the lazy exports, spelled out for type checkers
    from heta_notebook.testing._gates import (  # noqa: F401
        GateInputError,
        GateResult,
        RegressionError,
        assert_no_regression,
        assert_scores,
        check_regression,
        check_scores,
        load_report,
        parse_floor,
        slim_report,
    )
