"""run_sync: plain code runs coroutines in scripts and in a notebook's running loop alike.

Inside a running loop (a Jupyter cell) the notebook's loop must not be re-entered: its other
pending tasks (the kernel's message handlers) must not run mid-cell, which is what hung a
live JupyterLab kernel with nest_asyncio. The stop button must still end a run cleanly.
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import signal
import threading

import pytest

from heta_notebook import BenchmarkRunConfig, ReportStore, run_benchmark
from heta_notebook.runner.loop import run_sync
from tests._runner_helpers import ListBenchmark, TopHit, ToyKB, make_cases


async def _value() -> str:
    await asyncio.sleep(0)
    return "done"


def test_in_a_script_it_is_asyncio_run() -> None:
    assert run_sync(_value) == "done"


async def test_in_a_running_loop_the_loop_is_not_reentered() -> None:
    events: list[str] = []

    async def kernel_handler() -> None:  # stands for the kernel's next queued message
        events.append("kernel task ran")

    async def work() -> str:
        await asyncio.sleep(0.05)
        events.append("work finished")
        return "done"

    asyncio.get_running_loop().create_task(kernel_handler())
    assert run_sync(work) == "done"  # blocks this cell, as a sync call in a notebook does
    assert events == ["work finished"]
    assert not hasattr(asyncio, "_nest_patched")
    await asyncio.sleep(0)
    assert events == ["work finished", "kernel task ran"]


async def test_errors_reach_the_caller() -> None:
    async def boom() -> None:
        raise ValueError("bad input")

    try:
        run_sync(boom)
    except ValueError as exc:
        assert str(exc) == "bad input"
    else:  # pragma: no cover
        raise AssertionError("the error was swallowed")


@contextlib.contextmanager
def kernel_sigint():
    """SIGINT raises KeyboardInterrupt in the running cell, as in an ipykernel.

    (asyncio.Runner, which runs these async tests, installs its own SIGINT handler while the
    test runs, so this is entered inside the test.)
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _press_stop_after(started: threading.Event) -> None:
    def press() -> None:
        started.wait(30)
        _thread.interrupt_main()  # what the notebook's stop button sends

    threading.Thread(target=press, daemon=True).start()


async def test_stop_button_cancels_and_keeps_the_partial_result() -> None:
    started = threading.Event()

    async def long_run() -> str:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            return "partial"
        return "complete"

    _press_stop_after(started)
    with kernel_sigint():
        assert run_sync(long_run) == "partial"


async def test_stop_button_during_run_benchmark_saves_a_partial_report(tmp_path) -> None:
    started = threading.Event()

    class SlowKB(ToyKB):
        async def query(self, text, **kwargs):
            if self.calls >= 4:
                started.set()
            return await super().query(text, **kwargs)

    store = ReportStore(tmp_path)
    _press_stop_after(started)
    with kernel_sigint(), pytest.warns(RuntimeWarning, match="interrupted"):
        result = run_benchmark(
            benchmark=ListBenchmark(cases=make_cases(200), evaluators=(TopHit(),)),
            recipe=SlowKB(delay=0.05),
            store=store,
            config=BenchmarkRunConfig(report_id="stopped", max_concurrent_queries=2),
            progress=False,
        )
    assert result.report.is_partial
    assert 0 < len(result.report.case_results) < 400
    assert store.load(result.report.knowledge_base_name, "stopped").is_partial
