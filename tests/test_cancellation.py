"""Cancellation means cancellation: ``task.cancel()`` raises ``CancelledError`` and
``asyncio.timeout`` raises ``TimeoutError``, each after the partial report is checkpointed and
saved; the sync entry points (Ctrl-C, the stop button) keep returning the partial report
(issue 27, part 4)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore, aevaluate
from tests._runner_helpers import MODES, AnswerMatch, ListBenchmark, TopHit, ToyKB, make_cases

ROOT = Path(__file__).resolve().parents[1]


def _options(store: ReportStore, report_id: str) -> dict:
    return dict(
        benchmark=ListBenchmark(cases=make_cases(40), evaluators=(TopHit(), AnswerMatch())),
        recipe=ToyKB(delay=0.02),
        knowledge_base_name="kb",
        query_modes=MODES,
        config=BenchmarkRunConfig(
            report_id=report_id, checkpoint_every=1, max_concurrent_queries=2
        ),
        store=store,
        progress=False,
    )


async def _until_checkpointed(store: ReportStore, report_id: str) -> None:
    while not store.checkpoint_keys("kb", report_id):
        await asyncio.sleep(0.005)


async def test_task_cancel_raises_after_saving_the_partial_report(tmp_path):
    store = ReportStore(tmp_path)
    task = asyncio.ensure_future(BenchmarkRunner().run(**_options(store, "c")))
    await _until_checkpointed(store, "c")
    task.cancel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(asyncio.CancelledError) as caught:
            await task
    assert task.cancelled()  # the task itself ends cancelled, as asyncio code expects
    partial = caught.value.partial.report
    saved = store.load("kb", "c")
    assert partial.is_partial and saved.is_partial
    assert 0 < len(saved.case_results) == len(partial.case_results) < 80


async def test_asyncio_timeout_raises_timeout_error_after_saving(tmp_path):
    store = ReportStore(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.4):
                await BenchmarkRunner().run(**_options(store, "t"))
    saved = store.load("kb", "t")
    assert saved.is_partial and saved.metadata["interrupted"] == "CancelledError"
    assert 0 < len(saved.case_results) < 80


async def test_aevaluate_is_cancelled_too(tmp_path):
    async def slow(inputs):
        await asyncio.sleep(0.05)
        return {"answer": inputs["query"]}

    data = [{"inputs": {"query": f"q{i}"}, "ground_truth": {"answer": "x"}} for i in range(200)]
    store = ReportStore(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await aevaluate(slow, data, [], store=store, report_id="e", progress=False)
    saved = store.load("slow", "e")
    assert saved.is_partial and 0 < len(saved.case_results) < 200


_SCRIPT = """
import signal, sys, warnings
# Ctrl-C's handler as in a terminal, whatever this process inherited: a test run started in
# the background (`cmd &`) ignores SIGINT, and so would this script
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {root!r})
warnings.simplefilter("ignore", RuntimeWarning)
from heta_notebook import ReportStore, run_benchmark
from tests.test_cancellation import _options
result = run_benchmark(**_options(ReportStore({store!r}), "s"))
print("RETURNED", result.report.is_partial, len(result.report.case_results), flush=True)
"""


def test_ctrl_c_in_a_script_still_returns_the_partial_report(tmp_path):
    """The sync form (run_benchmark in a script, Ctrl-C) returns the partial report."""
    store = tmp_path / "store"
    script = _SCRIPT.format(root=str(ROOT), store=str(store))
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        folder = store / "_heta/knowledge_bases/kb/evaluations/s"
        if (folder / "cases.arrows.sums").is_file() and len(
            (folder / "cases.arrows.sums").read_text().splitlines()
        ) > 1:
            break
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    words = out.split()
    assert words[:2] == ["RETURNED", "True"] and 0 < int(words[2]) < 80
    assert ReportStore(store).load("kb", "s").is_partial
