"""BenchmarkRunner on small in-test KBs: reports, summaries, isolation, timeouts, retries."""

from __future__ import annotations

import json

import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
from heta_notebook.schema import EvaluationScore
from tests._runner_helpers import (
    MODES,
    AnswerMatch,
    Broken,
    Flaky,
    ListBenchmark,
    Slow,
    TopHit,
    ToyKB,
    ToyRecipe,
    make_cases,
)
from tests._store_kinds import file_size_limit, store_of_kind


async def test_report_has_every_case_in_benchmark_order_and_honest_summary(tmp_path):
    benchmark = ListBenchmark(evaluators=(TopHit(), AnswerMatch()))
    result = await BenchmarkRunner().run(
        benchmark=benchmark,
        recipe=ToyKB(),
        knowledge_base_name="kb",
        query_modes=MODES,
        store=ReportStore(tmp_path),
        progress=False,
    )
    report = result.report
    pairs = [(r.case_id, r.query_mode) for r in report.case_results]
    assert pairs == [(f"q{i}", m) for i in range(12) for m in MODES]
    # mode alpha always ranks the right document first and answers right
    assert report.score_summary["alpha.top_hit"] == 1.0
    assert report.score_summary["alpha.answer_match"] == 1.0
    assert report.score_summary["beta.answer_match"] == 0.0
    stats = report.metadata["score_stats"]["alpha.top_hit"]
    assert stats["n"] == 12 and stats["n_error"] == 0 and stats["n_skipped"] == 0
    assert report.metadata["partial"] is False
    assert set(report.metadata["latency"]) == set(MODES)
    # expected data and labels travel with each case result
    first = report.case_results[0]
    assert first.metadata["expected"]["evidence"][0]["reference_id"] == "d0"
    assert first.metadata["labels"] == {"group": "even"}
    # persisted atomically where heta-framework puts it, and loadable
    assert result.report_path.exists()
    assert ReportStore(tmp_path).load("kb", report.report_id).case_results == report.case_results
    assert report.report_key.endswith(f"/evaluations/{report.report_id}/report.json")
    assert ReportStore(tmp_path).load("kb", report.report_id).report_key == report.report_key


async def test_skipped_scores_are_excluded_from_means_and_counted():
    cases = make_cases(4)
    no_evidence = cases[0].model_copy(
        update={"expected": cases[0].expected.model_copy(update={"evidence": ()})}
    )
    benchmark = ListBenchmark(cases=[no_evidence, *cases[1:]], evaluators=(TopHit(),))
    report = (
        await BenchmarkRunner().run(
            benchmark=benchmark, recipe=ToyKB(), query_modes=("alpha",), progress=False
        )
    ).report
    stats = report.metadata["score_stats"]["alpha.top_hit"]
    assert (stats["n"], stats["n_skipped"]) == (3, 1)
    assert report.report_key is None  # no store: the report is not saved, so it has no key
    assert report.score_summary["alpha.top_hit"] == 1.0  # not 0.75: the skipped case is not a zero


async def test_query_error_and_evaluator_error_are_isolated():
    kb = ToyKB(fail_on=["query number 3"])
    benchmark = ListBenchmark(evaluators=(TopHit(), Broken()))
    report = (
        await BenchmarkRunner().run(
            benchmark=benchmark, recipe=kb, query_modes=("alpha",), progress=False
        )
    ).report
    assert len(report.case_results) == 12
    failed = [r for r in report.case_results if r.error is not None]
    assert [r.case_id for r in failed] == ["q3"]
    assert (
        failed[0].error.error_type == "RuntimeError" and "backend failed" in failed[0].error.message
    )
    ok = report.case_results[0]
    assert ok.response is not None and ok.score("top_hit").value == 1.0
    broken = ok.score("broken")
    assert broken.status == "error" and broken.metadata["error"]["error_type"] == "ValueError"
    assert report.metadata["score_stats"]["alpha.top_hit"]["n_error"] == 1  # the failed query
    assert report.metadata["n_query_errors"] == 1


async def test_query_timeout_becomes_a_case_error():
    kb = ToyKB(hang_on=["query number 1"])
    config = BenchmarkRunConfig(query_timeout=0.05)
    report = (
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(evaluators=(TopHit(),)),
            recipe=kb,
            query_modes=("alpha",),
            config=config,
            progress=False,
        )
    ).report
    errors = {r.case_id: r.error for r in report.case_results if r.error}
    assert list(errors) == ["q1"]
    assert errors["q1"].error_type == "TimeoutError" and errors["q1"].retryable
    assert "timed out after 0.05 s" in errors["q1"].message


async def test_evaluator_timeout_keeps_response_and_other_scores():
    benchmark = ListBenchmark(
        cases=make_cases(3), evaluators=(TopHit(), Slow(delay=5, timeout=0.05))
    )
    report = (
        await BenchmarkRunner().run(
            benchmark=benchmark, recipe=ToyKB(), query_modes=("alpha",), progress=False
        )
    ).report
    for result in report.case_results:
        assert result.response is not None
        assert result.score("top_hit").value == 1.0
        slow = result.score("slow")
        assert slow.status == "error" and slow.metadata["error"]["error_type"] == "TimeoutError"


async def test_default_evaluator_timeout_from_config():
    benchmark = ListBenchmark(cases=make_cases(2), evaluators=(Slow(delay=5),))
    config = BenchmarkRunConfig(evaluator_timeout=0.05)
    report = (
        await BenchmarkRunner().run(
            benchmark=benchmark,
            recipe=ToyKB(),
            query_modes=("alpha",),
            config=config,
            progress=False,
        )
    ).report
    assert all(r.score("slow").status == "error" for r in report.case_results)


@pytest.mark.parametrize(("failures", "retries", "status"), [(2, 2, "scored"), (3, 2, "error")])
async def test_evaluator_retry_with_backoff(failures, retries, status):
    flaky = Flaky(failures=failures, retry_count=retries)
    benchmark = ListBenchmark(cases=make_cases(2), evaluators=(flaky,))
    report = (
        await BenchmarkRunner().run(
            benchmark=benchmark, recipe=ToyKB(), query_modes=("alpha",), progress=False
        )
    ).report
    scores = [r.score("flaky") for r in report.case_results]
    assert {s.status for s in scores} == {status}
    assert all(n == retries + 1 for n in flaky.attempts.values())
    if status == "error":
        assert scores[0].metadata["attempts"] == 3


async def test_disabled_evaluators_dropped_and_duplicate_names_rejected():
    benchmark = ListBenchmark(cases=make_cases(2))
    report = (
        await BenchmarkRunner().run(
            benchmark=benchmark,
            recipe=ToyKB(),
            query_modes=("alpha",),
            evaluators=[TopHit(), Slow(0, enabled=False)],
            progress=False,
        )
    ).report
    assert report.score_names == ("top_hit",)
    with pytest.raises(ValueError, match="two evaluators are named 'top_hit'"):
        await BenchmarkRunner().run(
            benchmark=benchmark, recipe=ToyKB(), evaluators=[TopHit(), TopHit()], progress=False
        )


async def test_evaluators_none_uses_benchmark_defaults_and_modes_none_uses_kb_modes():
    report = (
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(evaluators=(TopHit(),)), recipe=ToyKB(), progress=False
        )
    ).report
    assert report.query_modes == MODES and report.score_names == ("top_hit",)


async def test_unknown_mode_is_refused_with_the_modes_on_offer():
    with pytest.raises(ValueError, match="unknown query mode.*'gamma'.*offers"):
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(), recipe=ToyKB(), query_modes=("gamma",), progress=False
        )


async def test_recipe_gets_store_cache_workspace_and_rebuild(tmp_path):
    recipe = ToyRecipe("toy")
    store = ReportStore(tmp_path)
    await BenchmarkRunner().run(
        benchmark=ListBenchmark(evaluators=(TopHit(),)),
        recipe=recipe,
        knowledge_base_name="kb",
        store=store,
        rebuild=True,
        progress=False,
    )
    (build,) = recipe.builds
    assert build["workspace"] == store.cache_dir("kb") and build["rebuild"] is True
    assert build["n"] == 20 and build["name"] == "kb"


async def test_metadata_is_reproducible_and_has_no_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    config = BenchmarkRunConfig(seed=7, metadata={"purpose": "test"})
    result = await BenchmarkRunner().run(
        benchmark=ListBenchmark(evaluators=(TopHit(),)),
        recipe=ToyKB(),
        config=config,
        store=tmp_path,
        progress=False,
    )
    meta = result.report.metadata
    assert meta["seed"] == 7 and meta["purpose"] == "test" and meta["config"]["seed"] == 7
    env = meta["environment"]
    assert env["python"] and {"numpy", "pandas", "pydantic"} <= set(env["libraries"])
    assert "sk-secret-value" not in result.report_path.read_text()
    ci = meta["score_stats"]["beta.top_hit"]["bootstrap_ci95"]
    assert ci is None or ci[0] <= meta["score_stats"]["beta.top_hit"]["mean"] <= ci[1]
    json.loads(result.report_path.read_text())


async def test_progress_bar_counts_errors(capsys):
    kb = ToyKB(fail_on=["query number 1"])
    await BenchmarkRunner().run(
        benchmark=ListBenchmark(evaluators=(TopHit(),)),
        recipe=kb,
        query_modes=("alpha",),
        progress=True,
    )
    err = capsys.readouterr().err
    assert "12/12" in err and "errors=1" in err


async def test_evaluator_returning_wrong_type_is_an_error_score():
    class Wrong:
        name = "wrong"

        async def evaluate(self, *, case, response):
            return 0.5

    report = (
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(cases=make_cases(1)),
            recipe=ToyKB(),
            evaluators=[Wrong()],
            query_modes=("alpha",),
            progress=False,
        )
    ).report
    assert report.case_results[0].score("wrong").metadata["error"]["error_type"] == "TypeError"
    assert isinstance(report.case_results[0].scores[0], EvaluationScore)


def test_shared_bootstrap_draws_equal_aggregation_bootstrap_ci():
    import numpy as np

    from heta_notebook.evaluators._aggregation import bootstrap_ci
    from heta_notebook.runner._statistics import bootstrap_intervals

    rng = np.random.default_rng(3)
    columns = {f"m.s{i}": list(rng.random(50 + (i % 2))) for i in range(4)} | {"m.one": [1.0]}
    config = BenchmarkRunConfig(seed=11)
    intervals = bootstrap_intervals(columns, config)
    for key, values in columns.items():
        expected = bootstrap_ci(values, seed=11)
        assert intervals[key] == (
            None if expected is None else pytest.approx(list(expected), abs=1e-12)
        )


FULL = 12_000  # bytes a checkpoint file may grow to before the "disk" is full


@pytest.mark.parametrize("kind", ["local", "fsspec-local"])
async def test_a_failing_checkpoint_write_stops_the_run_loudly(tmp_path, kind):
    """A real write error (the file size limit: EFBIG) stops the run early; once there is
    room again, the run resumes what the checkpoint kept and finishes."""
    config = BenchmarkRunConfig(report_id="full", checkpoint_every=1, max_concurrent_queries=2)
    options = dict(
        benchmark=ListBenchmark(cases=make_cases(50), evaluators=(TopHit(),)),
        knowledge_base_name="kb",
        config=config,
        progress=False,
    )
    kb = ToyKB()
    with (
        store_of_kind(kind, tmp_path) as (store, _),
        file_size_limit(FULL),
        pytest.raises(OSError, match="File too large"),
    ):
        await BenchmarkRunner().run(recipe=kb, store=store, **options)
    assert kb.calls < 100  # stopped early, not after every case
    with store_of_kind(kind, tmp_path) as (store, _):
        kept = len(store.read_checkpoint("kb", "full"))
        again = ToyKB()
        report = (await BenchmarkRunner().run(recipe=again, store=store, **options)).report
    assert 0 < kept < kb.calls and again.calls == 100 - kept
    assert len(report.case_results) == 100 and not report.is_partial


async def test_a_failing_checkpoint_write_also_stops_a_batch_scored_run(tmp_path):
    from heta_notebook.evaluators._retrieval import beir_default_metrics

    kb = ToyKB(delay=0.001)
    config = BenchmarkRunConfig(checkpoint_every=1, max_concurrent_queries=2)
    with file_size_limit(FULL), pytest.raises(OSError, match="File too large"):
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(cases=make_cases(200), evaluators=beir_default_metrics()),
            recipe=kb,
            config=config,
            store=ReportStore(tmp_path),
            progress=False,
        )
    assert kb.calls < 400


async def test_heta_framework_config_is_accepted():
    from heta_framework.evaluation import BenchmarkRunConfig as HetaConfig

    config = HetaConfig(top_k=3, max_concurrent_queries=2, metadata={"from": "heta"})
    report = (
        await BenchmarkRunner().run(
            benchmark=ListBenchmark(cases=make_cases(2), evaluators=(TopHit(),)),
            recipe=ToyKB(),
            config=config,
            progress=False,
        )
    ).report
    assert report.metadata["config"]["top_k"] == 3 and report.metadata["from"] == "heta"
    assert all(len(r.response.results) == 3 for r in report.case_results)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda **kw: __import__("heta_notebook").run_benchmark(**kw), "run_benchmark"),
        (lambda **kw: BenchmarkRunner().run_sync(**kw), "BenchmarkRunner().run_sync"),
    ],
)
def test_a_keyword_from_another_library_names_the_one_meant(call, name):
    """``system=`` (or ``metrics=``, ``top_k=``...) is refused before anything runs, with the
    keyword that takes it: not Python's bare "unexpected keyword argument"."""
    with pytest.raises(TypeError) as caught:
        call(benchmark=ListBenchmark(), system=ToyKB(), metrics=[], top_k=5)
    message = str(caught.value)
    assert message.startswith(f"{name}() got an unexpected keyword arguments 'system'")
    assert "'system' (did you mean recipe=?)" in message
    assert "'metrics' (did you mean evaluators=?)" in message
    assert "'top_k' (did you mean config={'top_k': ...}?)" in message
    assert "it takes: benchmark, case_ids, config," in message


def test_evaluate_suggests_its_own_close_keyword():
    from heta_notebook import evaluate

    with pytest.raises(TypeError, match=r"'concurrency' \(did you mean max_concurrency=\?\)"):
        evaluate(lambda x: x, [{"input": "a"}], concurrency=4)
