"""What a benchmark is: the protocol (same shape as heta-framework's) and its small records.

A benchmark owns its data and its default scoring policy. It never builds a knowledge base:
the runner asks it to ``prepare`` a workspace, then streams ``documents``, ``cases`` and
``run_units`` and scores with ``evaluators()``. ``load_benchmark`` (the one
loader, ``benchmarks._loader``) collects all of that for notebooks and tests that just want lists.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import Field, field_validator

from heta_notebook._util.loop import run_sync
from heta_notebook._util.paths import temp_folder
from heta_notebook.benchmarks._loader import LoadedBenchmark, load_benchmark
from heta_notebook.schema._records import (
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkManifest,
    OptionalText,
    Record,
    RequiredText,
)

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.evaluators._protocol import BenchmarkEvaluatorProtocol

ResourceKind = Literal["file", "archive", "dataset", "repository", "manual"]


class BenchmarkResource(Record):
    """One external resource a benchmark needs (a file, an archive, a dataset...)."""

    name: RequiredText
    uri: RequiredText
    kind: ResourceKind = "file"
    checksum: OptionalText = None
    size_bytes: int | None = Field(default=None, gt=0)
    required: bool = True
    metadata: dict[str, Any] = Field(default_factory=dict)


class BenchmarkWorkspace(Record):
    """Local folders a benchmark may use while preparing (downloads, caches, outputs)."""

    root_dir: Path
    cache_dir: Path
    output_dir: Path | None = None

    @classmethod
    def temporary(cls) -> BenchmarkWorkspace:
        """A workspace under the system temp folder (for loaders that need no files)."""
        root = temp_folder("benchmarks")
        return cls(root_dir=root, cache_dir=root / "cache")


class PreparedBenchmark(Record):
    """What ``prepare`` returns: the manifest, where the data lives, and loader facts."""

    manifest: BenchmarkManifest
    root_dir: Path
    resources: tuple[BenchmarkResource, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)


class BenchmarkRunUnit(Record):
    """One build-and-query unit; empty ``document_ids``/``case_ids`` mean "all of them"."""

    unit_id: RequiredText
    document_ids: tuple[RequiredText, ...] = ()
    case_ids: tuple[RequiredText, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("document_ids", "case_ids", mode="before")
    @classmethod
    def _ids_as_text(cls, value: Any) -> Any:
        return tuple(str(v) for v in value) if isinstance(value, (list, tuple)) else value

    @property
    def is_corpus_level(self) -> bool:
        """True when the unit uses every document and every case."""
        return not self.document_ids and not self.case_ids


@runtime_checkable
class BenchmarkProtocol(Protocol):
    """A benchmark adapter, shaped like heta-framework's ``BenchmarkProtocol``."""

    @property
    def manifest(self) -> BenchmarkManifest:
        """Stable identity: name, version, split, task type."""
        ...

    def resources(self) -> tuple[BenchmarkResource, ...]:
        """External resources needed to prepare the benchmark."""
        ...

    async def prepare(self, workspace: BenchmarkWorkspace) -> PreparedBenchmark:
        """Check (or fetch) the data; raise early on bad input."""
        ...

    def documents(self, prepared: PreparedBenchmark) -> AsyncIterator[BenchmarkDocument]:
        """The corpus to build a knowledge base from."""
        ...

    def cases(self, prepared: PreparedBenchmark) -> AsyncIterator[BenchmarkCase]:
        """The queries with their expectations."""
        ...

    def run_units(self, prepared: PreparedBenchmark) -> AsyncIterator[BenchmarkRunUnit]:
        """Independent build-and-query units (usually one, corpus-level)."""
        ...

    def evaluators(self) -> tuple[BenchmarkEvaluatorProtocol, ...]:
        """The benchmark's default scoring policy."""
        ...


def load_benchmark_sync(
    benchmark: Any, workspace: BenchmarkWorkspace | None = None
) -> LoadedBenchmark:
    """``load_benchmark`` for sync code; safe inside a notebook cell (runs in a helper thread)."""
    return run_sync(lambda: load_benchmark(benchmark, workspace))


__all__ = [
    "BenchmarkProtocol",
    "BenchmarkResource",
    "BenchmarkRunUnit",
    "BenchmarkWorkspace",
    "LoadedBenchmark",
    "PreparedBenchmark",
    "load_benchmark",
    "load_benchmark_sync",
]
