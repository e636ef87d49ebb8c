"""Timeouts bind sync systems (issue 40): a sync call past ``query_timeout`` becomes that case's
timeout error and the run goes on; the worker that never returns is abandoned (its own daemon
thread) and counted, holds no pool worker, and stopping the run stops waiting for it."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from heta_notebook import BenchmarkRunner, RecordsBenchmark, run_benchmark

N_CASES, HUNG = 20, {"c3", "c13"}  # 10% of the cases never answer


def _bench() -> RecordsBenchmark:
    return RecordsBenchmark(
        [{"id": f"c{i}", "query": f"c{i}", "evidence": ["d1"]} for i in range(N_CASES)],
        documents=[{"id": "d1", "text": "one"}, {"id": "d2", "text": "two"}],
    )


@pytest.fixture
def release():
    """An event the hung calls wait on (for ever, as far as the run knows); set at teardown."""
    event = threading.Event()
    yield event
    event.set()


def _hanging(release: threading.Event, returned: list[str] | None = None):
    calls: list[str] = []

    def search(text: str) -> list[str]:  # a sync system
        calls.append(text)
        if text in HUNG:
            release.wait(60)  # hangs far past the timeout; let go after the test
        if returned is not None:
            returned.append(text)
        return ["d1", "d2"]

    return search, calls


def test_hung_sync_cases_time_out_and_the_run_finishes(release) -> None:
    timeout, returned = 0.3, []
    search, calls = _hanging(release, returned)
    started = time.perf_counter()
    report = run_benchmark(
        benchmark=_bench(),
        recipe=search,
        config={"query_timeout": timeout, "max_concurrent_queries": 2},  # both could be held
        progress=False,
    ).report
    elapsed = time.perf_counter() - started
    errors = {r.case_id: r.error for r in report.case_results if r.error is not None}
    assert set(errors) == HUNG
    for error in errors.values():
        assert error.error_type == "TimeoutError" and "timed out after 0.3 s" in error.message
        assert error.metadata == {"abandoned_worker": True}
    # abandoned, not waited for: each hung call is still running when the run has ended, and
    # counted once in the report's header
    assert report.metadata["n_abandoned_workers"] == len(HUNG)
    assert sorted(returned) == sorted(f"c{i}" for i in range(N_CASES) if f"c{i}" not in HUNG)
    assert not report.is_partial
    assert len(report.case_results) == N_CASES
    # each case asked once: c3 hangs in the dry run (the first 5), whose timeout is its error
    assert sorted(calls) == sorted(f"c{i}" for i in range(N_CASES))
    # a hung case costs about its timeout, not its hang (60 s): at most the timeouts one
    # after another, plus a margin a loaded 2-core machine stays far inside (~1 s unloaded)
    assert elapsed < timeout * len(HUNG) + 8


async def test_stopping_a_run_stops_waiting_for_a_hung_sync_call(release) -> None:
    search, calls = _hanging(release)
    run = asyncio.ensure_future(
        BenchmarkRunner().run(
            benchmark=_bench(), recipe=search, config={"max_concurrent_queries": 1}, progress=False
        )
    )
    while "c3" not in calls:  # no timeout at all: c3 hangs the only worker
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    run.cancel()
    with pytest.warns(RuntimeWarning, match="interrupted"):
        try:
            result = await asyncio.wait_for(asyncio.shield(run), 10)  # long before the 60 s hang
        except asyncio.CancelledError as stopped:
            result = stopped.partial  # type: ignore[attr-defined]
    report = result.report
    assert report.is_partial and report.metadata["interrupted"]
    assert "c3" not in {r.case_id for r in report.case_results}  # never answered, not waited for
