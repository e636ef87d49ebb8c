"""A heta-framework benchmark (``JsonlBenchmark``, ``BeirBenchmark``, ...) as our benchmark.

Documents, cases and run units are converted record by record; the benchmark's default
evaluators are wrapped so they score our records. Each document remembers the ObjectStore key
heta-framework's runner would write it to (``metadata["heta_raw_key"]``), so a heta recipe run
by our runner sees exactly the keys (and evidence locators such as ``source_key_prefix``)
it would see under heta-framework's own runner.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from heta_notebook.integrations.heta._common import is_heta_object, require_heta
from heta_notebook.integrations.heta._evaluators import HetaEvaluatorAdapter, adapt_evaluator
from heta_notebook.integrations.heta._records import (
    case_from_heta,
    document_from_heta,
    manifest_from_heta,
)
from heta_notebook.schema._records import BenchmarkCase, BenchmarkDocument, BenchmarkManifest

RAW_KEY_METADATA = "heta_raw_key"


class HetaBenchmarkAdapter:
    """Wraps a heta-framework ``BenchmarkProtocol`` object; yields our records."""

    def __init__(self, benchmark: Any) -> None:
        self.benchmark = benchmark

    @property
    def manifest(self) -> BenchmarkManifest:
        """The benchmark's manifest as our record."""
        return manifest_from_heta(self.benchmark.manifest)

    def resources(self) -> tuple[Any, ...]:
        """Our ``BenchmarkResource`` records for the benchmark's external resources."""
        from heta_notebook.benchmarks._protocol import BenchmarkResource

        return tuple(BenchmarkResource.from_dict(r.to_dict()) for r in self.benchmark.resources())

    async def prepare(self, workspace: Any) -> Any:
        """Prepare in a workspace given as a folder, our ``BenchmarkWorkspace`` or heta's."""
        return await self.benchmark.prepare(heta_workspace(workspace))

    async def documents(self, prepared: Any) -> AsyncIterator[BenchmarkDocument]:
        """The corpus as our documents, each with its heta ObjectStore key in metadata."""
        heta_manifest = self.benchmark.manifest
        async for document in self.benchmark.documents(prepared):
            ours = document_from_heta(document)
            metadata = {**ours.metadata, RAW_KEY_METADATA: document.raw_key(heta_manifest)}
            yield ours.model_copy(update={"metadata": metadata})

    async def cases(self, prepared: Any) -> AsyncIterator[BenchmarkCase]:
        """The queries as our cases."""
        async for case in self.benchmark.cases(prepared):
            yield case_from_heta(case)

    async def run_units(self, prepared: Any) -> AsyncIterator[Any]:
        """The run units as our ``BenchmarkRunUnit`` records."""
        from heta_notebook.benchmarks._protocol import BenchmarkRunUnit

        async for unit in self.benchmark.run_units(prepared):
            yield BenchmarkRunUnit.from_dict(unit.to_dict())

    def evaluators(self) -> tuple[HetaEvaluatorAdapter, ...]:
        """The benchmark's default heta evaluators, wrapped to score our records."""
        return tuple(adapt_evaluator(ev) for ev in self.benchmark.evaluators())

    def __repr__(self) -> str:
        return f"HetaBenchmarkAdapter({self.benchmark!r})"


def adapt_benchmark(obj: Any) -> HetaBenchmarkAdapter:
    """Wrap a heta-framework benchmark so our runner can read it."""
    require_heta("adapt_benchmark")
    if isinstance(obj, HetaBenchmarkAdapter):
        return obj
    missing = [n for n in ("manifest", "prepare", "documents", "cases") if not hasattr(obj, n)]
    if missing or not is_heta_object(obj):
        raise TypeError(
            f"adapt_benchmark needs a heta-framework benchmark, got {obj!r} "
            f"(missing: {', '.join(missing) or 'none'})"
        )
    return HetaBenchmarkAdapter(obj)


def heta_workspace(workspace: Any) -> Any:
    """heta-framework's ``BenchmarkWorkspace`` from a folder or a workspace-like object."""
    heta = require_heta("preparing a heta-framework benchmark")
    if isinstance(workspace, heta.BenchmarkWorkspace):
        return workspace
    if isinstance(workspace, (str, os.PathLike)):
        root = Path(workspace)
        result = heta.BenchmarkWorkspace(root_dir=root, cache_dir=root / "cache")
    else:
        result = heta.BenchmarkWorkspace(
            root_dir=workspace.root_dir,
            cache_dir=workspace.cache_dir,
            output_dir=getattr(workspace, "output_dir", None),
        )
    result.cache_dir.mkdir(parents=True, exist_ok=True)
    return result


__all__ = ["RAW_KEY_METADATA", "HetaBenchmarkAdapter", "adapt_benchmark", "heta_workspace"]
