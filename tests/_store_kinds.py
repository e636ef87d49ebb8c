"""The kinds of report store a run checkpoints in, and a real failing disk for them.

Every kind checkpoints through the one format (``cases.arrows`` with ``cases.arrows.sums``):
``local`` (a folder: fd appends, a lock), ``memory`` (an fsspec URL in memory, as a bucket
would be) and ``fsspec-local`` (an fsspec URL over real files, ``local://``). Tests reach
the stored bytes through fsspec itself, never through the store's private helpers.
"""

from __future__ import annotations

import contextlib
import resource
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec

from heta_notebook import ReportStore

STORE_KINDS = ("local", "memory", "fsspec-local")


@contextlib.contextmanager
def store_of_kind(
    kind: str, tmp_path: Path
) -> Iterator[tuple[ReportStore, fsspec.AbstractFileSystem]]:
    """A fresh store of ``kind`` and the file system its files are on (a memory store's
    files are removed after)."""
    if kind == "local":
        yield ReportStore(tmp_path / "store"), fsspec.filesystem("file")
    elif kind == "fsspec-local":
        yield ReportStore(f"local://{tmp_path / 'store'}"), fsspec.filesystem("file")
    elif kind == "memory":
        root = f"/heta-test-{uuid.uuid4().hex[:12]}"
        memory = fsspec.filesystem("memory")
        try:
            yield ReportStore(f"memory://{root}"), memory
        finally:
            if memory.exists(root):
                memory.rm(root, recursive=True)
    else:  # pragma: no cover - a typo in a test
        raise ValueError(kind)


@contextlib.contextmanager
def file_size_limit(size: int) -> Iterator[None]:
    """Writes that would grow any file of this process past ``size`` bytes fail with a real
    ``OSError`` (``EFBIG``, "File too large"): a disk that fills up under the run."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    before = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the error, not the signal
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, before)
