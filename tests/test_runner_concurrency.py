"""Concurrency: the bound holds, work is pulled lazily (no task per case), evaluators overlap,
and a worker asks its next query before its reply is read."""

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


async def test_a_worker_asks_its_next_query_before_reading_its_reply(monkeypatch):
    """With only batch-scored metrics, replies are read after their worker's next query is
    asked: replies that arrive together restart their queries together."""
    from heta_notebook.evaluators._retrieval import beir_default_metrics
    from heta_notebook.runner import _pool

    events: list[str] = []
    read = _pool.read_reply

    def logged_read(reply):
        events.append(f"read {reply.item.case.query}")
        return read(reply)

    class LoggingKB(ToyKB):
        async def query(self, text, **kwargs):
            events.append(f"ask {text}")
            return await super().query(text, **kwargs)

    monkeypatch.setattr(_pool, "read_reply", logged_read)
    report = (
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(cases=make_cases(3), evaluators=beir_default_metrics((1,))),
            recipe=LoggingKB(delay=0.001),
            query_modes=("alpha",),
            config=BenchmarkRunConfig(max_concurrent_queries=1, preflight_queries=0),
            progress=False,
        )
    ).report
    assert len(report.case_results) == 3
    queries = [case.query for case in make_cases(3)]
    assert events[:3] == [f"ask {queries[0]}", f"ask {queries[1]}", f"read {queries[0]}"]


async def test_replies_read_later_score_as_replies_read_at_once(monkeypatch):
    """The same run with every reply read by its worker before its next query (the path of
    per-case evaluators) gives the same case results, summary and statistics."""
    from heta_notebook.evaluators._retrieval import beir_default_metrics
    from heta_notebook.runner._scoring import CaseScorer
    from tests._runner_helpers import comparable

    async def run():
        cases = make_cases(40)
        return (
            await BenchmarkRunner().run(
                benchmark=ListBenchmark(cases=cases, evaluators=beir_default_metrics((1, 3))),
                recipe=ToyKB(delay=0.001, fail_on=[cases[5].query, cases[17].query]),
                config=BenchmarkRunConfig(max_concurrent_queries=6),
                progress=False,
            )
        ).report

    later = await run()
    monkeypatch.setattr(CaseScorer, "__init__", _with_batch_only_off(CaseScorer.__init__))
    at_once = await run()
    assert sum(r.error is not None for r in later.case_results) == 4
    assert comparable(later) == comparable(at_once)
    assert later.score_summary == at_once.score_summary
    assert later.metadata["score_stats"] == at_once.metadata["score_stats"]


def _with_batch_only_off(init):
    def patched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.batch_only = False

    return patched


async def test_replies_are_read_a_whole_round_at_a_time(monkeypatch):
    """Replies are read (and their batch scored) once every worker has answered since the
    last read, not whenever one comes in: the reading never sits between the replies of one
    round. Replies here come in one at a time (each query waits a little longer than the
    one before), so reading them as they come would take one read per case."""
    from heta_notebook.evaluators._retrieval import beir_default_metrics
    from heta_notebook.runner import _pool

    reads: list[int] = []
    read = _pool._Pool.read_replies

    def counted(self):
        reads.append(len(self.replies))
        return read(self)

    class Staggered(ToyKB):
        async def query(self, text, **kwargs):
            await asyncio.sleep(0.001 * (int(text.rsplit(" ", 1)[-1]) % 4))
            return await super().query(text, **kwargs)

    monkeypatch.setattr(_pool._Pool, "read_replies", counted)
    monkeypatch.setattr(_pool, "READ_WINDOW", 60.0)  # only whole rounds (and the end) read
    report = (
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(cases=make_cases(60), evaluators=beir_default_metrics((1,))),
            recipe=Staggered(delay=0.002),
            query_modes=("alpha",),
            config=BenchmarkRunConfig(max_concurrent_queries=4, preflight_queries=0),
            progress=False,
        )
    ).report
    assert len(report.case_results) == 60
    assert sum(reads) == 60
    assert len([n for n in reads if n]) <= 60 // 4 + 4  # a read per round, and the last ones
