"""A heta-framework ``KnowledgeRecipe`` as our ``RecipeProtocol``, built the way its runner does.

Building follows heta-framework's ``BenchmarkRunner``: each benchmark document is written to
the recipe's ObjectStore under ``raw/benchmarks/{benchmark}/{split}/{document_id}/{name}``,
then ``KnowledgeBase.create(recipe=..., name=..., initial_artifacts=...)`` runs the recipe's
steps, and queries go to ``kb.query(...)``. Two differences, both so that a re-run works:

- a KB of the same name that an earlier run of ours left in the ObjectStore is deleted and
  rebuilt (heta's ``KnowledgeBase.create`` refuses to overwrite one, and in-memory indexes of
  an earlier process are gone anyway); a KB of that name built by anything else is only
  replaced with ``rebuild=True``. Raw documents the benchmark no longer has are removed from
  its ``raw/benchmarks/{benchmark}/{split}/`` prefix;
- within one process a KB built from the same recipe object and corpus is reused unless
  ``rebuild=True`` (this is what makes our runner's resume cheap).
"""

from __future__ import annotations

import dataclasses
import hashlib
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from heta_notebook._util.jsondata import json_copy
from heta_notebook._util.paths import safe_name
from heta_notebook._util.redaction import REDACTED, redact  # noqa: F401 - REDACTED re-exported
from heta_notebook.integrations.heta._benchmarks import RAW_KEY_METADATA
from heta_notebook.integrations.heta._common import is_heta_object, require_heta
from heta_notebook.integrations.heta._records import response_from_heta
from heta_notebook.schema._records import BenchmarkDocument, BenchmarkManifest, QueryResponse

BUILT_BY = "heta_notebook"  # KnowledgeBase.metadata marker: ours to replace on a re-run


def redact_secrets(value: Any) -> Any:
    """A JSON-safe copy of ``value`` with the values of secret-looking keys replaced.

    The package's one policy (:mod:`heta_notebook._util.redaction`): ``api_key``, ``x-api-key``,
    ``password``, ``token``, ``access_token``... are redacted, ``max_tokens`` is not, and URL
    credentials in text values are hidden too.
    """
    return redact(json_copy(value))


class HetaKnowledgeBaseAdapter:
    """A built heta-framework ``KnowledgeBase`` answering with our ``QueryResponse``."""

    def __init__(self, knowledge_base: Any) -> None:
        self.knowledge_base = knowledge_base

    @property
    def query_modes(self) -> tuple[str, ...]:
        """Query modes the built KB supports (heta's ``available_queries``)."""
        return tuple(sorted(self.knowledge_base.available_queries))

    async def query(
        self, text: str, *, mode: str, top_k: int = 10, options: Mapping[str, Any] | None = None
    ) -> QueryResponse:
        """Run ``kb.query``; ``options["filters"]``/``options["trace"]`` go to its arguments."""
        if mode not in self.query_modes:
            raise LookupError(
                f"query mode {mode!r} is not available in heta-framework knowledge base "
                f"{self.knowledge_base.name!r}; its modes: {', '.join(self.query_modes) or 'none'}"
            )
        opts = dict(options or {})
        filters = opts.pop("filters", None)
        trace = bool(opts.pop("trace", False))
        response = await self.knowledge_base.query(
            text, mode=mode, top_k=top_k, filters=filters, options=opts, trace=trace
        )
        return response_from_heta(response)

    def manifest(self) -> dict[str, Any]:
        """heta-framework's KB manifest (``kb.manifest().to_dict()``), secrets redacted."""
        return redact_secrets(self.knowledge_base.manifest().to_dict())

    def __repr__(self) -> str:
        return f"HetaKnowledgeBaseAdapter({self.knowledge_base.name!r}, modes={self.query_modes})"


class HetaRecipeAdapter:
    """A heta-framework ``KnowledgeRecipe`` satisfying our ``RecipeProtocol``.

    ``benchmark`` (our or heta's manifest) names the ``raw/benchmarks/{name}/{split}/``
    prefix documents are written under; the runner may also pass it to
    ``build_knowledge_base``. Without it the knowledge base name and split ``corpus`` are used.
    ``query_engines`` (a heta ``QueryEngineRegistry``) replaces the default engines, like the
    ``query_engines`` argument of heta-framework's ``BenchmarkRunner.run``.
    """

    def __init__(
        self,
        recipe: Any,
        *,
        name: str | None = None,
        benchmark: Any = None,
        query_engines: Any = None,
    ) -> None:
        self.recipe = recipe
        self._name = name
        self.benchmark = benchmark
        self.query_engines = query_engines

    @property
    def name(self) -> str:
        """``name`` given, else the recipe's ``metadata["name"]``, else ``heta:`` + step names."""
        if self._name:
            return self._name
        name = dict(self.recipe.metadata).get("name")
        steps = "+".join(step.name for step in self.recipe.expanded_steps())
        return str(name) if name else f"heta:{steps or 'empty'}"

    def manifest(self) -> dict[str, Any]:
        """``recipe.manifest().to_dict()`` with secrets redacted, plus our name and backend."""
        data = redact_secrets(self.recipe.manifest().to_dict())
        return {"name": self.name, "backend": "heta-framework", **data}

    async def build_knowledge_base(
        self,
        documents: Sequence[BenchmarkDocument],
        *,
        knowledge_base_name: str,
        workspace: Path | None = None,
        rebuild: bool = False,
        benchmark: Any = None,
    ) -> HetaKnowledgeBaseAdapter:
        """Write documents under ``raw/benchmarks/...``, build with ``KnowledgeBase.create``.

        ``workspace`` is not used: the recipe's own stores hold the KB. A KB built in this
        process from the same recipe and corpus is returned again unless ``rebuild=True``.
        """
        require_heta("a heta-framework recipe")
        from heta_framework.kb import KnowledgeBase

        manifest = _raw_manifest(benchmark or self.benchmark, knowledge_base_name)
        corpus = _corpus_digest(documents, manifest)
        built = _built_for(self.recipe)
        cached = built.get((knowledge_base_name, corpus, id(self.query_engines)))
        if cached is not None and not rebuild:
            return cached
        store = _object_store(self.recipe)
        await _delete_existing(self.recipe, knowledge_base_name, replace_foreign=rebuild)
        keys = await _write_documents(store, documents, manifest)
        artifacts = {"benchmark_document_keys": keys, "source_keys": keys}
        kb = await KnowledgeBase.create(
            recipe=self.recipe,
            name=knowledge_base_name,
            initial_artifacts=artifacts,
            metadata={"built_by": BUILT_BY, "corpus_sha256": corpus},
        )
        if self.query_engines is not None:  # as heta-framework's runner does
            kb = dataclasses.replace(kb, query_engines=self.query_engines)
        adapter = HetaKnowledgeBaseAdapter(kb)
        built[(knowledge_base_name, corpus, id(self.query_engines))] = adapter
        return adapter

    def __repr__(self) -> str:
        return f"HetaRecipeAdapter({self.name!r})"


def adapt_recipe(
    obj: Any, *, name: str | None = None, benchmark: Any = None, query_engines: Any = None
) -> HetaRecipeAdapter | HetaKnowledgeBaseAdapter:
    """Wrap a heta-framework ``KnowledgeRecipe`` so our runner can build and query it.

    An already built heta ``KnowledgeBase`` is wrapped as a queryable KB instead (the runner
    then queries it as it is, without building).
    """
    require_heta("adapt_recipe")
    from heta_framework.kb import KnowledgeBase, KnowledgeRecipe

    if isinstance(obj, (HetaRecipeAdapter, HetaKnowledgeBaseAdapter)):
        return obj
    if isinstance(obj, KnowledgeBase):
        return HetaKnowledgeBaseAdapter(obj)
    if not isinstance(obj, KnowledgeRecipe):
        kind = "a heta-framework object" if is_heta_object(obj) else "an object"
        raise TypeError(f"adapt_recipe needs a heta_framework KnowledgeRecipe, got {kind}: {obj!r}")
    return HetaRecipeAdapter(obj, name=name, benchmark=benchmark, query_engines=query_engines)


# --------------------------------------------------------------------------- building blocks

# KBs built in this process, per recipe object (recipes are unhashable dataclasses: keyed by
# id, with a weak reference so a recycled id is never mistaken for the old recipe).
_Built = dict[tuple[str, str, int], HetaKnowledgeBaseAdapter]
_BUILT: dict[int, tuple[weakref.ref, _Built]] = {}


def _built_for(recipe: Any) -> _Built:
    entry = _BUILT.get(id(recipe))
    if entry is None or entry[0]() is not recipe:
        key = id(recipe)

        def forget(ref: weakref.ref) -> None:
            # at interpreter exit the module's globals may already be cleared to None
            if _BUILT is not None and _BUILT.get(key, (None,))[0] is ref:
                del _BUILT[key]

        entry = (weakref.ref(recipe, forget), {})
        _BUILT[key] = entry
    return entry[1]


def _raw_manifest(benchmark: Any, knowledge_base_name: str) -> BenchmarkManifest:
    if benchmark is None:
        return BenchmarkManifest(name=safe_name(knowledge_base_name), split="corpus")
    if isinstance(benchmark, BenchmarkManifest):
        return benchmark
    manifest = getattr(benchmark, "manifest", benchmark)  # a benchmark or its manifest
    if isinstance(manifest, BenchmarkManifest):
        return manifest
    return BenchmarkManifest(name=manifest.name, split=manifest.split)


def _document_bytes(document: BenchmarkDocument) -> bytes:
    if document.text is not None:
        return document.text.encode("utf-8")
    if document.data is not None:
        return document.data
    if document.path is not None:
        return Path(document.path).read_bytes()
    raise NotImplementedError(
        f"document {document.document_id!r} is only a source_uri ({document.source_uri}); "
        "heta-framework's runner cannot fetch those either: prepare it as text, data or path"
    )


def _corpus_digest(documents: Sequence[BenchmarkDocument], manifest: BenchmarkManifest) -> str:
    digest = hashlib.sha256(f"{manifest.name}\0{manifest.split}".encode())
    for document in documents:
        digest.update(raw_key(document, manifest).encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(_document_bytes(document)).digest())
    return digest.hexdigest()


def _object_store(recipe: Any) -> Any:
    from heta_framework.common.stores.object import ObjectStoreProtocol

    store = recipe.stores.objects
    if not isinstance(store, ObjectStoreProtocol):
        raise TypeError(
            "recipe.stores.objects must be a heta-framework ObjectStore (e.g. LocalObjectStore): "
            "benchmark documents are written there, as heta-framework's runner does"
        )
    return store


def raw_key(document: BenchmarkDocument, manifest: BenchmarkManifest) -> str:
    """The ObjectStore key of ``document``: the one a heta benchmark gave it, else ours."""
    given = document.metadata.get(RAW_KEY_METADATA)
    suffix = f"/{document.document_id}/{document.name}"
    if isinstance(given, str) and given.startswith("raw/") and given.endswith(suffix):
        return given
    return document.raw_key(manifest)


async def _write_documents(
    store: Any, documents: Sequence[BenchmarkDocument], manifest: BenchmarkManifest
) -> list[str]:
    if not documents:
        raise ValueError("benchmark produced no documents")
    keys = []
    for document in documents:
        key = raw_key(document, manifest)
        await store.put(key, _document_bytes(document))
        keys.append(key)
    wanted = set(keys)
    prefixes = {key.rsplit("/", 2)[0] for key in keys}  # raw/benchmarks/{benchmark}/{split}
    for prefix in sorted(p for p in prefixes if p.startswith("raw/benchmarks/")):
        for item in await store.list(prefix):
            if item.key not in wanted:  # a document the benchmark no longer has
                await store.delete(item.key)
    return keys


async def _delete_existing(recipe: Any, name: str, *, replace_foreign: bool) -> None:
    from heta_framework.kb import (
        KnowledgeBase,
        KnowledgeBaseNotFoundError,
        KnowledgeBaseNotReadyError,
    )

    try:
        existing = await KnowledgeBase.load(recipe=recipe, name=name)
    except (KnowledgeBaseNotFoundError, KnowledgeBaseNotReadyError):
        return  # nothing built, or an unfinished build that create() resumes
    if existing.metadata.get("built_by") != BUILT_BY and not replace_foreign:
        raise FileExistsError(
            f"a heta-framework knowledge base named {name!r} already exists in the recipe's "
            "ObjectStore and was not built by heta_notebook; choose another "
            "knowledge_base_name, or pass rebuild=True to delete and rebuild it"
        )
    await existing.delete()


__all__ = [
    "HetaKnowledgeBaseAdapter",
    "HetaRecipeAdapter",
    "adapt_recipe",
    "redact_secrets",
]
