"""``in_daemon_thread`` reuses its daemon threads and sends the calls of one loop turn to one
thread together: a run of fast sync calls does not start a thread per call, calls that wait
still run side by side (a batch spreads out), a fast call is never held behind a hung one,
and a thread still running an abandoned (timed-out) call is not reused until it returns."""

from __future__ import annotations

import asyncio
import threading

import pytest

from heta_notebook._util.loop import abandoned_calls, in_daemon_thread


async def test_fast_calls_reuse_a_thread() -> None:
    idents = [await in_daemon_thread(threading.get_ident) for _ in range(50)]
    assert threading.get_ident() not in idents
    assert len(set(idents)) <= 2  # one thread, taken again after each call


async def test_calls_of_one_loop_turn_share_a_thread() -> None:
    idents = await asyncio.gather(*(in_daemon_thread(threading.get_ident) for _ in range(8)))
    assert len(set(idents)) <= 2


async def test_a_fast_call_is_not_held_behind_a_hung_one_of_its_batch() -> None:
    release = threading.Event()
    fast = asyncio.ensure_future(in_daemon_thread(lambda: "fast"))
    hung = asyncio.ensure_future(in_daemon_thread(release.wait, 30))
    try:
        assert await asyncio.wait_for(fast, 10) == "fast"  # while the other still hangs
        assert not hung.done()
    finally:
        release.set()
    assert await hung is True


async def test_concurrent_calls_get_a_thread_each() -> None:
    barrier = threading.Barrier(4, timeout=10)

    def meet() -> int:
        barrier.wait()  # returns only when four calls run at the same time
        return threading.get_ident()

    idents = await asyncio.gather(*(in_daemon_thread(meet) for _ in range(4)))
    assert len(set(idents)) == 4


async def test_a_hung_call_is_abandoned_and_its_thread_not_reused_until_it_returns() -> None:
    release, started = threading.Event(), threading.Event()

    def hang() -> int:
        started.set()
        release.wait(30)
        return threading.get_ident()

    with abandoned_calls() as abandoned, pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):
            await in_daemon_thread(hang)
    assert started.is_set() and abandoned == ["heta-notebook-call-hang"]
    hung = next(t for t in threading.enumerate() if t.name == "heta-notebook-call-hang")
    others = {await in_daemon_thread(threading.get_ident) for _ in range(5)}
    assert hung.ident not in others  # busy with the abandoned call
    release.set()
    await asyncio.sleep(0.1)
    with abandoned_calls() as none:
        assert await in_daemon_thread(lambda: 7) == 7
    assert none == []


async def test_errors_reach_the_caller_and_context_variables_the_call() -> None:
    import contextvars

    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    var.set("the caller's")
    assert await in_daemon_thread(var.get) == "the caller's"
    with pytest.raises(ZeroDivisionError):
        await in_daemon_thread(lambda: 1 / 0)
