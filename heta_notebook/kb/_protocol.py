"""What the runner needs from a knowledge base backend: build it, then query it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from heta_notebook.schema._records import BenchmarkDocument, QueryResponse


@runtime_checkable
class KnowledgeBaseProtocol(Protocol):
    """A built, queryable knowledge base (the embedded one, heta-framework's, or a user's)."""

    @property
    def query_modes(self) -> tuple[str, ...]:
        """Modes this KB answers, e.g. ``("full_text_search", "vector_search")``."""
        ...

    async def query(
        self, text: str, *, mode: str, top_k: int = 10, options: Mapping[str, Any] | None = None
    ) -> QueryResponse:
        """Answer one query in one mode."""
        ...

    def manifest(self) -> dict[str, Any]:
        """JSON-friendly facts about the built KB, for the report's ``knowledge_base_manifest``."""
        ...


@runtime_checkable
class RecipeProtocol(Protocol):
    """How to build a knowledge base from benchmark documents."""

    @property
    def name(self) -> str:
        """A short name for reports and legends."""
        ...

    def manifest(self) -> dict[str, Any]:
        """JSON-friendly snapshot of the recipe (secrets redacted) for ``recipe_manifest``."""
        ...

    async def build_knowledge_base(
        self,
        documents: Sequence[BenchmarkDocument],
        *,
        knowledge_base_name: str,
        workspace: Path,
        rebuild: bool = False,
    ) -> KnowledgeBaseProtocol:
        """Build a KB from ``documents``, or load the one cached under ``workspace``.

        The cache key covers the recipe manifest and the documents, so a changed corpus or
        recipe rebuilds; ``rebuild=True`` always rebuilds.
        """
        ...
