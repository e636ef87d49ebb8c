"""KB persistence (JSON + .npy, no pickle) and the runner's cache: reuse, rebuild, keys."""

from __future__ import annotations

import numpy as np
import pytest

from heta_notebook.kb._cache import cache_key
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._recipe import Chunking, Recipe
from heta_notebook.schema import BenchmarkDocument
from tests._kb_helpers import cranfield

QUERIES = [
    "shock waves on wings",
    "heat transfer in laminar boundary layers",
    "buckling of cylinders",
]


@pytest.fixture(scope="module")
def documents() -> list[BenchmarkDocument]:
    return cranfield().documents[:250]


def answers(kb: KnowledgeBase) -> dict:
    return {mode: kb.query_many(QUERIES, mode=mode, top_k=10) for mode in kb.query_modes}


def test_save_and_load_give_identical_answers(tmp_path, documents):
    recipe = Recipe(name="w50", chunking=Chunking(unit="words", size=50, overlap=10))
    kb = KnowledgeBase.build_sync(recipe, documents, name="kb1", benchmark=cranfield().manifest)
    kb.save(tmp_path / "kb")
    files = {p.suffix for p in (tmp_path / "kb").rglob("*") if p.is_file()}
    assert files <= {".json", ".jsonl", ".npy"}, files
    for array in (tmp_path / "kb").rglob("*.npy"):
        np.load(array, allow_pickle=False)
    loaded = KnowledgeBase.load(tmp_path / "kb")
    assert loaded.name == "kb1" and loaded.recipe == recipe
    assert answers(loaded) == answers(kb)
    assert loaded.manifest() == kb.manifest()


def test_load_errors_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="kb.json missing"):
        KnowledgeBase.load(tmp_path)


async def test_build_knowledge_base_reuses_the_cache(tmp_path, documents):
    recipe = Recipe(name="docs", hybrid=None, dense=None)
    first = await recipe.build_knowledge_base(
        documents, knowledge_base_name="a", workspace=tmp_path
    )
    assert first.manifest()["cache"]["hit"] is False
    second = await recipe.build_knowledge_base(
        documents, knowledge_base_name="b", workspace=tmp_path
    )
    assert second.manifest()["cache"] == {"key": first.manifest()["cache"]["key"], "hit": True}
    assert second.name == "b" and second.manifest()["built_at"] == first.manifest()["built_at"]
    assert [r.results for r in answers(second)["full_text_search"]] == [
        r.results for r in answers(first)["full_text_search"]
    ]
    rebuilt = await recipe.build_knowledge_base(
        documents, knowledge_base_name="a", workspace=tmp_path, rebuild=True
    )
    assert rebuilt.manifest()["cache"]["hit"] is False
    assert len([p for p in tmp_path.iterdir() if not p.name.startswith(".")]) == 1


async def test_changed_corpus_or_settings_miss_the_cache(tmp_path, documents):
    recipe = Recipe(name="docs", hybrid=None, dense=None)
    await recipe.build_knowledge_base(documents, knowledge_base_name="a", workspace=tmp_path)
    edited = [documents[0].model_copy(update={"text": "changed"}), *documents[1:]]
    other = await recipe.build_knowledge_base(edited, knowledge_base_name="a", workspace=tmp_path)
    assert other.manifest()["cache"]["hit"] is False
    assert cache_key(recipe, edited) != cache_key(recipe, documents)
    # renaming a recipe keeps its key; changing a parameter does not
    renamed = recipe.model_copy(update={"name": "renamed"})
    assert cache_key(renamed, documents) == cache_key(recipe, documents)
    tuned = Recipe(name="docs", hybrid=None, dense=None, bm25={"k1": 0.9})
    assert cache_key(tuned, documents) != cache_key(recipe, documents)


async def test_a_corrupt_cache_entry_is_rebuilt_with_a_warning(tmp_path, documents):
    recipe = Recipe(name="docs", hybrid=None, dense=None)
    kb = await recipe.build_knowledge_base(documents, knowledge_base_name="a", workspace=tmp_path)
    folder = tmp_path / kb.manifest()["cache"]["key"]
    (folder / "kb.json").write_text("{not json", encoding="utf-8")
    with pytest.warns(UserWarning, match="rebuilding unreadable cached KB"):
        again = await recipe.build_knowledge_base(
            documents, knowledge_base_name="a", workspace=tmp_path
        )
    assert again.manifest()["cache"]["hit"] is False
    assert KnowledgeBase.load(folder).manifest()["documents"] == len(documents)
