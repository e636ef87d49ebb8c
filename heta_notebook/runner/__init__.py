"""Where a run happens: one package for benchmark runs and ``evaluate()``.

Front doors (public): ``benchmark`` (``BenchmarkRunner``, ``run_benchmark``), ``evaluate``
(``evaluate``, ``aevaluate``), ``config`` (``BenchmarkRunConfig``), ``result``
(``BenchmarkRunResult``, ``RunCollection``), ``executors`` (``Executor``, ``LocalExecutor``:
who carries out recipe runs) and ``loop`` (``run_sync``: sync entry points and the
notebook's event loop).

Machinery (private), in the order a run goes through it: ``_inputs`` (the one benchmark
loader, recipes, evaluators, the store, heta-framework adaptation), ``_plan`` (the (case,
mode) items, resume, the report), ``_pool`` (bounded workers, checkpoints), ``_scoring``
(evaluators with timeouts, retries, isolation), ``_statistics`` (summary, intervals,
environment) and ``_progress`` (the tqdm bar).
"""

from __future__ import annotations

from heta_notebook.runner.benchmark import BenchmarkRunner, run_benchmark
from heta_notebook.runner.config import BenchmarkRunConfig
from heta_notebook.runner.evaluate import aevaluate, evaluate
from heta_notebook.runner.executors import Executor, LocalExecutor, RecipeRun
from heta_notebook.runner.loop import run_sync
from heta_notebook.runner.result import BenchmarkRunResult, RunCollection

__all__ = [
    "BenchmarkRunConfig",
    "BenchmarkRunResult",
    "BenchmarkRunner",
    "Executor",
    "LocalExecutor",
    "RecipeRun",
    "RunCollection",
    "aevaluate",
    "evaluate",
    "run_benchmark",
    "run_sync",
]
