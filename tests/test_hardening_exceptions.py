"""BaseException subclasses and user asyncio timeouts are not swallowed nor misnamed (issue #16)."""

from __future__ import annotations

import asyncio

from heta_notebook import (
    BenchmarkRunConfig,
    EvaluatorSettings,
    QueryResponse,
    QueryResult,
    RecordsBenchmark,
    ReportStore,
    aevaluator,
    evaluate,
    run_benchmark,
)


class Halt(BaseException):
    """Not an Exception: user code meaning 'stop everything'."""


class _Kb:
    async def query(self, text, *, mode, top_k, options=None):
        return QueryResponse(mode=mode, answer="a", results=[QueryResult(id="r", text="t")])


class _HaltingEvaluator:
    name = "halts"

    async def evaluate(self, *, case, response):
        raise Halt("stop")


class _OwnTimeout:
    name = "own_timeout"

    async def evaluate(self, *, case, response):
        async with asyncio.timeout(0.01):  # the evaluator's own bound, far below the runner's
            await asyncio.sleep(5)


class _Slow:
    name = "slow"

    async def evaluate(self, *, case, response):
        await asyncio.sleep(5)


BENCH = [{"id": f"c{i}", "query": "q", "answer": "a"} for i in range(4)]


def _run(tmp_path, evaluators, **config):
    result = run_benchmark(
        benchmark=RecordsBenchmark(BENCH),
        recipe=_Kb(),
        query_modes=["m"],
        evaluators=evaluators,
        store=ReportStore(tmp_path),
        progress=False,
        config=BenchmarkRunConfig(**config) if config else None,
    )
    return result.report if hasattr(result, "report") else result


def test_a_base_exception_from_an_evaluator_interrupts_the_run_and_says_so(tmp_path):
    report = _run(tmp_path, [_HaltingEvaluator()])
    assert report.metadata.get("interrupted") == "Halt"
    assert report.is_partial
    saved = ReportStore(tmp_path).load(report.knowledge_base_name, report.report_id)
    assert saved.metadata.get("interrupted") == "Halt"


def test_a_base_exception_from_the_function_in_evaluate_is_recorded():
    def function(inputs):
        raise Halt("stop")

    report = evaluate(function=function, dataset=BENCH, progress=False)
    assert report.metadata.get("interrupted") == "Halt" and report.is_partial


def test_an_evaluators_own_asyncio_timeout_is_recorded_as_its_own(tmp_path):
    report = _run(tmp_path, [_OwnTimeout()], evaluator_timeout=30)
    errors = [s.metadata["error"] for r in report.case_results for s in r.scores]
    assert len(errors) == 4 and all(e["error_type"] == "TimeoutError" for e in errors)
    assert not any("timed out after 30 s" in e["message"] for e in errors)
    assert report.metadata.get("interrupted") is None


def test_the_runners_own_timeout_still_names_itself(tmp_path):
    report = _run(tmp_path, [_Slow()], evaluator_timeout=0.05)
    messages = {s.metadata["error"]["message"] for r in report.case_results for s in r.scores}
    assert messages == {"evaluator 'slow' timed out after 0.05 s"}


def test_a_decorated_evaluators_own_timeout_is_not_renamed(tmp_path):
    @aevaluator(settings=EvaluatorSettings(timeout=30))
    async def bounded(outputs, inputs, ground_truth):
        async with asyncio.timeout(0.01):
            await asyncio.sleep(5)
        return 1.0

    report = _run(tmp_path, [bounded])
    errors = [s.metadata["error"] for r in report.case_results for s in r.scores]
    assert errors and all(e["error_type"] == "TimeoutError" for e in errors)
    assert not any("timed out after 30 s" in e["message"] for e in errors)
