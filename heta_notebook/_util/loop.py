"""Sync entry points and the notebook's event loop: ``run_sync`` and ``sync_form``.

In a script ``run_sync`` is ``asyncio.run``. Inside a running loop (a Jupyter cell) the
coroutine runs ON that loop, re-entered through nest-asyncio2, so objects bound to the
notebook's loop (an ``httpx.AsyncClient`` or ``AsyncOpenAI`` made in an earlier cell) work
in the evaluated function and stay usable afterwards. nest-asyncio2 is applied on the first
such call, never at import; it is the maintained fork that ipykernel 7 itself depends on
(nest-asyncio 1.6 hangs "Run All" with ipykernel 7). A loop it cannot patch (uvloop, or
another event-loop policy) makes the coroutine run on a fresh loop in a helper thread; a
"different loop" failure there becomes a ``LoopMismatchError`` naming the ``await`` form.
The stop button cancels the coroutine. A run that is cancelled saves its partial result and
raises ``CancelledError`` carrying it (``.partial``, see :func:`cancelled_with`), so
``task.cancel()`` and ``asyncio.timeout`` work as in any asyncio code; the sync forms catch
it and return that partial result, as documented.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import difflib
import functools
import inspect
import signal
import threading
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterable, Iterator
from typing import Any, ParamSpec, TypeVar

from heta_notebook._util.threads import (  # noqa: F401 - imported from here by callers
    abandoned_calls,
    in_daemon_thread,
)

T = TypeVar("T")
P = ParamSpec("P")

# Set while a coroutine runs on the helper thread's loop: the ``await`` form to suggest.
_HELPER_AWAIT_FORM: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "heta_notebook_helper_await_form", default=None
)
_MISMATCH = ("attached to a different loop", "bound to a different event loop")


class LoopMismatchError(RuntimeError):
    """An object bound to the notebook's loop was used from the helper thread's loop."""


def sync_form(
    coroutine_function: Callable[P, Coroutine[Any, Any, T]], name: str, doc: str
) -> Callable[P, T]:
    """The ``run_sync`` twin of an ``async`` entry point: same parameters, no ``await``."""
    await_form = f"await {coroutine_function.__name__}(...)"
    if coroutine_function.__qualname__.startswith("BenchmarkRunner."):
        await_form = f"await BenchmarkRunner().{coroutine_function.__name__}(...)"

    keywords = _keyword_names(coroutine_function)

    @functools.wraps(coroutine_function)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        if keywords is not None and not keywords.issuperset(kwargs):
            raise TypeError(unknown_keywords(name, kwargs, keywords))
        return run_sync(lambda: coroutine_function(*args, **kwargs), await_form=await_form)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    return call


# Keywords users reach for from other libraries, and the one that takes what they meant.
KEYWORD_ALIASES = {
    "system": "recipe",
    "systems": "recipes",
    "kb": "recipe",
    "knowledge_base": "recipe",
    "retriever": "recipe",
    "metrics": "evaluators",
    "modes": "query_modes",
    "mode": "query_modes",
    "top_k": "config={'top_k': ...}",
    "concurrency": "config={'max_concurrent_queries': ...}",
    "dataset": "benchmark",
}


def _keyword_names(function: Callable[..., Any]) -> frozenset[str] | None:
    """The keywords ``function`` accepts, or None when it takes ``**kwargs``."""
    parameters = inspect.signature(function).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters if p.kind is not inspect.Parameter.POSITIONAL_ONLY)


def unknown_keywords(name: str, given: Iterable[str], keywords: Collection[str]) -> str:
    """``"run_benchmark() got an unexpected keyword argument 'system' (did you mean
    recipe=?)"``: each unknown keyword with what it most likely meant."""
    parts = []
    for key in (k for k in given if k not in keywords):
        close = difflib.get_close_matches(key, sorted(keywords), n=1)
        meant = close[0] if close else KEYWORD_ALIASES.get(key)
        if meant is not None and meant.split("=")[0] not in keywords:
            meant = None
        hint = f" (did you mean {meant}{'' if '=' in meant else '='}?)" if meant else ""
        parts.append(f"{key!r}{hint}")
    plural = "s" if len(parts) > 1 else ""
    return (
        f"{name}() got an unexpected keyword argument{plural} {', '.join(parts)}; "
        f"it takes: {', '.join(sorted(keywords))}"
    )


def cancelled_with(partial: Any) -> asyncio.CancelledError:
    """The ``CancelledError`` a cancelled run raises once its partial result is saved; the
    result rides along as ``.partial`` (what the sync forms return)."""
    error = asyncio.CancelledError("cancelled; the partial result is saved (error.partial)")
    error.partial = partial  # type: ignore[attr-defined]
    return error


async def _keeping_partial(make: Callable[[], Awaitable[T]]) -> T:
    """``await make()``; a cancel that left a partial result returns it (the sync forms)."""
    try:
        return await make()
    except asyncio.CancelledError as error:
        if not hasattr(error, "partial"):
            raise
        return error.partial


def run_sync(make: Callable[[], Awaitable[T]], *, await_form: str = "the await form") -> T:
    """Run ``make()`` to completion and return its value, in or out of a running loop.

    Inside a running loop it runs on that loop (nest-asyncio2, applied on first use), or on
    a helper thread's loop when that loop cannot be patched. A Ctrl-C / stop button cancels
    the run; a (partial) result it still returns is returned rather than lost.
    """
    original = make
    make = lambda: _keeping_partial(original)  # noqa: E731 - same shape as the argument
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return _run_here(make)
    if _can_nest(loop):
        return _run_nested(loop, make)
    return _run_in_thread(make, await_form)


def loop_mismatch(error: BaseException) -> LoopMismatchError | None:
    """A clear error for a "different loop" failure on the helper thread, else None."""
    await_form = _HELPER_AWAIT_FORM.get()
    if await_form is None or not any(text in str(error) for text in _MISMATCH):
        return None
    return LoopMismatchError(
        f"{error} -- this notebook's event loop could not be patched with nest-asyncio2 "
        f"({type(asyncio.get_event_loop_policy()).__module__} policy), so the run went to a "
        "helper thread's loop, where objects made on the notebook's loop (e.g. an "
        f"httpx.AsyncClient or AsyncOpenAI from an earlier cell) do not work: use "
        f"`{await_form}` in the cell instead"
    )


def _can_nest(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether nest-asyncio2 can patch ``loop``: a stdlib loop under a stdlib policy."""
    if getattr(type(loop), "_nest_patched", False):
        return True
    policy = asyncio.get_event_loop_policy()
    stdlib_policy = type(policy).__module__.split(".")[0] == "asyncio"
    return isinstance(loop, asyncio.BaseEventLoop) and stdlib_policy


def _run_nested(loop: asyncio.AbstractEventLoop, make: Callable[[], Awaitable[T]]) -> T:
    """Run on the caller's own (running) loop, re-entered through nest-asyncio2."""
    import nest_asyncio2

    nest_asyncio2.apply(loop)  # idempotent; patches on the first call only
    task = asyncio.ensure_future(make(), loop=loop)
    _wake_while(task, loop)
    with _stop_cancels(task, loop) as stopped:
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            if stopped:  # stopped before any result existed (e.g. during the index build)
                raise KeyboardInterrupt from None
            raise
        except KeyboardInterrupt:  # raised in our code after all: cancel, keep what it returns
            if task.done():
                raise
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                value = loop.run_until_complete(task)
                return value
            raise


@contextlib.contextmanager
def _stop_cancels(
    task: asyncio.Future[Any], loop: asyncio.AbstractEventLoop
) -> Iterator[list[bool]]:
    """While ``task`` runs, the stop button (SIGINT) cancels it instead of raising anywhere.

    A KeyboardInterrupt raised wherever the main thread happens to be (a checkpoint write,
    a progress update) would tear the run apart; a cancel lets it save its partial report.
    A second press while it winds down raises KeyboardInterrupt as usual. Only where the
    handler is Python's default (the main thread of a kernel or a script).
    """
    stopped: list[bool] = []
    on_main = threading.current_thread() is threading.main_thread()
    if not on_main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield stopped
        return

    def on_stop(signum: int, frame: Any) -> None:
        if stopped or task.done():
            signal.default_int_handler(signum, frame)
        stopped.append(True)
        loop.call_soon_threadsafe(task.cancel)

    signal.signal(signal.SIGINT, on_stop)
    try:
        yield stopped
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _wake_while(task: asyncio.Future[Any], loop: asyncio.AbstractEventLoop) -> None:
    """Wake the loop every 0.1 s until ``task`` is done, so a pending interrupt is seen.

    A signal that lands on another thread only sets a flag; the main thread acts on it
    when it next runs Python code, which an idle ``select`` would put off indefinitely.
    """

    def beat() -> None:
        if not task.done():
            loop.call_later(0.1, beat)

    loop.call_later(0.1, beat)


def _run_here(make: Callable[[], Awaitable[T]]) -> T:
    holder: dict[str, Any] = {}

    async def main() -> None:
        # The value stays off the task: Python 3.11's asyncio.run formats its SIGINT
        # handler's repr (which holds the task, then the task's result) on the way out,
        # and a report's repr builds its frames: every score record of the run.
        holder["value"] = await make()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        if "value" in holder:
            return holder["value"]
        raise
    return holder["value"]


def _run_in_thread(make: Callable[[], Awaitable[T]], await_form: str) -> T:
    box: dict[str, Any] = {}
    started, finished = threading.Event(), threading.Event()

    async def main() -> None:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        _HELPER_AWAIT_FORM.set(await_form)
        started.set()
        box["value"] = await make()

    def target() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc
        finally:
            started.set()
            finished.set()

    thread = threading.Thread(target=target, name="heta-notebook-run-sync", daemon=True)
    try:
        thread.start()  # inside the try: an interrupt may arrive as soon as the run starts
        # short waits on an Event, not Thread.join: a pending interrupt is seen within 0.1 s,
        # and an interrupted join can wrongly report the thread as stopped
        while not finished.wait(0.1):
            pass
    except KeyboardInterrupt:  # the stop button: cancel the run and keep what it returns
        if not thread.is_alive() and not finished.is_set():
            raise  # interrupted before the thread started
        started.wait()
        if "loop" in box:
            with contextlib.suppress(RuntimeError):  # the loop may have just closed
                box["loop"].call_soon_threadsafe(box["task"].cancel)
        finished.wait()
        if "value" not in box:
            raise
    if "value" in box:
        return box["value"]
    raise box["error"]
