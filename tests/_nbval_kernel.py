"""A kernel that dies while nbval starts it is started again (twice at most), and a third death
says why: the kernel's stderr goes to a file instead of nbval's ``os.devnull``. Each kernel
runs headless (``HETA_NOTEBOOK_HEADLESS=1``, as ``run-notebook``'s): explorers build their whole
payload in their cell, so the recorded run holds it (``display._widgets.headless``).

CI stop 44 lost a whole notebook to "Kernel died before replying to kernel_info" with no
trace of the cause; a fresh start (new ports, new process) is what Jupyter's own servers do."""

from __future__ import annotations

import os
import tempfile
from typing import Any

import nbval.kernel as nbval_kernel

ATTEMPTS = 3
_start_new_kernel = nbval_kernel.start_new_kernel


def start_new_kernel(startup_timeout: float = 60, kernel_name: str = "python", **kwargs: Any):
    """nbval's start, tried up to ``ATTEMPTS`` times; the last failure carries the stderr."""
    for attempt in range(1, ATTEMPTS + 1):
        stderr = tempfile.TemporaryFile(mode="w+", prefix="heta-kernel-stderr-")  # noqa: SIM115
        try:
            return _start_new_kernel(
                startup_timeout=startup_timeout,
                kernel_name=kernel_name,
                **{**kwargs, "stderr": stderr, "env": _headless(kwargs.get("env"))},
            )
        except RuntimeError as error:
            stderr.seek(0)
            said = stderr.read()[-4000:].strip() or "(nothing on stderr)"
            stderr.close()
            if attempt == ATTEMPTS:
                raise RuntimeError(
                    f"kernel {kernel_name!r} failed to start {ATTEMPTS} times ({error}); "
                    f"its stderr the last time:\n{said}"
                ) from error
    raise AssertionError("unreachable")


def _headless(env: dict[str, str] | None) -> dict[str, str]:
    from heta_notebook.display._widgets import HEADLESS

    return {**(os.environ if env is None else env), HEADLESS: "1"}


def retry_kernel_starts() -> None:
    """Install the retrying start for every nbval notebook in this pytest process."""
    nbval_kernel.start_new_kernel = start_new_kernel
