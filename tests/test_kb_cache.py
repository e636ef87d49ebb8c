"""KB persistence (JSON + .npy, no pickle) and the runner's cache: reuse, rebuild, keys."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

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


def _flip_one_bit(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def _flip_a_digit(path: Path) -> None:
    """Change one digit inside kb.json's documents list: the file still parses."""
    text = path.read_text("utf-8")
    at = next(i for i in range(text.index('"documents"'), len(text)) if text[i].isdigit())
    path.write_text(text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1 :], "utf-8")
    json.loads(path.read_text("utf-8"))  # still JSON: only its sums can tell


def test_a_flipped_byte_in_any_kb_file_is_named_on_load(tmp_path, documents):
    """Every array a KB maps (chunks, BM25 scores, embeddings) and kb.json carry sums: a
    flip that still parses (an array's last data byte, a digit of a document id) would
    change retrieval silently; it is a ValueError naming the file instead."""
    recipe = Recipe(name="w50", chunking=Chunking(unit="words", size=50, overlap=10))
    kb = KnowledgeBase.build_sync(recipe, documents, name="kb1")
    clean, folder = tmp_path / "clean", tmp_path / "kb"
    kb.save(clean)
    files = sorted(p.relative_to(clean) for p in clean.rglob("*") if p.is_file())
    parts = {f.parts[0] for f in files}
    assert {"kb.json", "chunks", "bm25", "dense"} <= parts
    for name in files:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(clean, folder)
        if name.name == "kb.json":
            _flip_a_digit(folder / name)
        else:
            _flip_one_bit(folder / name, (folder / name).stat().st_size - 1)
        if name.suffix == ".npy":
            np.load(folder / name, allow_pickle=False)  # still a valid array
        with pytest.raises(ValueError, match=re.escape(str(folder / name))):
            KnowledgeBase.load(folder)
    assert answers(KnowledgeBase.load(clean)) == answers(kb)  # the clean copy still loads


async def test_a_cache_entry_failing_its_sums_is_rebuilt_with_a_warning(tmp_path, documents):
    recipe = Recipe(name="docs", hybrid=None, dense=None)
    kb = await recipe.build_knowledge_base(documents, knowledge_base_name="a", workspace=tmp_path)
    folder = tmp_path / kb.manifest()["cache"]["key"]
    scores = next((folder / "bm25").glob("*data*.npy"))
    _flip_one_bit(scores, scores.stat().st_size - 1)  # one BM25 score changed
    with pytest.warns(UserWarning, match=rf"rebuilding unreadable cached KB.*{scores.name}"):
        again = await recipe.build_knowledge_base(
            documents, knowledge_base_name="a", workspace=tmp_path
        )
    assert again.manifest()["cache"]["hit"] is False
    assert answers(KnowledgeBase.load(folder)) == answers(kb)  # rebuilt, sums hold again


def test_a_kb_saved_before_sums_still_loads(tmp_path, documents):
    """kb.json without "files" and "_sha256" (written before this version): read unchecked,
    never rebuilt for that alone."""
    recipe = Recipe(name="docs", hybrid=None, dense=None)
    kb = KnowledgeBase.build_sync(recipe, documents, name="kb1")
    kb.save(tmp_path / "kb")
    header = json.loads((tmp_path / "kb" / "kb.json").read_text("utf-8"))
    assert set(header["files"]) and header.pop("_sha256") and header.pop("files")
    (tmp_path / "kb" / "kb.json").write_text(json.dumps(header), "utf-8")
    assert answers(KnowledgeBase.load(tmp_path / "kb")) == answers(kb)
