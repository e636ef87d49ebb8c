"""The way from a reply to its worker's next query (``runner._pool``) is kept short, and
what was moved off it gives the same values: the case metadata built when the result is,
the latency worked out when the reply is read, no wrapper coroutine around a system's."""

from __future__ import annotations

import asyncio

import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner
from heta_notebook.evaluators._retrieval import beir_default_metrics
from heta_notebook.runner import _plan, _pool
from heta_notebook.runner._benchmark import _answerer
from heta_notebook.systems._adapt import System, as_system
from heta_notebook.systems._check import Measured, _reusing
from tests._runner_helpers import ListBenchmark, ToyKB, comparable, make_cases, make_documents


async def _run(cases, **config):
    return (
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(cases=cases, evaluators=beir_default_metrics((1, 3))),
            recipe=ToyKB(delay=0.001, fail_on=[cases[3].query, cases[10].query]),
            config=BenchmarkRunConfig(max_concurrent_queries=5, **config),
            progress=False,
        )
    ).report


async def test_the_written_out_ask_gives_what_ask_gives():
    """Without a query timeout the worker asks inline; with one it goes through ``ask``: the
    case results (failures included), summary and statistics are the same."""
    cases = make_cases(24)
    inline = await _run(cases)
    bounded = await _run(cases, query_timeout=30.0)
    assert sum(r.error is not None for r in inline.case_results) == 4  # 2 cases × 2 modes
    assert comparable(inline) == comparable(bounded)
    assert inline.score_summary == bounded.score_summary
    assert inline.metadata["score_stats"] == bounded.metadata["score_stats"]


async def test_case_metadata_is_built_when_read_once_per_case():
    """Items of one case share one ``CaseMetadata``, built on its first read (after the
    round, not on the way to a query); every result's metadata is ``case_metadata``'s."""
    cases = make_cases(12)
    group = _plan.CaseGroup(cases=cases, answer=None, metadata={"benchmark_run_unit": "u1"})
    spec = _plan.RunSpec(
        report_id="r",
        knowledge_base_name="kb",
        benchmark=None,
        query_modes=("alpha", "beta"),
        groups=[group],
        evaluators=(),
        config=BenchmarkRunConfig(),
        label="kb",
    )
    items = list(_plan._items(spec, {}))
    holders = [item._metadata for item in items]
    assert holders[0] is holders[1] and holders[1] is not holders[2]
    assert all(holder._value is None for holder in holders)  # nothing built while asking
    for item in items:
        assert item.metadata == _pool.case_metadata(item.case, benchmark_run_unit="u1")
    assert items[0].metadata is items[1].metadata  # built once for both modes

    report = await _run(cases)
    expected = {case.case_id: _pool.case_metadata(case) for case in cases}
    assert len(report.case_results) == 24
    assert all(r.metadata == expected[r.case_id] for r in report.case_results)


def test_a_reply_s_latency_is_the_elapsed_ms_at_the_reply():
    item = _pool.WorkItem(0, make_cases(1)[0], "alpha", None)
    reply = _pool.Reply(item, None, 10.0, 10.0123456, [])
    assert reply.latency_ms == round((10.0123456 - 10.0) * 1000, 3) == 12.346
    measured = _pool._reply(item, Measured("value", 7.5), 10.0, 99.0, [])
    assert (measured.value, measured.latency_ms) == ("value", 7.5)


async def test_after_the_dry_run_a_system_s_own_coroutine_is_awaited():
    """A ``System``'s answer returns ``System.ask``'s coroutine, and the dry run's ``reuse``
    hands it on as it is once its kept answers are out (no coroutine of ours around it)."""
    system = as_system(ToyKB(), benchmark_documents=[d.document_id for d in make_documents()])
    assert isinstance(system, System)
    answer = _answerer(system, BenchmarkRunConfig())
    case = make_cases(1)[0]
    kept = {(case.case_id, "alpha"): Measured("kept", 1.0)}
    reuse = _reusing(answer, kept)
    first = reuse(case, "alpha")
    assert first.cr_code is not System.ask.__code__  # the kept answer, through the wrapper
    assert await first == Measured("kept", 1.0)
    asked = reuse(case, "alpha")
    assert asked.cr_code is System.ask.__code__
    unread = await asked
    assert unread.read() == await system.query(case.query, mode="alpha")
    with pytest.raises(KeyboardInterrupt):  # a stop during the dry run stops the run
        await _reusing(answer, {}, stopped=KeyboardInterrupt())(case, "alpha")


async def test_batches_scored_every_few_rounds_score_as_every_round(monkeypatch):
    """Replies are read every round but their batch scored once it waited ``SCORE_AFTER``
    (most rounds only read): the same case results, summary and statistics as scoring
    every round's batch at its read."""
    reads: list[int] = []
    flushes: list[int] = []
    read, flush = _pool._Pool.read_replies, _pool.BatchStage.flush

    def counted_read(self):
        reads.append(len(self.replies))
        return read(self)

    def counted_flush(self):
        flushes.append(len(self))
        return flush(self)

    class Rounds(ToyKB):
        async def query(self, text, **kwargs):
            await asyncio.sleep(0.005)
            return await super().query(text, **kwargs)

    async def run():
        cases = make_cases(60)
        return (
            await BenchmarkRunner().run(
                benchmark=ListBenchmark(cases=cases, evaluators=beir_default_metrics((1, 3))),
                recipe=Rounds(fail_on=[cases[7].query]),
                config=BenchmarkRunConfig(max_concurrent_queries=4, preflight_queries=0),
                progress=False,
            )
        ).report

    monkeypatch.setattr(_pool._Pool, "read_replies", counted_read)
    monkeypatch.setattr(_pool.BatchStage, "flush", counted_flush)
    monkeypatch.setattr(_pool, "SCORE_AFTER", 0.2)
    later = await run()
    scored = [n for n in flushes if n]
    assert sum(scored) == 118 and len(scored) < len([n for n in reads if n]) / 2
    reads.clear()
    flushes.clear()
    monkeypatch.setattr(_pool, "SCORE_AFTER", 0.0)  # every round's batch at its read
    each = await run()
    assert len([n for n in flushes if n]) >= len([n for n in reads if n]) - 1
    assert comparable(later) == comparable(each)
    assert later.score_summary == each.score_summary
    assert later.metadata["score_stats"] == each.metadata["score_stats"]


async def test_every_batch_is_scored_with_the_collector_paused(monkeypatch):
    """The batch left for the end of the run (most runs' last one, now that rounds only
    read) is scored with the collector paused, as a round's read is."""
    import gc

    from heta_notebook.runner._scoring import CaseScorer

    seen: list[bool] = []
    score = CaseScorer.score_batch

    def scoring(self, *args):
        seen.append(gc.isenabled())
        return score(self, *args)

    monkeypatch.setattr(CaseScorer, "score_batch", scoring)
    monkeypatch.setattr(_pool, "SCORE_AFTER", 60.0)  # everything left for the end
    report = await _run(make_cases(12))
    assert gc.isenabled()
    assert len(report.case_results) == 24 and seen and not any(seen)


async def test_the_run_s_tail_scores_every_round(monkeypatch):
    """Once a worker found no item left, each round's batch is scored at its read: what is
    left for the end of the run is one round's at most (the last cases answer late here, so
    the tail has rounds of its own)."""
    flushes: list[int] = []
    flush = _pool.BatchStage.flush

    def counted(self):
        flushes.append(len(self))
        return flush(self)

    class SlowLast(ToyKB):
        async def query(self, text, **kwargs):
            if int(text.rsplit(" ", 1)[-1]) >= 27:
                await asyncio.sleep(0.05)
            return await super().query(text, **kwargs)

    monkeypatch.setattr(_pool.BatchStage, "flush", counted)
    monkeypatch.setattr(_pool, "SCORE_AFTER", 60.0)  # never by age: only the tail rule
    cases = make_cases(30)
    report = (
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(cases=cases, evaluators=beir_default_metrics((1, 3))),
            recipe=SlowLast(delay=0.001),
            config=BenchmarkRunConfig(max_concurrent_queries=5, preflight_queries=0),
            progress=False,
        )
    ).report
    scored = [n for n in flushes if n]
    assert len(report.case_results) == 60 and sum(scored) == 60
    assert len(scored) >= 2 and scored[-1] <= 5  # the last: the last round's (5 workers)


@pytest.mark.parametrize("score_after", [60.0, 0.0])
async def test_a_stored_run_s_tables_do_not_depend_on_how_its_batches_fell(
    score_after, tmp_path, monkeypatch
):
    """Checkpointed and saved: batches scored at the tail only (and when full) or every
    round write the same cases, results and scores tables as the default."""
    import pyarrow.parquet as pq

    from heta_notebook import ReportStore
    from tests._report_helpers import table_paths

    store = ReportStore(tmp_path)

    async def run(name: str):
        cases = make_cases(40)
        return (
            await BenchmarkRunner().run(
                benchmark=ListBenchmark(cases=cases, evaluators=beir_default_metrics((1, 3))),
                recipe=ToyKB(delay=0.002, fail_on=[cases[9].query]),
                config=BenchmarkRunConfig(
                    max_concurrent_queries=5, report_id=name, checkpoint_every=7
                ),
                store=store,
                progress=False,
            )
        ).report

    def tables(report):
        paths = table_paths(store.report_dir(report.knowledge_base_name, report.report_id))
        return {name: pq.read_table(paths[name]) for name in ("cases", "results", "scores")}

    default = await run("default")
    monkeypatch.setattr(_pool, "SCORE_AFTER", score_after)
    other = await run("other")
    assert comparable(default) == comparable(other)
    mine, theirs = tables(default), tables(other)
    for name in ("cases", "results", "scores"):
        drop = [c for c in mine[name].column_names if c in ("latency_ms", "text")]
        assert mine[name].drop_columns(drop).equals(theirs[name].drop_columns(drop)), name
