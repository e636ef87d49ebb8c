"""A small local Ray cluster for tests and benchmarks, always shut down."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def local_ray(num_cpus: int = 2, object_store_mb: int = 200) -> Iterator[Any]:
    """``ray.init`` with ``num_cpus`` worker CPUs, no dashboard, a small object store.

    Ray's processes inherit this process's environment: ``PYTHONPATH`` gets the repository
    (workers import ``heta_notebook`` and ``tests`` from it) and ``tests/_hidden_modules``
    (see its module). Start-up is tried up to three times: Ray 2.60's raylet gives its Python agents
    15 s (hard-coded) to start, which a loaded 2-core machine sometimes misses.
    """
    import ray

    before = os.environ.get("PYTHONPATH")
    paths = [str(ROOT / "tests" / "_hidden_modules"), str(ROOT), *filter(None, [before])]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    try:
        _init(ray, num_cpus=num_cpus, object_store_memory=object_store_mb * 1024**2)
        try:
            yield ray
        finally:
            ray.shutdown()
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


def _init(ray: Any, attempts: int = 3, **options: Any) -> None:
    """``ray.init``, tried again when the raylet gave up on its agents (a loaded machine)."""
    for attempt in range(1, attempts + 1):
        try:
            ray.init(include_dashboard=False, log_to_driver=False, **options)
            return
        except Exception as exc:  # Ray raises a bare Exception for "timed out during startup"
            ray.shutdown()  # the processes this attempt started
            if attempt == attempts or "timed out during startup" not in str(exc):
                raise
