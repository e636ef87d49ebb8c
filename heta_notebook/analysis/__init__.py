"""Analysis: reports turned into tidy DataFrames (``_frames``), comparisons (``_compare``),
statistics (``_stats``), slices, headlines and benchmark validation (``_validate``). Nothing here renders: display is reached only
through declared lazy doors (``Comparison.plot``/``explore``/``_repr_html_``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_notebook._util.lazy import lazy_exports

_EXPORTS = {
    "BenchmarkComparison": "heta_notebook.analysis._benchmarks",
    "compare_benchmarks": "heta_notebook.analysis._benchmarks",
    "Comparison": "heta_notebook.analysis._compare",
    "Variant": "heta_notebook.analysis._alignment",
    "compare": "heta_notebook.analysis._compare",
    "ReportFrames": "heta_notebook.analysis._frames",
    "tie_effects": "heta_notebook.analysis._ties",
    "token_usage": "heta_notebook.analysis._usage",
    "usage_totals": "heta_notebook.analysis._usage",
    "BenchmarkValidation": "heta_notebook.analysis._validate",
    "SaturationWarning": "heta_notebook.analysis._validate",
    "validate_benchmark": "heta_notebook.analysis._validate",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # pragma: no cover - the lazy exports, spelled out for type checkers
    from heta_notebook.analysis._alignment import Variant  # noqa: F401
    from heta_notebook.analysis._benchmarks import (  # noqa: F401
        BenchmarkComparison,
        compare_benchmarks,
    )
    from heta_notebook.analysis._compare import (  # noqa: F401
        Comparison,
        compare,
    )
    from heta_notebook.analysis._frames import (  # noqa: F401
        ReportFrames,
    )
    from heta_notebook.analysis._ties import (  # noqa: F401
        tie_effects,
    )
    from heta_notebook.analysis._usage import (  # noqa: F401
        token_usage,
        usage_totals,
    )
    from heta_notebook.analysis._validate import (  # noqa: F401
        BenchmarkValidation,
        SaturationWarning,
        validate_benchmark,
    )
