"""Stop means stop: a cancel ends a built-in-KB run during its queries and during its index
build, the partial report is saved and resumes exactly; sync evaluators past their timeout
become error scores on time while their thread runs on."""

from __future__ import annotations

import asyncio
import threading

import pytest

from heta_notebook import (
    BenchmarkRunConfig,
    BenchmarkRunner,
    ReportStore,
    aevaluate,
    evaluator,
)
from heta_notebook.benchmarks._beir import BeirBenchmark
from heta_notebook.kb._embedders import LsaEmbedder
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._recipe import Recipe
from tests._runner_helpers import ListBenchmark, make_cases, make_documents


def _checkpointed(store: ReportStore, kb: str, report_id: str) -> int:
    return len(store.checkpoint_keys(kb, report_id))


@pytest.mark.slow
async def test_cancel_during_builtin_kb_queries_saves_partial_and_resumes_exactly(tmp_path):
    store = ReportStore(tmp_path)
    cranfield = BeirBenchmark.cranfield()
    recipe = Recipe(name="hybrid")  # BM25 + LSA dense + hybrid: 3 modes x 225 queries
    options = dict(
        benchmark=cranfield, recipe=recipe, knowledge_base_name="cran", store=store, progress=False
    )
    full = (await BenchmarkRunner().run(**options, config={"report_id": "full"})).report
    total = len(full.case_results)
    assert total == 675

    config = BenchmarkRunConfig(report_id="stopped", checkpoint_every=1)
    run = asyncio.ensure_future(BenchmarkRunner().run(**options, config=config))
    while _checkpointed(store, "cran", "stopped") == 0:  # the KB is built, queries under way
        await asyncio.sleep(0.005)  # with queries on the loop this would not run until the end
    run.cancel()
    with (
        pytest.warns(RuntimeWarning, match="interrupted"),
        pytest.raises(asyncio.CancelledError) as caught,
    ):
        await run  # cancelled means cancelled, once the partial report is saved
    stopped = caught.value.partial.report
    assert stopped.is_partial and stopped.metadata["interrupted"] == "CancelledError"
    assert 0 < len(stopped.case_results) < total
    assert store.load("cran", "stopped").is_partial

    resumed = (await BenchmarkRunner().run(**options, config=config)).report
    assert not resumed.is_partial and resumed.metadata["resumed"] == len(stopped.case_results)
    assert [(r.case_id, r.query_mode) for r in resumed.case_results] == [
        (r.case_id, r.query_mode) for r in full.case_results
    ]
    for mine, theirs in zip(resumed.case_results, full.case_results, strict=True):
        assert [(s.name, s.value) for s in mine.scores] == [
            (s.name, s.value) for s in theirs.scores
        ]
        assert [r.id for r in mine.response.results] == [r.id for r in theirs.response.results]
    assert resumed.score_summary == full.score_summary


class _BlockingEmbedder(LsaEmbedder):
    """LSA that, once fitting starts, waits until the test releases it (a long index build)."""

    def __init__(self) -> None:
        super().__init__(dims=8)
        self.started, self.release = threading.Event(), threading.Event()

    def _block(self) -> None:
        self.started.set()
        self.release.wait(60)

    def fit(self, texts, *, tokens=None):
        self._block()
        return super().fit(texts, tokens=tokens)

    def fit_embed(self, texts, *, tokens=None):  # what the index build calls
        self._block()
        return super().fit_embed(texts, tokens=tokens)


class _BuildingRecipe:
    """A recipe that builds the built-in KB (in its worker thread) with a given embedder."""

    name = "blocking"

    def __init__(self, embedder: _BlockingEmbedder) -> None:
        self.embedder = embedder

    async def build_knowledge_base(self, documents, *, knowledge_base_name, workspace, rebuild):
        recipe = Recipe(name=self.name, hybrid=None)
        return await KnowledgeBase.build(recipe, documents, embedder=self.embedder)


async def test_cancel_during_index_build_ends_the_run_while_the_build_still_runs(tmp_path):
    embedder = _BlockingEmbedder()
    benchmark = ListBenchmark(cases=make_cases(4), documents=make_documents(20))
    run = asyncio.ensure_future(
        BenchmarkRunner().run(
            benchmark=benchmark,
            recipe=_BuildingRecipe(embedder),
            store=ReportStore(tmp_path),
            progress=False,
        )
    )
    for _ in range(6000):  # up to 30 s: fail, never hang, if the build does not start
        if embedder.started.is_set() or run.done():
            break
        await asyncio.sleep(0.005)
    assert embedder.started.is_set(), "the index build never reached the embedder's fit"
    run.cancel()
    try:
        with pytest.raises(asyncio.CancelledError):
            await run
        assert not embedder.release.is_set()  # the run ended before the build did
    finally:
        embedder.release.set()


async def test_sync_evaluators_past_the_timeout_are_error_scores_on_time(tmp_path):
    release = threading.Event()
    calls: list[str] = []

    @evaluator
    def hangs_on_odd(outputs, inputs):
        calls.append(inputs["query"])
        if int(inputs["query"].rsplit(" ", 1)[-1]) % 2:
            release.wait(60)  # a hung sync call (say, a client without a timeout)
        return 1.0

    data = [{"inputs": {"query": f"q {i}"}} for i in range(6)]
    try:
        report = await aevaluate(
            lambda inputs: "answer",
            data,
            [hangs_on_odd],
            config={"evaluator_timeout": 0.2},
            progress=False,
        )
        assert not release.is_set()  # finished while the three hung threads still wait
    finally:
        release.set()
    scores = {r.query: r.score("hangs_on_odd") for r in report.case_results}
    assert {q for q, s in scores.items() if s.metadata.get("error")} == {"q 1", "q 3", "q 5"}
    assert all("timed out" in scores[q].metadata["error"]["message"] for q in ("q 1", "q 3", "q 5"))
    assert [scores[q].value for q in ("q 0", "q 2", "q 4")] == [1.0, 1.0, 1.0]
    assert sorted(calls) == [f"q {i}" for i in range(6)]
