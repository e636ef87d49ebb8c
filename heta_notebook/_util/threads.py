"""``in_daemon_thread``: a sync call awaited from the loop, in a daemon thread it can walk away from.

A sync system (or answer step, or evaluator) runs off the loop so a query timeout binds and a
stop is not held up: when the awaiting is cancelled, the loop stops waiting and the call runs
on, unseen, until it returns (Python cannot stop a thread); it holds no pool worker and no
shutdown (unlike ``asyncio.to_thread``, whose executor ``asyncio.run`` joins). Such a call is
*abandoned* and counted (:func:`abandoned_calls`).

What it costs is kept small, since a plain function answering from memory takes microseconds:

- **Threads are reused.** A thread that finished its calls waits to be taken again
  (:class:`_CallThread`); one still running an abandoned call is not taken until it returns.
- **Calls made in one loop turn go to one thread together** (:class:`_Batch`), one hand-over
  instead of one per call. So that batching never serialises calls that wait (a sync HTTP
  client), a call that runs past ``SPREAD_AFTER`` hands the batch's calls not yet started a
  thread each, and its function is called in a thread of its own from then on.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import functools
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

SPREAD_AFTER = 0.002  # s: a call running longer waits on something; its batch spreads out

_ABANDONED: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "heta_notebook_abandoned", default=None
)
# functions seen running past SPREAD_AFTER: called in a thread of their own (no batch)
_WAITS: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


async def in_daemon_thread(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` in a daemon thread, awaited without blocking the loop; a
    cancelled await (a timeout, a stop) leaves a running call behind, counted as abandoned."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    name = f"heta-notebook-call-{getattr(function, '__name__', 'function')}"
    call = _Call(loop, future, contextvars.copy_context(), name, function, args, kwargs)
    if _waits(function):
        _CallThread.take().run(_Batch(loop, [call]))
    else:
        _Batch.add(loop, call)
    try:
        return await future
    except asyncio.CancelledError:
        call.cancelled = True  # not started yet: it never will be
        if call.started and not call.returned:
            sink = _ABANDONED.get()
            if sink is not None:
                sink.append(name)
        raise


class abandoned_calls:  # noqa: N801 - used as the function it was: with abandoned_calls()
    """Collect the names of the :func:`in_daemon_thread` calls abandoned (still running when
    their awaiting was cancelled: a timeout, a stop) inside the ``with`` block.

    A class, not a ``contextlib.contextmanager``: the runner enters one per query (a
    generator-based one cost ~2 us of the loop's time between a reply and the next query)."""

    __slots__ = ("_sink", "_token")

    def __enter__(self) -> list[str]:
        self._sink: list[str] = []
        self._token = _ABANDONED.set(self._sink)
        return self._sink

    def __exit__(self, *exc: object) -> None:
        _ABANDONED.reset(self._token)


def note_abandoned(names: Sequence[str]) -> None:
    """Count ``names`` as abandoned in the enclosing :func:`abandoned_calls` block (calls left
    behind elsewhere, e.g. by a dry run whose timeout the run records as its own)."""
    sink = _ABANDONED.get()
    if sink is not None:
        sink.extend(names)


def _waits(function: Any) -> bool:
    try:
        return function in _WAITS
    except TypeError:  # not weakly referable: never remembered, always batched first
        return False


def _mark_waits(function: Any) -> None:
    with contextlib.suppress(TypeError):
        _WAITS[function] = True


class _Call:
    """One call, and how its outcome reaches the awaiting coroutine on its loop."""

    __slots__ = (
        "loop",
        "future",
        "context",
        "name",
        "function",
        "args",
        "kwargs",
        "started",
        "returned",
        "cancelled",
    )

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        future: asyncio.Future[Any],
        context: contextvars.Context,
        name: str,
        function: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        self.loop, self.future, self.context, self.name = loop, future, context, name
        self.function, self.args, self.kwargs = function, args, kwargs
        self.started = self.returned = self.cancelled = False

    def __call__(self) -> Callable[[], None] | None:
        """In a thread: run the function in the caller's context; what hands its outcome to
        the awaiting coroutine, on the loop (None when no one waits for it any more)."""
        self.started = True
        if self.cancelled or self.future.done():
            self.returned = True
            return None
        try:
            value = self.context.run(self.function, *self.args, **self.kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            outcome = functools.partial(self._settle, self.future.set_exception, exc)
        else:
            outcome = functools.partial(self._settle, self.future.set_result, value)
        self.returned = True
        self.args = self.kwargs = None  # type: ignore[assignment]  # free them early
        return outcome

    def _settle(self, setter: Callable[[Any], None], value: Any) -> None:
        if not self.future.done():
            setter(value)


def _settle_all(outcomes: list[Callable[[], None]]) -> None:
    for outcome in outcomes:
        outcome()


class _Batch:
    """Calls made in one loop turn, run one after another by one thread; when one of them
    runs past ``SPREAD_AFTER``, the rest get a thread each (checked from the loop)."""

    _pending: dict[asyncio.AbstractEventLoop, list[_Call]] = {}

    def __init__(self, loop: asyncio.AbstractEventLoop, calls: list[_Call]) -> None:
        self.loop, self.calls = loop, collections.deque(calls)
        self.held: collections.deque[Callable[[], None]] = collections.deque()
        self.current: _Call | None = None
        self.since = 0.0

    @classmethod
    def add(cls, loop: asyncio.AbstractEventLoop, call: _Call) -> None:
        """Queue ``call`` for the batch this loop turn sends."""
        pending = cls._pending.get(loop)
        if pending is None:
            pending = cls._pending[loop] = []
            loop.call_soon(cls._send, loop)
        pending.append(call)

    @classmethod
    def _send(cls, loop: asyncio.AbstractEventLoop) -> None:
        batch = cls(loop, cls._pending.pop(loop, []))
        _CallThread.take().run(batch)
        if len(batch.calls) > 1:
            loop.call_later(SPREAD_AFTER, batch._check)

    def run(self, thread: threading.Thread) -> None:
        """In ``thread``: each call not yet taken, in order. Outcomes are handed over
        together when the batch is done or after a call that took long; while one runs
        long, the loop takes those of the calls before it (``_check``)."""
        calls, held = self.calls, self.held
        while True:
            try:
                call = calls.popleft()
            except IndexError:
                break
            thread.name = call.name
            self.current, self.since = call, time.perf_counter()
            outcome = call()
            if outcome is not None:
                held.append(outcome)
            if time.perf_counter() - self.since > SPREAD_AFTER:
                _mark_waits(call.function)
                self._hand_over()
            call.function = None  # type: ignore[assignment]
        self._hand_over()

    def _hand_over(self) -> None:
        """In the thread: the held outcomes to the loop, settled in one loop turn (so the
        coroutines they wake ask their next calls in one turn too: one batch)."""
        outcomes = []
        with contextlib.suppress(IndexError):
            while True:
                outcomes.append(self.held.popleft())
        if outcomes:
            with contextlib.suppress(RuntimeError):  # the loop closed while the thread ran on
                self.loop.call_soon_threadsafe(_settle_all, outcomes)

    def _check(self) -> None:
        """On the loop, while the batch runs: when its running call takes long, settle the
        outcomes held so far and give each call not yet started a thread of its own."""
        current = self.current
        running = current is not None and not current.returned
        if running and time.perf_counter() - self.since > SPREAD_AFTER:
            _mark_waits(current.function)  # type: ignore[union-attr]  # running: not None
            with contextlib.suppress(IndexError):
                while True:
                    self.held.popleft()()
            with contextlib.suppress(IndexError):
                while True:
                    _CallThread.take().run(_Batch(self.loop, [self.calls.popleft()]))
            return
        if running or self.calls:
            self.loop.call_later(SPREAD_AFTER, self._check)


class _CallThread:
    """A daemon thread that runs the batches handed to it one at a time and, between them,
    waits idle to be taken again (at most ``KEEP_IDLE`` wait; the rest end)."""

    KEEP_IDLE = 64
    _idle: list[_CallThread] = []

    def __init__(self) -> None:
        import queue

        self._batches: queue.SimpleQueue[_Batch] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="heta-notebook-call", daemon=True)
        self._thread.start()

    @classmethod
    def take(cls) -> _CallThread:
        """An idle thread, or a new one."""
        try:
            return cls._idle.pop()
        except IndexError:
            return cls()

    def run(self, batch: _Batch) -> None:
        self._batches.put(batch)

    def _serve(self) -> None:
        thread = self._thread
        while True:
            self._batches.get().run(thread)
            if len(self._idle) >= self.KEEP_IDLE:
                return
            self._idle.append(self)


# a forked child has none of its parent's threads: it starts with no idle one, nothing pending
os.register_at_fork(after_in_child=_CallThread._idle.clear)
os.register_at_fork(after_in_child=_Batch._pending.clear)


__all__ = ["SPREAD_AFTER", "abandoned_calls", "in_daemon_thread", "note_abandoned"]
