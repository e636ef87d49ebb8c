"""``Recipe(answer=my_function)``: your own answer step over the embedded retrieval, sync or async,
returning an answer, ``(answer, citations)`` or a dict; results (and retrieval metrics) unchanged."""

from __future__ import annotations

import asyncio

import pytest

from heta_notebook import Abstain, AnswerContains, BeirRetrievalMetric, Recipe, run_benchmark
from heta_notebook.benchmarks import RecordsBenchmark
from heta_notebook.kb import CustomAnswer

DOCS = [
    {"id": "paris", "text": "Paris is the capital of France."},
    {"id": "rome", "text": "Rome is the capital of Italy."},
    {"id": "oslo", "text": "Oslo is the capital of Norway."},
]
CASES = [
    {"id": "q1", "query": "capital of France", "answer": "Paris", "reference_ids": ["paris"]},
    {"id": "q2", "query": "capital of Italy", "answer": "Rome", "reference_ids": ["rome"]},
]


def _benchmark() -> RecordsBenchmark:
    return RecordsBenchmark(CASES, documents=DOCS, manifest="capitals")


def first_word(question, results):
    """Answers with the first word of the top result, citing it by id."""
    top = results[0]
    return top.text.split()[0], [top.id]


async def async_dict(question, results):
    await asyncio.sleep(0)
    return {"answer": results[0].text.split()[0], "citations": [1], "usage": {"total_tokens": 3}}


def abstains(question, results):
    return None


def _run(answer, tmp_path):
    recipe = Recipe(name="custom", dense=None, hybrid=None, answer=answer)
    return run_benchmark(
        benchmark=_benchmark(),
        recipe=recipe,
        evaluators=[AnswerContains(), BeirRetrievalMetric("ndcg", 3)],
        workspace=tmp_path,
        progress=False,
    ).report


@pytest.mark.parametrize("answer", [first_word, async_dict], ids=["sync-pair", "async-dict"])
def test_a_function_answers_over_the_embedded_retrieval(answer, tmp_path) -> None:
    report = _run(answer, tmp_path)
    responses = {r.case_id: r.response for r in report.case_results}
    assert responses["q1"].answer == "Paris" and responses["q2"].answer == "Rome"
    cited = responses["q1"].citations[0]
    assert cited.result_id == responses["q1"].results[0].id
    meta = responses["q1"].metadata["answer"]
    assert meta["answerer"].startswith("custom:") and meta["abstained"] is False
    assert report.summary().set_index("score").loc["answer_contains", "mean"] == 1.0
    plain = _run(None, tmp_path)
    assert [r.scores[1].value for r in report.case_results] == [
        r.scores[1].value for r in plain.case_results
    ]


def test_async_answers_keep_their_extra_fields(tmp_path) -> None:
    report = _run(async_dict, tmp_path)
    assert report.case_results[0].response.metadata["answer"]["usage"] == {"total_tokens": 3}


def test_none_abstains(tmp_path) -> None:
    report = _run(abstains, tmp_path)
    response = report.case_results[0].response
    assert response.answer is None and response.metadata["answer"]["abstained"] is True


@pytest.mark.parametrize(
    "returned",
    [Abstain("no capital named"), {"answer": Abstain("no capital named"), "citations": []}],
    ids=["Abstain", "dict"],
)
def test_an_answer_step_abstains_with_a_reason(returned, tmp_path) -> None:
    """``Abstain(reason)`` works in an answer step as it does for a whole system."""
    response = _run(lambda question, results: returned, tmp_path).case_results[0].response
    assert response.answer is None and response.abstained
    assert response.abstain_reason == "no capital named"


def test_a_wrong_return_type_is_a_clear_case_error(tmp_path) -> None:
    report = _run(lambda question, results: 42, tmp_path)
    error = report.case_results[0].error
    assert error is not None and "answer string" in error.message


def test_the_manifest_names_the_function_and_refuses_to_rebuild_without_it() -> None:
    recipe = Recipe(name="custom", answer=first_word)
    assert isinstance(recipe.answer, CustomAnswer)
    manifest = recipe.manifest()
    assert manifest["answer"] == {
        "kind": "custom",
        "function": f"{__name__}.first_word",
        "version": "1",
    }
    with pytest.raises(ValueError, match="pass it again as Recipe\\(answer=the_function\\)"):
        Recipe.from_manifest(manifest)
    assert Recipe(name="custom", answer=first_word).hash == recipe.hash
