"""``run_sync``: run a coroutine from plain code, in a script or inside a notebook cell.

In a script this is ``asyncio.run``. Inside Jupyter a loop is already running; re-entering it
(nest_asyncio) lets the kernel's own pending tasks run mid-cell, which hangs a live
JupyterLab kernel during "run all" ("cannot enter context", "Task was destroyed but it is
pending"). So there the coroutine runs on a fresh loop in a helper thread while the cell
waits, and the notebook's loop is never re-entered or patched. The stop button still works:
the interrupt cancels the coroutine, which may return a partial result (the runner does).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")


def sync_form(
    coroutine_function: Callable[P, Coroutine[Any, Any, T]], name: str, doc: str
) -> Callable[P, T]:
    """The ``run_sync`` twin of an ``async`` entry point: same parameters, no ``await``."""

    @functools.wraps(coroutine_function)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(lambda: coroutine_function(*args, **kwargs))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    return call


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run ``make()`` to completion and return its value, in or out of a running loop.

    A Ctrl-C / stop button that arrives after the coroutine produced its (partial) result
    returns that result rather than losing it.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_here(make)
    return _run_in_thread(make)


def _run_here(make: Callable[[], Awaitable[T]]) -> T:
    holder: dict[str, Any] = {}

    async def main() -> T:
        holder["value"] = await make()
        return holder["value"]

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        if "value" in holder:
            return holder["value"]
        raise


def _run_in_thread(make: Callable[[], Awaitable[T]]) -> T:
    box: dict[str, Any] = {}
    started, finished = threading.Event(), threading.Event()

    async def main() -> None:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
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
