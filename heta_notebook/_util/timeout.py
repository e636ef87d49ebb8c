"""``with_timeout``: await something for at most N seconds, and say what timed out."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def with_timeout(awaitable: Awaitable[T], seconds: float | None, what: str) -> T:
    """Await ``awaitable`` for at most ``seconds`` (None: no bound); raise a TimeoutError
    naming ``what``. A timeout of the awaited code's own ``asyncio.timeout`` is re-raised
    as it is (not ours to rename)."""
    if seconds is None:
        return await awaitable
    if sys.version_info < (3, 11):  # pragma: no cover - Python 3.10
        try:
            return await asyncio.wait_for(awaitable, seconds)
        except asyncio.TimeoutError:
            raise TimeoutError(f"{what} timed out after {seconds:g} s") from None
    bound = asyncio.timeout(seconds)
    try:
        async with bound:
            return await awaitable
    except TimeoutError:
        if not bound.expired():  # the awaited code's own asyncio.timeout: keep it as it is
            raise
        raise TimeoutError(f"{what} timed out after {seconds:g} s") from None
