"""Who carries out a benchmark run's recipe runs: the executor hook.

``BenchmarkRunner.run(..., executor=...)`` turns each recipe into one ``RecipeRun`` (plain
data: the loaded benchmark, the recipe, its label and KB name, the evaluators and the run
options) and hands the list to ``executor.run``. ``LocalExecutor`` (the default) runs them
one after the other on this process's event loop through ``benchmark.run_recipe``. Another
executor (e.g. a Ray one) may ship them elsewhere, or split one into case shards with the
pieces in ``_plan`` and ``_pool``, as long as it returns one ``BenchmarkRunResult`` per
``RecipeRun``, in order, and checkpoints to a store every worker reaches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.benchmarks._loader import LoadedBenchmark
    from heta_notebook.reports._store import ReportStore
    from heta_notebook.runner._config import BenchmarkRunConfig
    from heta_notebook.runner._result import BenchmarkRunResult


@dataclass(frozen=True)
class RecipeRun:
    """One recipe on one loaded benchmark, with everything needed to build, query and score."""

    loaded: LoadedBenchmark
    recipe: Any
    label: str
    kb_name: str
    evaluators: tuple[Any, ...]
    config: BenchmarkRunConfig
    store: ReportStore | None
    resume: bool
    rebuild: bool
    progress: bool
    workspace: Path
    query_modes: Sequence[str] | str | None
    subset: dict[str, Any] | None = None  # CaseSubset.describe(): part of the fingerprint


@runtime_checkable
class Executor(Protocol):
    """Carries out recipe runs and returns their results in the order given."""

    async def run(self, runs: Sequence[RecipeRun]) -> list[BenchmarkRunResult]:
        """A ``BenchmarkRunResult`` per ``RecipeRun``, in order; after a stop, the ones begun."""
        ...


class LocalExecutor:
    """The default: each recipe run in turn on the current event loop, in this process."""

    async def run(self, runs: Sequence[RecipeRun]) -> list[BenchmarkRunResult]:
        """Run every recipe in order; a stop ends the list with that (partial) run's result."""
        from heta_notebook.runner._benchmark import run_recipe

        results = []
        for job in runs:
            results.append(await run_recipe(job))
            if results[-1].report.metadata.get("interrupted"):
                break  # stop means stop: the next recipes do not start
        return results

    def __repr__(self) -> str:
        return "LocalExecutor()"


__all__ = ["Executor", "LocalExecutor", "RecipeRun"]
