"""run_sync: plain code runs coroutines in scripts and in a notebook's running loop alike.

Inside a running loop (a Jupyter cell) the coroutine runs on that loop (nest-asyncio2), so
objects bound to it keep working; a loop nest-asyncio2 cannot patch falls back to a helper
thread and a "different loop" failure names the await form. The stop button must still end
a run cleanly.
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from heta_notebook import BenchmarkRunConfig, ReportStore, run_benchmark
from heta_notebook._util.loop import run_sync
from tests._runner_helpers import ListBenchmark, TopHit, ToyKB, make_cases

ROOT = Path(__file__).resolve().parents[1]


async def _value() -> str:
    await asyncio.sleep(0)
    return "done"


def test_in_a_script_it_is_asyncio_run() -> None:
    assert run_sync(_value) == "done"


async def test_in_a_running_loop_it_runs_on_that_loop() -> None:
    loop = asyncio.get_running_loop()
    bound = loop.create_future()  # bound to this loop, like a client made in an earlier cell
    loop.call_later(0.05, bound.set_result, "from the notebook's loop")

    async def work() -> tuple[str, bool]:
        return await bound, asyncio.get_running_loop() is loop

    assert run_sync(work) == ("from the notebook's loop", True)
    assert getattr(asyncio, "_nest_patched", False)  # applied on this first nested call


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


FALLBACK = """
import asyncio, sys, warnings
sys.path.insert(0, {root!r})
warnings.simplefilter("ignore", DeprecationWarning)
{policy}
from heta_notebook import evaluate, run_benchmark
from heta_notebook._util.loop import LoopMismatchError
from tests._runner_helpers import ListBenchmark, ToyKB, TopHit, make_cases

async def cell():
    pending = asyncio.get_running_loop().create_future()  # made on the notebook's loop

    async def uses_the_notebook_loop(inputs):
        return await pending  # from the helper thread's loop: "attached to a different loop"

    plain = evaluate(lambda inputs: "ok", [{{"inputs": {{"q": 1}}}}], progress=False)
    bench = run_benchmark(benchmark=ListBenchmark(cases=make_cases(2), evaluators=(TopHit(),)),
                          recipe=ToyKB(), progress=False)
    try:
        evaluate(uses_the_notebook_loop, [{{"inputs": {{"q": 1}}}}], progress=False)
    except LoopMismatchError as exc:
        message = str(exc)
    else:
        message = "no error"
    print(len(plain.case_results), len(bench.report.case_results))
    print(getattr(asyncio, "_nest_patched", False))
    print(message)

asyncio.run(cell())
"""

POLICIES = {
    "custom policy": "class OtherPolicy(asyncio.DefaultEventLoopPolicy): pass\n"
    "asyncio.set_event_loop_policy(OtherPolicy())",
    "uvloop": "import uvloop\nasyncio.set_event_loop_policy(uvloop.EventLoopPolicy())",
}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_a_loop_that_cannot_be_patched_falls_back_and_names_the_await_form(policy) -> None:
    if policy == "uvloop":
        pytest.importorskip("uvloop")
    code = FALLBACK.format(root=str(ROOT), policy=POLICIES[policy])
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    counts, patched, message = done.stdout.splitlines()[:3]
    assert counts == "1 4"  # plain functions and KBs run fine on the helper thread
    assert patched == "False"  # this loop was not patched
    assert "attached to a different loop" in message and "`await aevaluate(...)`" in message
