"""Checkpoint and resume: an interrupted run (exception, cancellation, SIGKILL) finishes with
exactly the case results of a clean run, none lost and none duplicated."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
from heta_notebook.reports import OldCheckpointError
from heta_notebook.reports._run import RunHandle
from tests._runner_helpers import (
    MODES,
    AnswerMatch,
    ListBenchmark,
    TopHit,
    ToyKB,
    comparable,
    make_cases,
)

ROOT = Path(__file__).resolve().parents[1]


def _benchmark(n: int = 12) -> ListBenchmark:
    return ListBenchmark(cases=make_cases(n), evaluators=(TopHit(), AnswerMatch()))


async def _clean_report(n: int = 12):
    result = await BenchmarkRunner().run(
        benchmark=_benchmark(n),
        recipe=ToyKB(),
        knowledge_base_name="kb",
        query_modes=MODES,
        progress=False,
    )
    return result.report


@pytest.fixture(autouse=True)
def keep_checkpoints(monkeypatch):
    """These tests audit a finished run's checkpoint (every case written once), which a run
    otherwise deletes once its complete report is saved."""
    monkeypatch.setattr(RunHandle, "discard", lambda self: None)


def _checkpoint_lines(store: ReportStore, report_id: str) -> list[tuple[str, str]]:
    return store.checkpoint_keys("kb", report_id)


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_keyboard_interrupt_returns_partial_report_and_resume_completes_it(
    tmp_path, concurrency
):
    store = ReportStore(tmp_path)
    config = BenchmarkRunConfig(
        report_id="run-1", checkpoint_every=1, max_concurrent_queries=concurrency
    )
    runner = BenchmarkRunner()
    options = dict(
        benchmark=_benchmark(),
        knowledge_base_name="kb",
        query_modes=MODES,
        config=config,
        store=store,
        progress=False,
    )

    with pytest.warns(
        RuntimeWarning, match="interrupted with .* resume=True or config report_id='run-1'"
    ):
        first = await runner.run(recipe=ToyKB(interrupt_after=7), **options)
    assert first.report.is_partial and first.report.metadata["interrupted"] == "KeyboardInterrupt"
    assert len(first.report.case_results) <= 7
    saved = store.load("kb", "run-1")
    assert saved.is_partial and saved.case_results == first.report.case_results

    resumed_kb = ToyKB()
    final = (await runner.run(recipe=resumed_kb, **options)).report
    assert not final.is_partial
    assert final.metadata["resumed"] == len(first.report.case_results)
    assert resumed_kb.calls == 24 - len(first.report.case_results)  # finished pairs are skipped
    assert comparable(final) == comparable(await _clean_report())
    lines = _checkpoint_lines(store, "run-1")
    assert len(lines) == len(set(lines)) == 24  # nothing lost, nothing done twice
    assert store.load("kb", "run-1").case_results == final.case_results


async def test_cancelled_run_persists_partial_report_and_resume_true_finds_it(tmp_path):
    store = ReportStore(tmp_path)
    config = BenchmarkRunConfig(checkpoint_every=1, max_concurrent_queries=2)
    options = dict(
        benchmark=_benchmark(),
        knowledge_base_name="kb",
        query_modes=MODES,
        config=config,
        store=store,
        progress=False,
    )
    task = asyncio.ensure_future(
        BenchmarkRunner().run(recipe=ToyKB(delay=0.01), resume=True, **options)
    )
    while not any(len(_checkpoint_lines(store, rid)) >= 5 for rid in store.report_ids("kb")):
        await asyncio.sleep(0.005)
    task.cancel()
    with (
        pytest.warns(RuntimeWarning, match="interrupted"),
        pytest.raises(asyncio.CancelledError) as caught,
    ):
        await task  # cancelled means cancelled (issue 27), once the partial report is saved
    partial = caught.value.partial.report
    assert store.load("kb", partial.report_id).is_partial
    assert partial.is_partial and partial.metadata["interrupted"] == "CancelledError"
    assert 5 <= len(partial.case_results) < 24

    final = (await BenchmarkRunner().run(recipe=ToyKB(), resume=True, **options)).report
    assert final.report_id == partial.report_id
    assert comparable(final) == comparable(await _clean_report())
    lines = _checkpoint_lines(store, final.report_id)
    assert len(lines) == len(set(lines)) == 24


async def test_running_a_finished_report_id_again_changes_nothing(tmp_path):
    store = ReportStore(tmp_path)
    config = BenchmarkRunConfig(report_id="done")
    options = dict(
        benchmark=_benchmark(4),
        knowledge_base_name="kb",
        query_modes=MODES,
        config=config,
        store=store,
        progress=False,
    )
    first = (await BenchmarkRunner().run(recipe=ToyKB(), **options)).report
    kb = ToyKB()
    again = (await BenchmarkRunner().run(recipe=kb, **options)).report
    assert kb.calls == 0 and again.case_results == first.case_results


async def test_without_resume_a_new_report_id_is_used(tmp_path):
    options = dict(
        benchmark=_benchmark(2),
        knowledge_base_name="kb",
        query_modes=MODES,
        store=ReportStore(tmp_path),
        progress=False,
    )
    a = (await BenchmarkRunner().run(recipe=ToyKB(), **options)).report
    b = (await BenchmarkRunner().run(recipe=ToyKB(), **options)).report
    assert a.report_id != b.report_id
    assert a.metadata["fingerprint"] == b.metadata["fingerprint"]


_SCRIPT = """
import asyncio, sys
sys.path.insert(0, {root!r})
from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
from tests._runner_helpers import MODES, AnswerMatch, ListBenchmark, ToyKB, TopHit, make_cases

config = BenchmarkRunConfig(report_id="killed", checkpoint_every=1, max_concurrent_queries=2)
benchmark = ListBenchmark(cases=make_cases({n}), evaluators=(TopHit(), AnswerMatch()))
asyncio.run(BenchmarkRunner().run(benchmark=benchmark, recipe=ToyKB(delay=0.05), knowledge_base_name="kb",
                                  query_modes=MODES, config=config, store=ReportStore({store!r}), progress=False))
"""


def test_sigkilled_run_resumes_to_the_clean_result(tmp_path):
    store_dir = tmp_path / "store"
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(_SCRIPT.format(root=str(ROOT), n=40, store=str(store_dir))))
    process = subprocess.Popen([sys.executable, str(script)], cwd=ROOT)
    watcher = ReportStore(store_dir)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if len(watcher.checkpoint_keys("kb", "killed")) >= 6:
                break
            time.sleep(0.01)
        assert process.poll() is None, "the run finished before it could be killed"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    store = ReportStore(store_dir)
    assert not store.exists("kb", "killed")  # killed: no report, only the checkpoint
    done_before = len(store.read_checkpoint("kb", "killed"))
    assert 6 <= done_before < 80

    kb = ToyKB()
    config = BenchmarkRunConfig(report_id="killed")
    benchmark = ListBenchmark(cases=make_cases(40), evaluators=(TopHit(), AnswerMatch()))
    final = (
        BenchmarkRunner()
        .run_sync(
            benchmark=benchmark,
            recipe=kb,
            knowledge_base_name="kb",
            query_modes=MODES,
            config=config,
            store=store,
            progress=False,
        )
        .report
    )
    assert kb.calls == 80 - done_before
    clean = asyncio.run(_clean_report(40))
    assert comparable(final) == comparable(clean)
    lines = _checkpoint_lines(store, "killed")
    assert sorted(set(lines)) == sorted((r.case_id, r.query_mode) for r in clean.case_results)
    assert len(lines) == 80


def _torn_options(store: ReportStore) -> dict:
    return dict(
        benchmark=_benchmark(3),
        knowledge_base_name="kb",
        query_modes=MODES,
        config=BenchmarkRunConfig(report_id="torn", checkpoint_every=1, max_concurrent_queries=1),
        store=store,
        progress=False,
    )


async def test_a_torn_last_checkpoint_batch_is_cut_before_resuming(tmp_path):
    store = ReportStore(tmp_path)
    options = _torn_options(store)
    with pytest.warns(RuntimeWarning, match="interrupted"):
        await BenchmarkRunner().run(recipe=ToyKB(interrupt_after=2), **options)
    path = store.checkpoint_path("kb", "torn").with_name("cases.arrows")
    data = path.read_bytes()
    source, ends = pa.BufferReader(data), []
    while source.tell() < len(data):
        pa.ipc.read_message(source)
        ends.append(source.tell())
    last = data[ends[-2] : ends[-1]]  # the last batch written, appended again but cut short
    path.write_bytes(data + last[: len(last) // 2])  # a kill in the middle of a write
    done = store.checkpoint_keys("kb", "torn")
    assert len(done) == len(ends) - 1  # the torn copy is left out
    final = (await BenchmarkRunner().run(recipe=ToyKB(), **options)).report
    assert len(store.read_checkpoint("kb", "torn")) == 6 == len(final.case_results)
    assert store.checkpoint_keys("kb", "torn")[: len(done)] == done  # cut, then appended to
    clean = await BenchmarkRunner().run(recipe=ToyKB(), **{**options, "store": None})
    assert comparable(final) == comparable(clean.report)


async def test_a_cases_jsonl_checkpoint_of_an_earlier_version_is_refused_not_resumed(tmp_path):
    """A run checkpointed as ``cases.jsonl`` (earlier versions) is never resumed silently:
    the run stops before any query, naming the file; once it is deleted, its cases run
    again and the report equals a clean run's."""
    store = ReportStore(tmp_path)
    options = _torn_options(store)
    with pytest.warns(RuntimeWarning, match="interrupted"):
        await BenchmarkRunner().run(recipe=ToyKB(interrupt_after=2), **options)
    records = store.read_checkpoint("kb", "torn")
    folder = store.report_dir("kb", "torn")
    for name in ("cases.arrows", "cases.arrows.sums", "header.json", "summary.json"):
        (folder / name).unlink()  # back to what an earlier version left: its JSON lines
    old = folder / "cases.jsonl"
    old.write_text("".join(r.model_dump_json() + "\n" for r in records) + '{"case_id": "q2", "que')
    kb = ToyKB()
    with pytest.raises(OldCheckpointError, match=rf"{old}: .*earlier heta-notebook version"):
        await BenchmarkRunner().run(recipe=kb, **options)
    assert kb.calls == 0 and not (folder / "cases.arrows").exists()
    old.unlink()
    final = (await BenchmarkRunner().run(recipe=kb, **options)).report
    assert kb.calls == 6 and final.metadata["resumed"] == 0
    clean = await BenchmarkRunner().run(recipe=ToyKB(), **{**options, "store": None})
    assert comparable(final) == comparable(clean.report)
    assert comparable(store.load("kb", "torn")) == comparable(clean.report)


_CTRL_C_SCRIPT = """
import signal, sys
# Ctrl-C's handler as in a terminal, whatever this process inherited (a background test run
# ignores SIGINT)
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {root!r})
from heta_notebook import BenchmarkRunConfig, ReportStore, run_benchmark
from tests._runner_helpers import MODES, ListBenchmark, ToyKB, TopHit, make_cases

config = BenchmarkRunConfig(report_id="ctrl-c", checkpoint_every=1, max_concurrent_queries=2)
# 400 cases (≈ 20 s if never stopped): a loaded box must not finish the run before the signal
result = run_benchmark(benchmark=ListBenchmark(cases=make_cases(400), evaluators=(TopHit(),)),
                       recipe=ToyKB(delay=0.05), knowledge_base_name="kb", query_modes=MODES,
                       config=config, store=ReportStore({store!r}), progress=False)
print("PARTIAL", result.report.is_partial, len(result.report.case_results))
"""


def test_ctrl_c_in_a_script_returns_and_saves_the_partial_report(tmp_path):
    store_dir = tmp_path / "store"
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(_CTRL_C_SCRIPT.format(root=str(ROOT), store=str(store_dir))))
    process = subprocess.Popen(
        [sys.executable, str(script)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    watcher = ReportStore(store_dir)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if len(watcher.checkpoint_keys("kb", "ctrl-c")) >= 4:
            break
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0, out
    _, partial, n = out.split()
    saved = ReportStore(store_dir).load("kb", "ctrl-c")
    assert partial == "True" and saved.is_partial and len(saved.case_results) == int(n) >= 4


async def test_a_report_id_is_not_resumed_with_other_settings(tmp_path):
    options = dict(
        benchmark=_benchmark(2),
        knowledge_base_name="kb",
        config=BenchmarkRunConfig(report_id="same"),
        store=ReportStore(tmp_path),
        progress=False,
    )
    await BenchmarkRunner().run(recipe=ToyKB(), query_modes=("alpha",), **options)
    with pytest.raises(ValueError, match="'same' was run with other settings"):
        await BenchmarkRunner().run(recipe=ToyKB(), query_modes=MODES, **options)


async def test_a_local_run_resumes_the_shards_an_interrupted_ray_run_left(tmp_path):
    """A killed Ray driver saves no report; its shards' checkpoints sit in the report's
    folder (``shards/``). A local run of the same report id keeps them, runs only the rest,
    and removes them once its report is saved."""
    store = ReportStore(tmp_path)
    options = _torn_options(store)
    clean = (await BenchmarkRunner().run(recipe=ToyKB(), **{**options, "store": None})).report
    shards = ReportStore(store.report_dir("kb", "torn") / "shards")
    done = list(clean.case_results)[:4]
    for shard_id, part in (("torn--s-abc-00000", done[:3]), ("torn--s-abc-00001", done[3:])):
        with shards.run("ray", shard_id) as shard:  # as a Ray task checkpoints its shard
            shard.append(part)
    kb = ToyKB()
    final = (await BenchmarkRunner().run(recipe=kb, **options)).report
    assert kb.calls == 6 - 4 and final.metadata["resumed"] == 4
    assert comparable(final) == comparable(clean)
    assert shards.report_ids("ray") == []  # the saved report holds them
