"""Several recipes in one call: one report per recipe and a RunCollection for comparisons."""

from __future__ import annotations

import pytest

from heta_notebook import BenchmarkRunner, ReportStore, RunCollection
from tests._runner_helpers import MODES, AnswerMatch, ListBenchmark, TopHit, ToyRecipe, make_cases


async def test_recipes_dict_gives_one_labelled_report_each(tmp_path):
    store = ReportStore(tmp_path)
    good, flaky = ToyRecipe("good"), ToyRecipe("flaky", fail_on=["query number 0"])
    runs = await BenchmarkRunner().run(
        benchmark=ListBenchmark(cases=make_cases(4), evaluators=(TopHit(), AnswerMatch())),
        recipes={"bm25": good, "chunks-100": flaky},
        knowledge_base_name="kb",
        query_modes=MODES,
        store=store,
        progress=False,
    )
    assert isinstance(runs, RunCollection)
    assert runs.labels == ("bm25", "chunks-100") and len(runs) == 2
    assert [r.metadata["label"] for r in runs] == ["bm25", "chunks-100"]
    assert [r.label for r in runs.reports.values()] == ["bm25", "chunks-100"]
    assert runs["bm25"].knowledge_base_name == "kb-bm25"
    assert runs["chunks-100"].metadata["n_query_errors"] == 2
    assert good.builds[0]["name"] == "kb-bm25" and flaky.builds[0]["name"] == "kb-chunks-100"
    summary = runs.summary()
    assert set(summary["label"]) == {"bm25", "chunks-100"}
    row = summary[
        (summary.label == "bm25") & (summary.query_mode == "alpha") & (summary.score == "top_hit")
    ]
    assert row["mean"].item() == 1.0 and row["n"].item() == 4
    assert len(store.list()) == 2


async def test_recipes_list_labels_by_name_and_keeps_them_unique():
    runs = await BenchmarkRunner().run(
        benchmark=ListBenchmark(cases=make_cases(2), evaluators=(TopHit(),)),
        recipes=[ToyRecipe("bm25"), ToyRecipe("bm25"), ToyRecipe("dense")],
        query_modes=("alpha",),
        progress=False,
    )
    assert runs.labels == ("bm25", "bm25-2", "dense")


async def test_recipe_and_recipes_are_exclusive():
    with pytest.raises(ValueError, match="exactly one of recipe= or recipes="):
        await BenchmarkRunner().run(benchmark=ListBenchmark(), progress=False)


async def test_collection_compares_and_renders_through_the_comparison():
    runs = await BenchmarkRunner().run(
        benchmark=ListBenchmark(cases=make_cases(6), evaluators=(TopHit(),)),
        recipes={"a": ToyRecipe("a"), "b": ToyRecipe("b", fail_on=["query number 0"])},
        query_modes=MODES,
        progress=False,
    )
    comparison = runs.compare(baseline="a")
    assert set(comparison.reports) == {"a", "b"}
    html = runs._repr_html_()
    assert "top_hit" in html
