"""Recipe: validation, query modes, manifest (JSON, hashed, secrets redacted), hashability."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from heta_notebook.kb._protocol import RecipeProtocol
from heta_notebook.kb._recipe import Bm25, Chunking, Dense, Hybrid, Recipe


def test_defaults_build_all_three_modes_over_whole_documents():
    recipe = Recipe(name="docs")
    assert isinstance(recipe, RecipeProtocol)
    assert recipe.query_modes == ("full_text_search", "vector_search", "hybrid_search")
    assert recipe.chunking.unit == "document"
    assert Recipe(name="bm25", dense=None, hybrid=None).query_modes == ("full_text_search",)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"chunking": {"unit": "words"}}, "needs a size"),
        ({"chunking": {"unit": "words", "size": 10, "overlap": 10}}, "smaller than size"),
        ({"chunking": {"unit": "document", "size": 10}}, "takes no size"),
        ({"chunking": {"unit": "sentences", "size": 3}}, "unit"),
        ({"dense": None}, "hybrid needs both"),
        ({"bm25": None, "dense": None, "hybrid": None}, "at least one index"),
        ({"bm25": {"b": 1.5}}, "b"),
        ({"bm25": {"method": "okapi"}}, "method"),
        ({"dense": {"embedder": "sentence_transformers"}}, "needs model"),
        ({"hybrid": {"rrf_k": 0}}, "rrf_k"),
        ({"bm25": {"k_1": 1.0}}, "k_1"),
    ],
)
def test_invalid_recipes_name_the_problem(kwargs, fragment):
    with pytest.raises(ValidationError, match=fragment):
        Recipe(name="bad", **kwargs)


def test_manifest_is_json_with_stable_hash():
    recipe = Recipe(name="w100", chunking=Chunking(unit="words", size=100, overlap=20))
    manifest = recipe.manifest()
    assert json.loads(json.dumps(manifest)) == manifest
    assert manifest["name"] == "w100" and manifest["chunking"] == {
        "unit": "words",
        "size": 100,
        "overlap": 20,
    }
    assert manifest["bm25"]["k1"] == 1.2 and manifest["hybrid"]["rrf_k"] == 60
    assert manifest["query_modes"] == list(recipe.query_modes)
    same = Recipe(name="w100", chunking={"unit": "words", "size": 100, "overlap": 20})
    assert same.hash == recipe.hash == manifest["hash"] and len(recipe.hash) == 16
    assert Recipe(name="w100", chunking=Chunking(unit="words", size=50)).hash != recipe.hash
    assert Recipe(name="w100", bm25=Bm25(k1=0.9)).hash != Recipe(name="w100").hash


def test_secrets_are_redacted_but_other_options_kept():
    recipe = Recipe(
        name="remote",
        dense=Dense(options={"api_key": "sk-123", "nested": {"Auth-Token": "t"}, "batch": 8}),
        hybrid=Hybrid(),
    )
    text = json.dumps(recipe.manifest())
    assert "sk-123" not in text and '"t"' not in text
    assert recipe.manifest()["dense"]["options"]["batch"] == 8


def test_recipes_are_frozen_and_hashable():
    recipe = Recipe(name="a")
    with pytest.raises(ValidationError):
        recipe.name = "b"
    assert len({recipe, Recipe(name="a"), Recipe(name="b")}) == 2


def test_stopword_lists_are_accepted():
    recipe = Recipe(name="a", bm25=Bm25(stopwords=["the", "of"]))
    assert recipe.bm25.stopwords == ("the", "of")
    assert recipe.manifest()["bm25"]["stopwords"] == ["the", "of"]


def test_recipe_round_trips_through_its_manifest():
    recipe = Recipe(
        name="w", chunking=Chunking(unit="characters", size=500, overlap=50), bm25=Bm25(k1=0.9)
    )
    assert Recipe.from_manifest(recipe.manifest()) == recipe
    secret = Recipe(name="s", dense=Dense(options={"api_key": "sk-1"}))
    with pytest.raises(ValueError, match="redacted secrets"):
        Recipe.from_manifest(secret.manifest())
