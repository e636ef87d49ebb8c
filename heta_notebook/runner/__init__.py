"""Where a run happens: one package for benchmark runs and ``evaluate()``.

Exports: ``BenchmarkRunner``/``run_benchmark`` (``_benchmark``), ``evaluate``/``aevaluate``
(``_evaluate``), ``BenchmarkRunConfig`` (``_config``), ``BenchmarkRunResult``/``RunCollection``
(``_result``), ``Executor``/``LocalExecutor``/``RecipeRun`` (``_executors``: who carries out
recipe runs), ``RayExecutor`` (``_ray_executor``) and ``run_sync`` (from ``_util.loop``: sync
entry points on the notebook's event loop).

Machinery, in the order a run goes through it: ``_inputs`` (recipes, evaluators, the store),
``_plan`` (the (case, mode) items, resume through the store's run handle, the report),
``_pool`` (bounded workers, checkpoints), ``_scoring`` (evaluators with timeouts, retries,
isolation), ``_statistics`` (summary, intervals, environment) and ``_progress`` (the bar).
"""

from __future__ import annotations

from heta_notebook._util.loop import LoopMismatchError, run_sync
from heta_notebook.runner._benchmark import BenchmarkRunner, run_benchmark
from heta_notebook.runner._config import BenchmarkRunConfig
from heta_notebook.runner._evaluate import aevaluate, evaluate
from heta_notebook.runner._executors import Executor, LocalExecutor, RecipeRun
from heta_notebook.runner._ray_executor import RayExecutor
from heta_notebook.runner._result import BenchmarkRunResult, RunCollection

__all__ = [
    "BenchmarkRunConfig",
    "BenchmarkRunResult",
    "BenchmarkRunner",
    "Executor",
    "LocalExecutor",
    "LoopMismatchError",
    "RayExecutor",
    "RecipeRun",
    "RunCollection",
    "aevaluate",
    "evaluate",
    "run_benchmark",
    "run_sync",
]
