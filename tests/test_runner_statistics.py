"""End-of-run statistics: columns filled as results arrive equal ``summarize`` over the report."""

from __future__ import annotations

import gc
import json
import random

import numpy as np
import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
from heta_notebook.evaluators._aggregation import summarize
from heta_notebook.reports._checkpoint import CaseBatches
from heta_notebook.runner._statistics import ScoreColumns
from heta_notebook.schema import (
    EvaluationCaseResult,
    EvaluationError,
    EvaluationScore,
    QueryResponse,
)
from tests._runner_helpers import (
    MODES,
    AnswerMatch,
    Broken,
    ListBenchmark,
    TopHit,
    ToyKB,
    score_statistics,
)
from tests._store_kinds import file_size_limit


def _mixed_results() -> list[EvaluationCaseResult]:
    """Numbers, booleans, text, verdicts, skipped and failed scores, failed queries."""
    results = []
    for i in range(30):
        mode = f"m{i % 2}"
        scores = (
            EvaluationScore(name="judge", value=("good", "bad", "meh")[i % 3], passed=i % 2 == 0),
            EvaluationScore(name="num", value=(i % 5) / 4, passed=None if i % 4 else True),
            EvaluationScore(name="flag", value=bool(i % 3)),
            EvaluationScore.error_score("other", RuntimeError("x"))
            if i % 7 == 0
            else EvaluationScore(
                name="other", value=i, metadata={"skipped": True} if i % 6 == 0 else {}
            ),
        )
        results.append(
            EvaluationCaseResult(
                case_id=f"c{i}",
                query="q",
                query_mode=mode,
                scores=scores,
                response=QueryResponse(mode=mode),
            )
        )
        if i % 9 == 0:
            error = EvaluationError.from_exception(RuntimeError("down"))
            results.append(
                EvaluationCaseResult(case_id=f"f{i}", query="q", query_mode=mode, error=error)
            )
    return results


def test_columns_added_in_any_order_give_the_same_statistics_as_in_report_order():
    results, config = _mixed_results(), BenchmarkRunConfig(seed=5)
    expected = score_statistics(results, config)
    shuffled = list(enumerate(results))
    random.Random(2).shuffle(shuffled)
    columns = ScoreColumns()
    for position, result in shuffled:
        columns.add(position, result)
    assert json.dumps(columns.statistics(config)) == json.dumps(expected)  # key order too


def test_columns_read_from_checkpoint_batches_give_the_same_statistics():
    """A checkpointing run's statistics come from the checkpoint's score columns (results
    it does not hold are counted one by one): the same numbers, key order too."""
    results, config = _mixed_results(), BenchmarkRunConfig(seed=5)
    twice = (EvaluationScore(name="num", value=0.25), EvaluationScore(name="num", value=0.5))
    response = QueryResponse(mode="m0")
    results.append(
        EvaluationCaseResult(
            case_id="x", query="q", query_mode="m0", scores=twice, response=response
        )
    )
    expected = score_statistics(results, config)
    shuffled = list(enumerate(results))
    random.Random(3).shuffle(shuffled)
    batches = CaseBatches()
    held = [pair for i, pair in enumerate(shuffled) if i % 5]  # every fifth not checkpointed
    for start in range(0, len(held), 4):
        batches.add([result for _, result in held[start : start + 4]])
    columns = ScoreColumns(batches)
    for position, result in shuffled:
        columns.add(position, result)
    assert json.dumps(columns.statistics(config)) == json.dumps(expected)


def test_statistics_follow_summarize():
    results = _mixed_results()
    summary, stats = score_statistics(results, BenchmarkRunConfig())
    for key, agg in summarize(results).items():
        assert stats[key]["mean"] == agg.value and stats[key]["n"] == agg.n_scored
        assert stats[key]["n_error"] == agg.n_error and stats[key]["n_skipped"] == agg.n_skipped
        assert stats[key]["std"] == agg.std and stats[key].get("counts", {}) == agg.counts
        ci = [agg.ci_low, agg.ci_high] if agg.ci_low is not None else None
        assert stats[key]["ci95"] == ci and stats[key]["pass_rate"] == agg.pass_rate
        assert summary.get(key) == agg.value
    assert stats["m0.num"]["bootstrap_ci95"] is not None


async def test_report_statistics_equal_statistics_over_its_case_results():
    benchmark = ListBenchmark(evaluators=(TopHit(), AnswerMatch(), Broken()))
    config = BenchmarkRunConfig(max_concurrent_queries=3)
    report = (
        await BenchmarkRunner().run(
            benchmark=benchmark, recipe=ToyKB(), query_modes=MODES, config=config, progress=False
        )
    ).report
    summary, stats = score_statistics(report.case_results, config)
    assert report.score_summary == summary
    assert json.dumps(report.metadata["score_stats"]) == json.dumps(stats)


@pytest.mark.parametrize("fail", [False, True])
async def test_a_run_freezes_what_is_alive_and_hands_it_back_to_the_collector(fail, tmp_path):
    frozen_during_run = []

    class Watching(ToyKB):
        async def query(self, text, *, mode, top_k=10, options=None):
            frozen_during_run.append(gc.get_freeze_count())
            return await super().query(text, mode=mode, top_k=top_k, options=options)

    assert gc.get_freeze_count() == 0
    options = {"store": ReportStore(tmp_path), "config": {"checkpoint_every": 1}} if fail else {}
    run = BenchmarkRunner().run(
        benchmark=ListBenchmark(), recipe=Watching(), query_modes=MODES, progress=False, **options
    )
    if fail:  # a real write error: the checkpoint outgrows the file size limit
        with file_size_limit(4_000), pytest.raises(OSError, match="File too large"):
            await run
    else:
        await run
    assert frozen_during_run and min(frozen_during_run) > 0
    assert gc.get_freeze_count() == 0 and gc.isenabled()


async def test_a_resumed_report_counts_checkpointed_and_new_results_alike(tmp_path):
    benchmark = ListBenchmark(evaluators=(TopHit(), AnswerMatch()))
    config = BenchmarkRunConfig(report_id="r1", checkpoint_every=1, max_concurrent_queries=2)
    options = {
        "benchmark": benchmark,
        "query_modes": MODES,
        "config": config,
        "store": ReportStore(tmp_path),
        "progress": False,
    }
    with pytest.warns(RuntimeWarning, match="interrupted"):
        first = (await BenchmarkRunner().run(recipe=ToyKB(interrupt_after=7), **options)).report
    assert first.is_partial
    report = (await BenchmarkRunner().run(recipe=ToyKB(), **options)).report
    assert report.metadata["resumed"] > 0 and not report.is_partial
    summary, stats = score_statistics(report.case_results, config)
    assert report.score_summary == summary
    assert json.dumps(report.metadata["score_stats"]) == json.dumps(stats)


def test_regular_checkpoint_columns_are_read_by_stride_with_the_same_statistics(monkeypatch):
    """Every case holding the same scores in the same order (a run's usual shape): each
    column is a stride of the score rows, the statistics as the per-result path gives."""
    from heta_notebook.runner import _statistics

    results = [r for r in _mixed_results() if r.error is None]  # 4 scores each, 2 modes
    config = BenchmarkRunConfig(seed=7)
    expected = score_statistics(results, config)
    shuffled = list(enumerate(results))
    random.Random(4).shuffle(shuffled)
    batches = CaseBatches()
    for start in range(0, len(shuffled), 6):
        batches.add([result for _, result in shuffled[start : start + 6]])
    strided = []
    real = _statistics._regular_groups
    monkeypatch.setattr(
        _statistics, "_regular_groups", lambda *a: strided.append(real(*a)) or strided[-1]
    )
    columns = ScoreColumns(batches)
    for position, result in shuffled:
        columns.add(position, result)
    assert json.dumps(columns.statistics(config)) == json.dumps(expected)
    assert strided and strided[0] is not None and len(strided[0]) == 8  # 2 modes x 4 scores


def _lazy_batches() -> list[list[tuple[int, EvaluationCaseResult]]]:
    """Batches of results holding rows of their batch's score columns (``LazyScores``), as
    the runner delivers them: three modes mixed in each batch, skips, verdicts, a column
    read record by record (a plain list), positions out of order across batches."""
    from heta_notebook.schema._construct import (
        ConstructedScores,
        LazyScores,
        constructed_record,
    )

    rng = random.Random(7)
    positions = list(range(60))
    rng.shuffle(positions)
    batches, start = [], 0
    for size in (7, 16, 1, 20, 16):
        rows = positions[start : start + size]
        start += size
        skipped = {r for r in range(size) if (r + size) % 5 == 0}
        ndcg = ConstructedScores(
            "ndcg",
            np.asarray([0.0 if r in skipped else rng.random() for r in range(size)]),
            [None] * size,
            [{"skipped": True} if r in skipped else {} for r in range(size)],
            skipped=skipped,
        )
        hit = ConstructedScores(
            "hit",
            [float(rng.random() < 0.5) for _ in range(size)],
            [None if r % 3 == 0 else rng.random() < 0.5 for r in range(size)],
            [{} for _ in range(size)],
            skipped=(),
        )
        recall = ConstructedScores(  # the rows of ``hit``: one sort serves both
            "recall",
            np.asarray([rng.random() for _ in range(size)]),
            [None] * size,
            [{} for _ in range(size)],
            skipped=set(),
        )
        plain = [EvaluationScore(name="plain", value=rng.random()) for _ in range(size)]
        columns = (ndcg, hit, recall, plain)
        batches.append(
            [
                (
                    position,
                    constructed_record(  # as the runner builds it: the scores stay columns
                        EvaluationCaseResult,
                        {
                            "case_id": f"c{position}",
                            "query": "q",
                            "query_mode": f"m{position % 3}",
                            "scores": LazyScores(columns, row),
                            "response": QueryResponse(mode=f"m{position % 3}"),
                            "latency_ms": 1.0,
                            "error": None,
                            "metadata": {},
                        },
                    ),
                )
                for row, position in enumerate(rows)
            ]
        )
    return batches


def test_batches_folded_as_delivered_give_the_statistics_of_one_fold_and_of_the_records():
    """``fold`` after each batch (a batch also split over two folds, an empty fold, two
    ``statistics`` calls) gives the statistics, key order included, of folding once at the
    end and of the same scores as records: a batch folded twice or missed changes them."""
    config = BenchmarkRunConfig(seed=3)
    batches = _lazy_batches()
    folded, once = ScoreColumns(), ScoreColumns()
    for number, batch in enumerate(batches):
        for i, (position, result) in enumerate(batch):
            folded.add(position, result)
            once.add(position, result)
            if number == 1 and i == 5:
                folded.fold()  # part of a batch, the rest in the next fold
        folded.fold()
    folded.fold()  # nothing noted since: nothing changes
    assert all(not r.scores.built for batch in batches for _, r in batch)  # read as columns
    by_position = sorted(pair for batch in batches for pair in batch)
    eager = [
        result.model_copy(update={"scores": tuple(result.scores)}) for _, result in by_position
    ]
    expected = json.dumps(score_statistics(eager, config))
    assert json.dumps(once.statistics(config)) == expected
    assert json.dumps(folded.statistics(config)) == expected
    assert json.dumps(folded.statistics(config)) == expected  # split once, not twice
    stats = json.loads(expected)[1]
    assert stats["m0.ndcg"]["n_skipped"] and stats["m1.hit"]["pass_rate"] is not None
    assert sum(stats[f"m{m}.plain"]["n"] for m in range(3)) == 60


@pytest.mark.filterwarnings("ignore::heta_notebook.DepthWarning")
async def test_a_run_folds_each_batch_as_it_is_delivered(monkeypatch):
    """The runner reads each scored batch's columns when it delivers it: nothing is left
    to read at the end, and the report's statistics are those of its case results."""
    from heta_notebook.evaluators._retrieval import beir_default_metrics

    left, folds = [], []
    start, fold = ScoreColumns.start_statistics, ScoreColumns.fold

    def counted_fold(self):
        folds.append(len(self._rows))
        fold(self)

    def noted_start(self, config):
        left.append(len(self._rows))
        return start(self, config)

    monkeypatch.setattr(ScoreColumns, "fold", counted_fold)
    monkeypatch.setattr(ScoreColumns, "start_statistics", noted_start)
    benchmark = ListBenchmark(evaluators=(TopHit(), *beir_default_metrics(k_values=(1,))))
    config = BenchmarkRunConfig(max_concurrent_queries=3)
    report = (
        await BenchmarkRunner().run(
            benchmark=benchmark, recipe=ToyKB(), query_modes=MODES, config=config, progress=False
        )
    ).report
    assert left == [0] and sum(folds) == len(report.case_results) and all(folds[:-1])
    summary, stats = score_statistics(report.case_results, config)
    assert report.score_summary == summary
    assert json.dumps(report.metadata["score_stats"]) == json.dumps(stats)


def test_a_bootstrap_beside_the_run_gives_the_statistics_of_one_at_once(monkeypatch):
    """A large bootstrap runs in a thread while the run's end goes on: the same JSON (key
    order too) as computed at once; an error in it is raised by ``result``, not lost."""
    import heta_notebook.runner._statistics as statistics

    results, config = _mixed_results(), BenchmarkRunConfig(seed=5)

    def filled(threshold: int):
        monkeypatch.setattr(statistics, "_BESIDE_DRAWS", threshold)
        columns = ScoreColumns()
        for position, result in enumerate(results):
            columns.add(position, result)
        return columns

    threads = []
    start = statistics.threading.Thread.start
    monkeypatch.setattr(
        statistics.threading.Thread, "start", lambda t: (threads.append(t), start(t))[1]
    )
    at_once = json.dumps(filled(10**12).statistics(config))
    assert not threads
    assert json.dumps(filled(0).statistics(config)) == at_once
    assert [t.name for t in threads] == ["heta-notebook-beside"]
    assert json.loads(at_once)[1]["m0.num"]["bootstrap_ci95"] is not None

    def broken(*args):
        raise MemoryError("no room for the resamples")

    monkeypatch.setattr(statistics, "bootstrap_intervals", broken)
    pending = filled(0).start_statistics(config)
    with pytest.raises(MemoryError, match="no room"):
        pending.result()
