"""Run a coroutine from plain code: ``asyncio.run`` in a script, nest-asyncio inside Jupyter.

nest_asyncio is applied only here and only when a loop is already running (a notebook
kernel), never at import: patching the loop of a host application would break it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run ``make()`` to completion and return its value, in or out of a running loop.

    If Ctrl-C stops a script after the run returned its partial result, that result is
    returned rather than lost.
    """
    holder: dict[str, Any] = {}

    async def main() -> T:
        holder["value"] = await make()
        return holder["value"]

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is None:
        try:
            return asyncio.run(main())
        except KeyboardInterrupt:
            if "value" in holder:
                return holder["value"]
            raise
    import nest_asyncio

    nest_asyncio.apply(loop)
    return loop.run_until_complete(main())
