"""Comparison headlines name the variants by label; what changed (``change_description``, the
details) names only the settings that differ and matter, never NaN, never cut mid-value."""

from __future__ import annotations

from heta_notebook import Chunking, Recipe, compare
from heta_notebook.analysis._compare_frames import flatten
from heta_notebook.analysis._headline import UNSET, setting_changes, setting_text
from heta_notebook.runner._inputs import json_manifest
from tests._compare_helpers import scored_report

SCORES = {"ndcg@10": [0.2, 0.4, 0.6, 0.8, 0.5, 0.3]}
BETTER = {"ndcg@10": [0.3, 0.5, 0.7, 0.9, 0.6, 0.4]}


def _recipe(recipe: Recipe) -> dict:
    manifest = json_manifest(recipe)
    manifest.pop("name")  # scored_report names it after its label
    return manifest


def test_a_users_own_kb_against_a_recipe_names_the_two_reports_not_twenty_keys():
    mine = scored_report("mine", SCORES, recipe={"type": "MyKB"})
    docs = scored_report("whole-docs", BETTER, recipe=_recipe(Recipe(name="whole-docs")))
    [line] = compare([mine, docs], baseline="mine").headline()
    assert line.startswith("mine → whole-docs: ndcg@10 +0.1")
    assert "NaN" not in line and "—" not in line and "more" not in line


def test_two_recipes_list_the_chunking_change_without_names_hashes_or_nan():
    docs = scored_report("whole-docs", SCORES, recipe=_recipe(Recipe(name="whole-docs")))
    words = Chunking(unit="words", size=100, overlap=20)
    chunks = scored_report("chunks", BETTER, recipe=_recipe(Recipe(name="c", chunking=words)))
    c = compare([docs, chunks], baseline="whole-docs")
    [line] = c.headline()
    assert line.startswith("whole-docs → chunks: ndcg@10 +0.1")
    [(a, b)] = c.pairs()
    line = c.change_description(a, b)
    changes = line.split("; ")
    assert sorted(changes) == [
        "chunking.overlap 0 → 20",
        "chunking.size none → 100",
        "chunking.unit document → words",
    ]
    assert "hash" not in line and "NaN" not in line


def test_settings_both_recipes_set_come_before_those_only_one_sets():
    a = {"name": "a", "chunking.size": 100, "bm25.k1": 1.2}
    b = {"name": "b", "chunking.size": 200, "bm25.k1": 1.2, "rerank.model": "x"}
    changes = setting_changes(a, b)
    assert [c[0] for c in changes] == ["chunking.size", "rerank.model"]
    assert [setting_text(v) for v in changes[1][1:]] == ["—", "x"]
    assert setting_changes({"x": None}, {}) == []  # null and unset say the same
    assert setting_text(float("nan")) == "none" and setting_text(UNSET) == "—"


def test_manifest_diff_keeps_nulls_as_none_not_nan():
    docs = scored_report("whole-docs", SCORES, recipe=_recipe(Recipe(name="whole-docs")))
    chunks = scored_report(
        "chunks", BETTER, recipe=_recipe(Recipe(name="c", chunking=Chunking(unit="words", size=9)))
    )
    diff = compare([docs, chunks]).manifest_diff()
    assert diff.loc["chunking.size", "whole-docs"] is None
    assert diff.loc["chunking.size", "chunks"] == 9
    assert "NaN" not in diff.to_string()
    assert flatten({"a": {"b": None}}) == {"a.b": None}


def test_a_recipe_without_a_manifest_records_an_empty_one():
    """The runner's manifests follow the systems' rule, with ``{}`` when an object has none."""
    assert json_manifest(object()) == {}
    assert json_manifest(Recipe(name="whole-docs"))["name"] == "whole-docs"
