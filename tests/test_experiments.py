"""evaluate(): HoneyHive-style experiments on plain functions with mixed evaluators."""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest

from heta_notebook import EvaluatorSettings, ReportStore, aevaluator, evaluate, evaluator
from heta_notebook.runner import aevaluate

DATASET = [
    {"inputs": {"query": "capital of France", "lang": "en"}, "ground_truth": {"answer": "Paris"}},
    {"inputs": {"query": "capital of Italy", "lang": "en"}, "ground_truth": {"answer": "Rome"}},
    {"inputs": {"query": "capital of Spain", "lang": "en"}, "ground_truth": {"answer": "Madrid"}},
]
KNOWN = {"capital of France": "Paris", "capital of Italy": "Rome"}


def capital(inputs):
    return {"answer": KNOWN.get(inputs["query"], "unknown"), "n_words": 1}


@evaluator
def exact(outputs, inputs, ground_truth):
    return {
        "score": float(outputs["answer"] == ground_truth["answer"]),
        "reason": f"got {outputs['answer']}",
    }


@aevaluator(settings=EvaluatorSettings(threshold=0.5))
async def english(outputs, inputs, ground_truth):
    await asyncio.sleep(0)
    return 1.0 if inputs["lang"] == "en" else 0.0


def test_mixed_sync_and_async_evaluators_see_the_original_dicts(tmp_path):
    report = evaluate(
        function=capital,
        dataset=DATASET,
        evaluators=[exact, english],
        store=ReportStore(tmp_path),
        progress=False,
    )
    assert report.query_modes == ("capital",)
    assert [r.case_id for r in report.case_results] == ["case_1", "case_2", "case_3"]
    assert report.score_summary["capital.exact"] == pytest.approx(2 / 3)
    assert report.score_summary["capital.english"] == 1.0
    first = report.case_results[0]
    assert first.response.metadata["outputs"] == {"answer": "Paris", "n_words": 1}
    assert first.response.answer == "Paris"
    assert first.score("exact").reason == "got Paris"
    assert first.score("english").passed is True
    assert first.metadata["expected"]["answers"] == ["Paris"]  # expectations travel with each case
    assert (
        ReportStore(tmp_path).load("capital", report.report_id).case_results == report.case_results
    )


async def test_async_function_with_ground_truth_argument_and_a_label():
    seen = []

    async def rag(inputs, ground_truth):
        seen.append(ground_truth)
        return inputs["query"].split()[-1]  # a string: becomes {"answer": ...}

    @evaluator(name="said_country")
    def said(outputs, inputs, ground_truth):
        return outputs == {"answer": inputs["query"].split()[-1]}

    report = await aevaluate(rag, DATASET, [said], label="echo-v1", progress=False)
    assert report.query_modes == ("echo-v1",) and report.label == "echo-v1"
    assert seen == [d["ground_truth"] for d in DATASET]
    assert all(r.score("said_country").value is True for r in report.case_results)


def test_function_errors_and_evaluator_errors_are_isolated():
    def flaky(inputs):
        if "Italy" in inputs["query"]:
            raise RuntimeError("model down")
        return {"answer": "x"}

    @evaluator
    def broken(outputs, inputs, ground_truth):
        raise KeyError("oops")

    report = evaluate(function=flaky, dataset=DATASET, evaluators=[exact, broken], progress=False)
    errors = {r.case_id: r.error for r in report.case_results if r.error}
    assert list(errors) == ["case_2"] and errors["case_2"].message == "model down"
    ok = report.case_results[0]
    assert ok.score("exact").value == 0.0 and ok.score("broken").status == "error"
    stats = report.metadata["score_stats"]["flaky.exact"]
    assert (stats["n"], stats["n_error"]) == (2, 1)


def test_datapoint_signature_dataframe_and_non_dict_ground_truth():
    frame = pd.DataFrame({"inputs": [{"text": "a b"}, {"text": "c"}], "ground_truth": ["2", "1"]})

    def count(datapoint):
        return {"answer": str(len(datapoint["inputs"]["text"].split()))}

    @evaluator
    def right(outputs, inputs, ground_truth):
        return outputs["answer"] == ground_truth

    report = evaluate(count, frame, [right], progress=False, max_concurrency=1)
    assert [r.score("right").value for r in report.case_results] == [True, True]
    assert report.case_results[0].query == '{"text": "a b"}'


def test_contexts_in_outputs_become_results_for_retrieval_evaluators():
    def retrieve(inputs):
        return {"answer": "Paris", "contexts": ["Paris is the capital of France."]}

    report = evaluate(retrieve, DATASET[:1], [], progress=False)
    (result,) = report.case_results[0].response.results
    assert result.text == "Paris is the capital of France."


def test_plain_functions_are_accepted_as_evaluators_and_lambdas_get_a_label():
    def plain(outputs, inputs, ground_truth):
        return {"score": 1.0, "reason": "plain function"}

    async def plain_async(outputs, inputs, ground_truth):
        return True

    report = evaluate(lambda inputs: "x", DATASET[:2], [plain, plain_async], progress=False)
    assert report.query_modes == ("function",)
    assert report.score_names == ("plain", "plain_async")
    assert report.case_results[0].score("plain").reason == "plain function"


def test_decorated_evaluators_are_retried_once_not_twice():
    attempts = []

    @evaluator(settings=EvaluatorSettings(retry_count=2, retry_backoff=0.001))
    def flaky(outputs, inputs, ground_truth):
        attempts.append(1)
        raise ConnectionError("judge unreachable")

    report = evaluate(capital, DATASET[:1], [flaky], progress=False)
    assert len(attempts) == 3  # the decorator's 1 + 2 retries; the runner adds none
    assert (
        report.case_results[0].score("flaky").metadata["error"]["error_type"] == "ConnectionError"
    )


@pytest.mark.parametrize("timeout", [0.05])
def test_decorated_evaluator_timeout_is_recorded_not_raised(timeout):
    @aevaluator(settings=EvaluatorSettings(timeout=timeout))
    async def slow(outputs, inputs, ground_truth):
        await asyncio.sleep(5)

    report = evaluate(capital, DATASET[:2], [exact, slow], progress=False)
    for result in report.case_results:
        assert result.score("slow").metadata["error"]["error_type"] == "TimeoutError"
        assert result.score("exact").status == "scored"


def test_a_records_benchmark_works_as_dataset_and_config_concurrency_is_kept():
    from heta_notebook import RecordsBenchmark

    benchmark = RecordsBenchmark(DATASET, manifest="capitals")
    report = evaluate(
        capital, benchmark, [exact], progress=False, config={"max_concurrent_queries": 3}
    )
    assert (
        report.benchmark.name == "capitals"
        and report.metadata["config"]["max_concurrent_queries"] == 3
    )
    assert report.score_summary["capital.exact"] == pytest.approx(2 / 3)


class Capitals:
    """A callable object as the function under test."""

    def __call__(self, inputs):
        return capital(inputs)


@pytest.mark.parametrize(
    ("function", "name"), [(capital, f"{__name__}.capital"), (Capitals(), f"{__name__}.Capitals")]
)
def test_the_report_names_the_function_it_ran(function, name):
    """A function by its module and name, a callable object by its class (the systems' rule)."""
    report = evaluate(function=function, dataset=DATASET, evaluators=[exact], progress=False)
    assert report.recipe_manifest["function"] == name
    assert report.metadata["function"] == name
