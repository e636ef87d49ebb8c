"""``Recipe``: how the embedded knowledge base is built (chunking + which indexes, with parameters).

A recipe is frozen plain data. ``recipe.manifest()`` is the JSON snapshot that goes into a
report's ``recipe_manifest`` (secrets redacted) and ``recipe.hash`` identifies it, so the
runner's KB cache and the comparison view's recipe diff both read the same thing.

    Recipe(name="bm25-docs", dense=None, hybrid=None)                 # BM25 over whole documents
    Recipe(name="chunks-100", chunking=Chunking(unit="words", size=100, overlap=20))
    Recipe(name="llm", answer=ChatAnswer(model="gpt-4o-mini", api_key_env="OPENAI_API_KEY"))

``answer`` is the answer step run on every query (``kb/answer.py``): ``Extractive()`` by
default (offline, cheap; it reads results and never reorders them, so retrieval metrics are
the same as with ``answer=None``), a ``ChatAnswer``, or None for ranked results only. It is
part of the manifest and hash but not of the KB cache key: answers are per query, not per build.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from heta_notebook._util.redaction import is_redacted, redact
from heta_notebook.kb._answer import AnswerStep, Extractive, as_answer_step
from heta_notebook.schema._records import BenchmarkDocument

FULL_TEXT = "full_text_search"
VECTOR = "vector_search"
HYBRID = "hybrid_search"
# the manifest sections each embedded mode reads (a comparison never leads with another's)
MODE_SETTINGS = {
    FULL_TEXT: ("chunking", "bm25", "answer"),
    VECTOR: ("chunking", "dense", "answer"),
    HYBRID: ("chunking", "bm25", "dense", "hybrid", "answer"),
}


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Chunking(_Config):
    """How documents are split: ``"document"`` (no split), or windows of words / characters."""

    unit: Literal["document", "words", "characters"] = "document"
    size: int | None = Field(default=None, gt=0)
    overlap: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> Chunking:
        if self.unit == "document":
            if self.size is not None or self.overlap:
                raise ValueError('chunking unit "document" takes no size or overlap')
        elif self.size is None:
            raise ValueError(f'chunking unit "{self.unit}" needs a size')
        elif self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


class Bm25(_Config):
    """BM25 through bm25s: ``k1``, ``b``, ``method`` (and ``delta`` for bm25l/bm25+).

    Tokens: lower-cased ``\\w\\w+`` runs, minus ``stopwords`` (a bm25s language code such as
    ``"en"``, a list, or None). ``stemmer`` is a PyStemmer language (e.g. ``"english"``) and
    needs ``pip install PyStemmer``.
    """

    k1: float = Field(default=1.2, gt=0)
    b: float = Field(default=0.75, ge=0, le=1)
    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = "lucene"
    delta: float = Field(default=0.5, ge=0)
    stopwords: str | tuple[str, ...] | None = "en"
    stemmer: str | None = None


class Dense(_Config):
    """The dense index: an embedder plus exact cosine search.

    ``embedder="lsa"`` (default, offline): TF-IDF + truncated SVD fitted on the corpus, ``dims``
    components. ``embedder="sentence_transformers"``: a local ``model`` (name or path; never
    downloaded). ``options`` go to the embedder; secret-looking keys are redacted in manifests.
    """

    embedder: Literal["lsa", "sentence_transformers"] = "lsa"
    dims: int = Field(default=128, gt=0)
    model: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _model_for_st(self) -> Dense:
        if self.embedder == "sentence_transformers" and not self.model:
            raise ValueError('embedder "sentence_transformers" needs model= (a local name or path)')
        return self


class Hybrid(_Config):
    """Reciprocal rank fusion of BM25 and dense: score = Σ 1 / (rrf_k + rank)."""

    rrf_k: int = Field(default=60, gt=0)
    candidates: int = Field(default=100, gt=0)


class Recipe(_Config):
    """A named way to build the embedded KB; by default BM25 + LSA dense + hybrid over whole documents."""

    name: str = Field(min_length=1)
    chunking: Chunking = Field(default_factory=Chunking)
    bm25: Bm25 | None = Field(default_factory=Bm25)
    dense: Dense | None = Field(default_factory=Dense)
    hybrid: Hybrid | None = Field(default_factory=Hybrid)
    answer: AnswerStep | None = Field(default_factory=Extractive)

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_shorthand(cls, value: Any) -> Any:
        return as_answer_step(value)

    @model_validator(mode="after")
    def _hybrid_needs_both(self) -> Recipe:
        if self.bm25 is None and self.dense is None:
            raise ValueError("a recipe needs at least one index (bm25 or dense)")
        if self.hybrid is not None and (self.bm25 is None or self.dense is None):
            missing = "bm25" if self.bm25 is None else "dense"
            raise ValueError(f"hybrid needs both bm25 and dense (set hybrid=None or add {missing})")
        return self

    @property
    def query_modes(self) -> tuple[str, ...]:
        """The query modes a KB built from this recipe answers."""
        modes = [(FULL_TEXT, self.bm25), (VECTOR, self.dense), (HYBRID, self.hybrid)]
        return tuple(mode for mode, index in modes if index is not None)

    def manifest(self) -> dict[str, Any]:
        """JSON snapshot for ``recipe_manifest``: settings, query modes and ``hash`` (secrets redacted)."""
        body = redact(self.model_dump(mode="json"))
        body.update(kind="heta_notebook.embedded", query_modes=list(self.query_modes))
        return {**body, "hash": _digest(body)}

    @classmethod
    def from_manifest(cls, manifest: dict[str, Any]) -> Recipe:
        """Rebuild a recipe from ``manifest()`` output (e.g. a report's ``recipe_manifest``).

        Redacted secrets cannot come back: a manifest holding them is refused.
        """
        settings = {k: v for k, v in manifest.items() if k not in ("kind", "query_modes", "hash")}
        if is_redacted(json.dumps(settings)):
            raise ValueError("this manifest has redacted secrets; pass them again to Recipe(...)")
        return cls.model_validate(settings)

    @property
    def hash(self) -> str:
        """Stable 16-hex-digit hash of the (redacted) manifest."""
        return self.manifest()["hash"]

    def __hash__(self) -> int:
        return hash(self.hash)

    async def build_knowledge_base(
        self,
        documents: Sequence[BenchmarkDocument],
        *,
        knowledge_base_name: str,
        workspace: Path,
        rebuild: bool = False,
    ):
        """Build the KB, or load the copy cached under ``workspace`` for this recipe + corpus."""
        from heta_notebook.kb._cache import build_or_load

        return await build_or_load(
            self,
            documents,
            knowledge_base_name=knowledge_base_name,
            workspace=workspace,
            rebuild=rebuild,
        )

    def build_sync(self, documents: Sequence[BenchmarkDocument], **options: Any):
        """``KnowledgeBase.build_sync(self, documents, ...)`` (no cache)."""
        from heta_notebook.kb._knowledge_base import KnowledgeBase

        return KnowledgeBase.build_sync(self, documents, **options)


def _digest(body: dict[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


__all__ = ["Bm25", "Chunking", "Dense", "Hybrid", "Recipe", "redact"]
