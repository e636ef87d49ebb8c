"""The one benchmark loader: a benchmark prepared and read into plain lists, ids checked.

heta-framework benchmarks are adapted here (``integrations.heta``, imported only when such
an object is seen). The runner, ``load_benchmark`` and notebooks all read benchmarks here.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_notebook._util.paths import temp_folder
from heta_notebook.schema._records import BenchmarkCase, BenchmarkDocument, BenchmarkManifest

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.benchmarks._protocol import BenchmarkWorkspace


@dataclass(frozen=True)
class RunUnit:
    """One KB build: the documents it holds and the cases asked of it (empty = all)."""

    unit_id: str
    document_ids: tuple[str, ...] = ()
    case_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class LoadedBenchmark:
    """A benchmark read into memory (lists, as read); unpacks as ``manifest, documents, cases``."""

    manifest: BenchmarkManifest
    documents: Sequence[BenchmarkDocument]
    cases: Sequence[BenchmarkCase]
    units: tuple[RunUnit, ...] = (RunUnit("corpus"),)
    evaluators: tuple[Any, ...] = ()

    def __iter__(self) -> Iterator[Any]:
        return iter((self.manifest, self.documents, self.cases))

    def unit_inputs(
        self, unit: RunUnit
    ) -> tuple[tuple[BenchmarkDocument, ...], tuple[BenchmarkCase, ...]]:
        """The documents and cases of one run unit."""
        docs = _select(self.documents, unit.document_ids, "document_id", unit.unit_id)
        cases = _select(self.cases, unit.case_ids, "case_id", unit.unit_id)
        return docs, cases


def adapt_heta(obj: Any, kind: str) -> Any:
    """``obj`` itself, or our adapter of it when it is a heta-framework object (the
    integration is imported only then: a declared lazy door, see docs/architecture.md)."""
    from heta_notebook.integrations.heta._common import is_heta_object  # no heta import

    if not is_heta_object(obj):
        return obj
    from heta_notebook.integrations import heta

    return getattr(heta, f"adapt_{kind}")(obj)


async def load_benchmark(
    benchmark: Any, workspace: BenchmarkWorkspace | str | os.PathLike[str] | None = None
) -> LoadedBenchmark:
    """Prepare ``benchmark`` and read its documents, cases and run units (ids checked unique).

    heta-framework benchmarks are adapted first; ``workspace`` defaults to the temp folder.
    """
    benchmark = adapt_heta(benchmark, "benchmark")
    prepared = None
    if hasattr(benchmark, "prepare"):
        prepared = await _maybe_await(benchmark.prepare(_benchmark_workspace(workspace)))
    documents = await _collect(benchmark.documents(prepared))
    cases = await _collect(benchmark.cases(prepared))
    units: tuple[Any, ...] = ()
    if hasattr(benchmark, "run_units"):
        units = tuple(_unit(u) for u in await _collect(benchmark.run_units(prepared)))
    _require_unique([d.document_id for d in documents], "document_id")
    _require_unique([c.case_id for c in cases], "case_id")
    if not cases:
        raise ValueError(f"the benchmark {manifest_of(benchmark).key!r} produced no cases")
    return LoadedBenchmark(
        manifest=manifest_of(benchmark),
        documents=documents,
        cases=cases,
        units=units or (RunUnit("corpus"),),
        evaluators=tuple(benchmark.evaluators()) if hasattr(benchmark, "evaluators") else (),
    )


def manifest_of(benchmark: Any) -> BenchmarkManifest:
    """The benchmark's manifest as our record (property, method, dict or foreign record)."""
    manifest = benchmark.manifest
    if callable(manifest) and not isinstance(manifest, BenchmarkManifest):
        manifest = manifest()
    if isinstance(manifest, BenchmarkManifest):
        return manifest
    data = manifest.to_dict() if hasattr(manifest, "to_dict") else dict(manifest)
    return BenchmarkManifest.from_dict(data)


def _benchmark_workspace(workspace: Any) -> Any:
    from heta_notebook.benchmarks._protocol import BenchmarkWorkspace

    if isinstance(workspace, BenchmarkWorkspace):
        return workspace
    root = Path(workspace) if workspace is not None else temp_folder("benchmarks")
    return BenchmarkWorkspace(root_dir=root, cache_dir=root / "cache")


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _collect(source: Any) -> list[Any]:
    source = await _maybe_await(source)
    if hasattr(source, "__aiter__"):
        return [item async for item in source]
    return list(source)


def _unit(unit: Any) -> RunUnit:
    if isinstance(unit, RunUnit):
        return unit
    return RunUnit(
        unit_id=str(getattr(unit, "unit_id", "corpus")),
        document_ids=tuple(getattr(unit, "document_ids", ()) or ()),
        case_ids=tuple(getattr(unit, "case_ids", ()) or ()),
    )


def _select(items: Sequence[Any], ids: Sequence[str], field: str, unit_id: str) -> tuple:
    if not ids:
        return tuple(items)
    by_id = {getattr(item, field): item for item in items}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise ValueError(f"run unit {unit_id!r} references unknown {field}s: {missing[:10]}")
    return tuple(by_id[i] for i in ids)


def _require_unique(values: list[str], field: str) -> None:
    seen: set[str] = set()
    duplicates = sorted({v for v in values if v in seen or seen.add(v)})  # type: ignore[func-returns-value]
    if duplicates:
        raise ValueError(f"the benchmark has duplicate {field} values: {duplicates[:10]}")


__all__ = ["LoadedBenchmark", "RunUnit", "adapt_heta", "load_benchmark", "manifest_of"]
