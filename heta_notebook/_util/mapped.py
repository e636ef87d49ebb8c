"""Memory-mapped ``.npy`` arrays as plain ndarrays.

``np.load(mmap_mode="r")`` returns numpy's ``memmap`` subclass, whose ``__getitem__`` and
``__array_finalize__`` run Python code on every slice (~2-4 us each). A KB query slices its
index arrays a few times per query term, so a cached KB spent ~9% of a run's query time there
(notebook 04, py-spy). A plain ndarray view of the same mapping reads the same pages (the
memmap stays alive as its ``base``) without that cost.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def load_mapped(path: Path) -> np.ndarray:
    """The ``.npy`` file at ``path`` memory-mapped read-only, as a plain ndarray view."""
    return plain(np.load(path, mmap_mode="r", allow_pickle=False))


def plain(array: np.ndarray) -> np.ndarray:
    """``array`` as a base-class ndarray (a view, no copy) when it is a ``np.memmap``."""
    return array.view(np.ndarray) if isinstance(array, np.memmap) else array
