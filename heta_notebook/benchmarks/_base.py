"""Shared machinery of the built-in loaders: read once, validate early, stream from memory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from heta_notebook.benchmarks._protocol import (
    BenchmarkResource,
    BenchmarkRunUnit,
    BenchmarkWorkspace,
    LoadedBenchmark,
    PreparedBenchmark,
    load_benchmark_sync,
)
from heta_notebook.schema._records import BenchmarkCase, BenchmarkDocument, BenchmarkManifest

Parsed = tuple[list[BenchmarkDocument], list[BenchmarkCase], dict[str, Any]]


def default_answer_evaluators() -> tuple[Any, ...]:
    """heta-framework's JSONL default: evidence recall@5 and answer-contains."""
    from heta_notebook.evaluators._answer import AnswerContains
    from heta_notebook.evaluators._retrieval import EvidenceRecallAtK

    return (EvidenceRecallAtK(k=5), AnswerContains())


class InMemoryBenchmark:
    """Base of the built-in benchmarks: ``_parse()`` reads everything once, in ``prepare``.

    Parsing in ``prepare`` means bad input fails before a knowledge base is built.
    """

    def __init__(
        self,
        manifest: BenchmarkManifest,
        *,
        evaluators: Sequence[Any] | None,
        default_evaluators: Callable[[], tuple[Any, ...]],
        root_dir: Path | None = None,
    ):
        self._manifest = manifest
        self._evaluators = tuple(evaluators) if evaluators is not None else None
        self._default_evaluators = default_evaluators
        self._root_dir = root_dir
        self._parsed: Parsed | None = None

    @property
    def manifest(self) -> BenchmarkManifest:
        """Stable identity: name, version, split, task type."""
        return self._manifest

    def resources(self) -> tuple[BenchmarkResource, ...]:
        """Local loaders need no external resources."""
        return ()

    def _parse(self) -> Parsed:  # pragma: no cover - implemented by subclasses
        raise NotImplementedError

    def _loaded(self) -> Parsed:
        if self._parsed is None:
            self._parsed = self._parse()
        return self._parsed

    async def prepare(self, workspace: BenchmarkWorkspace) -> PreparedBenchmark:
        """Read and validate all input (raises ``BenchmarkFormatError`` on bad input)."""
        documents, cases, facts = self._loaded()
        return PreparedBenchmark(
            manifest=self._manifest,
            root_dir=self._root_dir or workspace.cache_dir,
            metadata={"documents": len(documents), "cases": len(cases), **facts},
        )

    async def documents(self, prepared: PreparedBenchmark) -> AsyncIterator[BenchmarkDocument]:
        """The corpus, in file order."""
        for document in self._loaded()[0]:
            yield document

    async def cases(self, prepared: PreparedBenchmark) -> AsyncIterator[BenchmarkCase]:
        """The cases, in file order."""
        for case in self._loaded()[1]:
            yield case

    async def run_units(self, prepared: PreparedBenchmark) -> AsyncIterator[BenchmarkRunUnit]:
        """One corpus-level unit: build one KB from all documents, ask all cases."""
        yield BenchmarkRunUnit(unit_id="corpus")

    def evaluators(self) -> tuple[Any, ...]:
        """The evaluators given at construction, else this benchmark's defaults."""
        if self._evaluators is None:
            self._evaluators = tuple(self._default_evaluators())
        return self._evaluators

    def load(self) -> LoadedBenchmark:
        """``(manifest, documents, cases)`` as lists; handy in a notebook cell."""
        return load_benchmark_sync(self)

    def __repr__(self) -> str:
        state = "not loaded"
        if self._parsed is not None:
            state = f"{len(self._parsed[0])} documents, {len(self._parsed[1])} cases"
        return f"<{type(self).__name__} {self._manifest.key} ({state})>"
