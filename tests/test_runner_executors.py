"""The executor hook: ``run_benchmark(..., executor=)`` hands each recipe run to an executor;
the local asyncio executor is the default and stops after a stopped recipe."""

from __future__ import annotations

import pytest

from heta_notebook import BenchmarkRunner, run_benchmark
from heta_notebook.runner import Executor, LocalExecutor, RecipeRun
from tests._runner_helpers import ListBenchmark, TopHit, ToyKB, make_cases


class RecordingExecutor(LocalExecutor):
    """The local executor, noting the recipe runs it was given."""

    def __init__(self) -> None:
        self.runs: list[RecipeRun] = []

    async def run(self, runs):
        self.runs.extend(runs)
        return await super().run(runs)


def test_recipe_runs_go_to_the_given_executor():
    executor = RecordingExecutor()
    assert isinstance(executor, Executor)
    runs = run_benchmark(
        benchmark=ListBenchmark(cases=make_cases(3), evaluators=(TopHit(),)),
        recipes={"a": ToyKB(name="a"), "b": ToyKB(name="b")},
        progress=False,
        executor=executor,
    )
    assert [job.label for job in executor.runs] == ["a", "b"]
    assert [job.kb_name for job in executor.runs] == ["toy-a", "toy-b"]
    assert len(executor.runs[0].loaded.cases) == 3 and executor.runs[0].evaluators
    assert runs.labels == ("a", "b") and all(len(r.case_results) == 6 for r in runs)


async def test_a_stopped_recipe_ends_the_collection():
    bench = ListBenchmark(cases=make_cases(20), evaluators=(TopHit(),))
    second = ToyKB(name="b")
    with pytest.warns(RuntimeWarning, match="interrupted"):
        runs = await BenchmarkRunner().run(
            benchmark=bench,
            recipes={"a": ToyKB(name="a", interrupt_after=5), "b": second},
            progress=False,
        )
    assert runs.labels == ("a",) and runs["a"].is_partial
    assert second.calls == 0  # stop means stop: the next recipe never started
