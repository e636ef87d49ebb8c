"""Bring heta-framework objects to heta_notebook, and ours to heta-framework.

heta-framework (module ``heta_framework``) is optional: install it with
``pip install 'heta-notebook[heta]'``. Nothing here imports it at module import time; each
function imports it when called, so ``import heta_notebook`` stays light.

The runner calls :func:`is_heta_object` on the benchmark, recipe and evaluators it is given
and wraps heta-framework ones with :func:`adapt_benchmark`, :func:`adapt_recipe` and
:func:`adapt_evaluator`. Reports convert both ways with :func:`to_heta_report` and
:func:`from_heta_report`; :func:`as_heta_evaluator` lets our evaluators run inside
heta-framework's own ``BenchmarkRunner``.
"""

from __future__ import annotations

from heta_notebook.integrations.heta._benchmarks import HetaBenchmarkAdapter, adapt_benchmark
from heta_notebook.integrations.heta._common import is_heta_object, require_heta
from heta_notebook.integrations.heta._evaluators import (
    HetaEvaluatorAdapter,
    OurEvaluatorForHeta,
    adapt_evaluator,
    as_heta_evaluator,
)
from heta_notebook.integrations.heta._recipes import (
    HetaKnowledgeBaseAdapter,
    HetaRecipeAdapter,
    adapt_recipe,
    redact_secrets,
)
from heta_notebook.integrations.heta._reports import from_heta_report, to_heta_report

__all__ = [
    "HetaBenchmarkAdapter",
    "HetaEvaluatorAdapter",
    "HetaKnowledgeBaseAdapter",
    "HetaRecipeAdapter",
    "OurEvaluatorForHeta",
    "adapt_benchmark",
    "adapt_evaluator",
    "adapt_recipe",
    "as_heta_evaluator",
    "from_heta_report",
    "is_heta_object",
    "redact_secrets",
    "require_heta",
    "to_heta_report",
]
