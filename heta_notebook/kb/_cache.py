"""The runner's KB cache: one folder per (recipe settings, corpus) under a workspace.

The key is the hash of the recipe manifest *without its name* (renaming a recipe reuses its
KB) plus the KB file format, and ``corpus_hash`` of the documents. A finished KB is written to
a temporary folder and renamed into place, so a crash never leaves a half-written cache entry.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import uuid
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from heta_notebook._util.paths import safe_join, safe_name
from heta_notebook._util.warn import user_stacklevel
from heta_notebook.kb._corpus import corpus_hash
from heta_notebook.kb._storage import KB_FORMAT
from heta_notebook.schema._records import BenchmarkDocument

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.kb._knowledge_base import KnowledgeBase
    from heta_notebook.kb._recipe import Recipe


def cache_key(recipe: Recipe, documents: Sequence[BenchmarkDocument]) -> str:
    """``{settings hash}-{corpus hash}`` naming the cache folder."""
    # The answer step runs per query, not per build: changing it reuses the KB.
    skip = ("name", "hash", "answer")
    settings = {k: v for k, v in recipe.manifest().items() if k not in skip}
    settings["kb_format"] = KB_FORMAT
    canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return f"{hashlib.sha256(canonical.encode()).hexdigest()[:16]}-{corpus_hash(documents)}"


async def build_or_load(
    recipe: Recipe,
    documents: Sequence[BenchmarkDocument],
    *,
    knowledge_base_name: str,
    workspace: Path,
    rebuild: bool = False,
) -> KnowledgeBase:
    """Load the cached KB for ``recipe`` + ``documents`` from ``workspace``, or build and cache it."""
    from heta_notebook.kb._knowledge_base import KnowledgeBase

    documents = list(documents)
    key = await asyncio.to_thread(cache_key, recipe, documents)
    folder = safe_join(workspace, safe_name(key, what="cache key"))
    if not rebuild and (folder / "kb.json").is_file():
        try:
            kb = KnowledgeBase.load(folder, name=knowledge_base_name)
        except (OSError, ValueError, KeyError) as exc:
            warnings.warn(
                f"rebuilding unreadable cached KB at {folder}: {exc}", stacklevel=user_stacklevel()
            )
        else:
            kb.recipe = recipe
            kb.facts.update(cache={"key": key, "hit": True})
            return kb
    kb = await KnowledgeBase.build(recipe, documents, name=knowledge_base_name)
    await asyncio.to_thread(_store, kb, folder)
    kb.facts.update(cache={"key": key, "hit": False})
    return kb


def _store(kb: KnowledgeBase, folder: Path) -> None:
    staging = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:8]}.tmp")
    kb.save(staging)
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
    try:
        staging.rename(folder)
    except OSError:  # another process stored the same KB first: keep theirs
        shutil.rmtree(staging, ignore_errors=True)


__all__ = ["build_or_load", "cache_key"]
