"""Warnings that point at the user's line: the first frame outside this package (and outside
asyncio, nest-asyncio2 and thread plumbing the runs go through), whatever the call depth."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import warnings

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PLUMBING = (
    _PACKAGE + os.sep,
    os.path.dirname(os.path.abspath(asyncio.__file__)) + os.sep,
    os.path.dirname(os.path.abspath(threading.__file__)) + os.sep + "concurrent" + os.sep,
    os.path.abspath(threading.__file__),
)


def _internal(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_PLUMBING) or "nest_asyncio" in os.path.basename(path)


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` called by our caller point at the first
    frame outside the package (the caller's own frame when there is none, e.g. in a thread)."""
    frame = sys._getframe(2)  # the frame calling warnings.warn (our caller)
    level = 2
    while frame is not None and _internal(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level if frame is not None else 2


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the user's line."""
    warnings.warn(message, category, stacklevel=user_stacklevel())


__all__ = ["user_stacklevel", "warn_user"]
