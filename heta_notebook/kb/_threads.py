"""Run numpy/scipy linear algebra on one BLAS thread.

OpenBLAS threads busy-wait; on a loaded machine (CI, a shared notebook server) they fight
other processes and the truncated SVD of the LSA embedder ran ~30x slower (18 s instead of
0.6 s on Cranfield chunks). The KB's matrices are small, so one thread is also the fast
choice. Uses ``threadpoolctl`` when installed; without it this is a no-op.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any


@functools.lru_cache(maxsize=1)
def _controller() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    import numpy  # noqa: F401  (make sure the BLAS libraries are loaded before inspecting)
    import scipy.linalg  # noqa: F401

    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit BLAS to a single thread inside the ``with`` block (when threadpoolctl is installed)."""
    controller = _controller()
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield
