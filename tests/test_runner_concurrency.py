"""Concurrency: the bound holds, work is pulled lazily (no task per case), evaluators overlap."""

from __future__ import annotations

import asyncio

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner
from heta_notebook.schema import EvaluationScore
from tests._runner_helpers import ListBenchmark, TopHit, ToyKB, make_cases


async def test_concurrent_queries_never_exceed_the_bound_and_reach_it():
    kb = ToyKB(delay=0.01)
    config = BenchmarkRunConfig(max_concurrent_queries=4)
    report = (
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(cases=make_cases(40), evaluators=(TopHit(),)),
            recipe=kb,
            config=config,
            progress=False,
        )
    ).report
    assert len(report.case_results) == 80
    assert kb.max_active == 4


async def test_many_cases_do_not_allocate_a_task_each():
    kb = ToyKB(delay=0.0005)
    config = BenchmarkRunConfig(max_concurrent_queries=8)
    before = len(asyncio.all_tasks())
    report = (
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(cases=make_cases(3000), evaluators=(TopHit(),)),
            recipe=kb,
            query_modes=("alpha",),
            config=config,
            progress=False,
        )
    ).report
    assert len(report.case_results) == 3000
    assert kb.max_active == 8
    assert kb.max_tasks <= before + 8  # the 8 workers, not 3,000 case tasks


async def test_evaluators_of_one_case_run_concurrently():
    state = {"active": 0, "max": 0}

    class Waiting:
        def __init__(self, name):
            self.name = name

        async def evaluate(self, *, case, response):
            state["active"] += 1
            state["max"] = max(state["max"], state["active"])
            await asyncio.sleep(0.01)
            state["active"] -= 1
            return EvaluationScore(name=self.name, value=1.0)

    config = BenchmarkRunConfig(max_concurrent_queries=1)
    report = (
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(cases=make_cases(2)),
            recipe=ToyKB(),
            query_modes=("alpha",),
            evaluators=[Waiting("a"), Waiting("b"), Waiting("c")],
            config=config,
            progress=False,
        )
    ).report
    assert state["max"] == 3
    assert [s.name for s in report.case_results[0].scores] == [
        "a",
        "b",
        "c",
    ]  # evaluator order kept
