"""@evaluator / @aevaluator: full evaluators, return coercion, settings, timeout and retries."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from heta_notebook.evaluators._decorators import (
    FunctionEvaluator,
    aevaluator,
    coerce_score,
    evaluator,
    honeyhive_view,
)
from heta_notebook.evaluators._protocol import (
    BenchmarkEvaluatorProtocol,
    EvaluatorSettings,
    check_unique_names,
    settings_of,
)
from heta_notebook.schema import (
    BenchmarkCase,
    BenchmarkEvidence,
    BenchmarkExpected,
    EvaluationScore,
    QueryResponse,
)
from tests._evaluators_helpers import chunk, response

CASE = BenchmarkCase(
    case_id="c1",
    query="capital of France?",
    expected=BenchmarkExpected(
        answers=("Paris", "paris, france"), evidence=(BenchmarkEvidence(reference_id="d1"),)
    ),
    labels={"topic": "geo"},
)
RESPONSE = response([chunk("d1")], answer="It is Paris.")


async def run(ev, case=CASE, resp=RESPONSE) -> EvaluationScore:
    return await ev.evaluate(case=case, response=resp)


def test_honeyhive_view_built_from_records():
    outputs, inputs, ground_truth = honeyhive_view(CASE, RESPONSE)
    assert outputs["answer"] == "It is Paris."
    assert outputs["contexts"] == ["text of d1 chunk 0"]
    assert outputs["results"][0]["id"] == "d1#c0"
    assert inputs == {"query": "capital of France?", "topic": "geo"}
    assert ground_truth["answers"] == ["Paris", "paris, france"]
    assert ground_truth["answer"] == "Paris" and ground_truth["value"] is None
    assert ground_truth["evidence"][0]["reference_id"] == "d1"


def test_honeyhive_view_returns_the_original_dicts_as_is():
    case = BenchmarkCase(
        case_id="x", query="q", metadata={"inputs": {"a": 1}, "ground_truth": None}
    )
    resp = QueryResponse(mode="fn", metadata={"outputs": "raw string output"})
    assert honeyhive_view(case, resp) == ("raw string output", {"a": 1}, None)


async def test_bare_decorator_is_a_full_evaluator_and_stays_callable():
    @evaluator
    def contains(outputs, inputs, ground_truth):
        """Docstring kept."""
        return ground_truth["answer"] in outputs["answer"]

    assert isinstance(contains, BenchmarkEvaluatorProtocol)
    assert contains.name == "contains" and contains.__doc__ == "Docstring kept."
    assert contains({"answer": "Paris!"}, {}, {"answer": "Paris"}) is True
    score = await run(contains)
    assert (score.name, score.value, score.passed) == ("contains", True, None)
    assert settings_of(contains) == EvaluatorSettings()


async def test_arguments_name_settings_and_dict_return_with_reasons():
    @evaluator(name="custom_v2", settings=EvaluatorSettings(threshold=0.8, weight=2.0))
    def graded(outputs, inputs, ground_truth):
        return {
            "score": 0.85,
            "confidence": 0.95,
            "reason": "matches",
            "reasoning": "r",
            "explanation": "e",
        }

    score = await run(graded)
    assert graded.name == "custom_v2" and graded.settings.weight == 2.0
    assert (score.name, score.value, score.passed) == ("custom_v2", 0.85, True)
    assert score.metadata == {
        "confidence": 0.95,
        "reason": "matches",
        "reasoning": "r",
        "explanation": "e",
    }
    assert score.reason == "matches"


@pytest.mark.parametrize(
    ("raw", "value", "passed"),
    [
        (0.85, 0.85, True),
        (0.5, 0.5, False),
        (1, 1.0, True),
        (np.float32(0.25), 0.25, False),
        (np.bool_(True), True, True),
        (False, False, False),
        ("good", "good", None),
        ({"value": 0.1, "passed": True}, 0.1, True),  # the function's own verdict wins
        ({"passed": False}, False, False),
    ],
)
def test_returns_are_coerced_and_threshold_sets_passed(raw, value, passed):
    score = coerce_score(raw, "m", threshold=0.8)
    assert (score.value, score.passed, score.status) == (value, passed, "scored")
    assert type(score.value) is type(value)


def test_none_and_nan_are_skipped_and_bad_returns_are_errors():
    assert coerce_score(None, "m").status == "skipped"
    assert coerce_score({"score": float("nan")}, "m").status == "skipped"
    with pytest.raises(TypeError, match="without 'score'"):
        coerce_score({"reason": "forgot the score"}, "m")
    with pytest.raises(TypeError, match="returned list"):
        coerce_score([1.0], "m")


def test_plain_error_note_does_not_turn_a_score_into_an_evaluator_failure():
    score = coerce_score({"score": 0.0, "error": "No answer provided"}, "m")
    assert score.status == "scored" and score.metadata == {"error_note": "No answer provided"}
    merged = coerce_score({"score": 1, "metadata": {"a": 1}, "b": 2}, "m")
    assert merged.metadata == {"a": 1, "b": 2}


def test_returned_evaluation_score_is_renamed_to_the_evaluator():
    score = coerce_score(EvaluationScore(name="other", value=0.9), "mine", threshold=0.5)
    assert (score.name, score.passed) == ("mine", True)


async def test_case_response_style_and_partial_honeyhive_signatures():
    @evaluator
    def seed_style(case, response):
        return float(case.expected.answers[0] in (response.answer or ""))

    @evaluator
    def two_args(outputs, inputs):
        return len(inputs["query"]) > 3

    @evaluator
    def positional(out, inp, gt=None):
        return {"score": float(gt["answer"] in out["answer"])}

    @evaluator
    def star(*args):
        return float(len(args))

    assert (await run(seed_style)).value == 1.0
    assert (await run(two_args)).value is True
    assert (await run(positional)).value == 1.0
    assert (await run(star)).value == 3.0


async def test_aevaluator_with_and_without_arguments_and_sync_rejected():
    @aevaluator
    async def judge(outputs, inputs, ground_truth):
        await asyncio.sleep(0)
        return {"score": 0.4, "reasoning": "partly"}

    @aevaluator(name="judge_v2", settings=EvaluatorSettings(threshold=0.3))
    async def judge2(outputs, inputs, ground_truth=None):
        return 0.4

    assert asyncio.iscoroutine(coro := judge({}, {}, {}))
    assert (await coro)["score"] == 0.4
    assert (await run(judge)).reason == "partly"
    assert (await run(judge2)).passed is True and judge2.name == "judge_v2"
    with pytest.raises(TypeError, match="async"):
        aevaluator(lambda outputs, inputs, ground_truth: 1.0)


async def test_timeout_on_slow_sync_and_async_evaluators():
    @evaluator(settings=EvaluatorSettings(timeout=0.05))
    def slow_sync(outputs, inputs, ground_truth):
        time.sleep(0.5)
        return 1.0

    @aevaluator(settings=EvaluatorSettings(timeout=0.05))
    async def slow_async(outputs, inputs, ground_truth):
        await asyncio.sleep(5)
        return 1.0

    for slow in (slow_sync, slow_async):
        with pytest.raises(TimeoutError, match="timed out after 0.05 s"):
            await run(slow)


def flaky_function(failures: int):
    calls: list[int] = []

    def flaky(outputs, inputs, ground_truth):
        calls.append(1)
        if len(calls) <= failures:
            raise ConnectionError(f"attempt {len(calls)} failed")
        return {"score": 1.0, "attempts": len(calls)}

    return flaky, calls


async def test_flaky_evaluator_is_retried_with_backoff():
    flaky, calls = flaky_function(failures=2)
    ev = evaluator(flaky, settings=EvaluatorSettings(retry_count=2, retry_backoff=0.001))
    score = await run(ev)
    assert score.value == 1.0 and score.metadata["attempts"] == 3 and len(calls) == 3


async def test_last_failure_propagates_for_the_runner_to_record():
    flaky, calls = flaky_function(failures=5)
    ev = evaluator(flaky, settings=EvaluatorSettings(retry_count=1, retry_backoff=0.001))
    with pytest.raises(ConnectionError, match="attempt 2 failed"):
        await run(ev)
    assert len(calls) == 2
    assert ev._handles_settings is True  # the runner must not retry it a second time


async def test_timeouts_are_retried_too():
    calls: list[int] = []

    @aevaluator(settings=EvaluatorSettings(timeout=0.05, retry_count=1, retry_backoff=0))
    async def slow_then_fast(outputs, inputs, ground_truth):
        calls.append(1)
        await asyncio.sleep(1 if len(calls) == 1 else 0)
        return 0.7

    assert (await run(slow_then_fast)).value == 0.7 and len(calls) == 2


def test_enabled_false_is_exposed_and_duplicate_names_are_rejected():
    @evaluator(settings=EvaluatorSettings(enabled=False))
    def off(outputs, inputs, ground_truth):
        return 1.0

    @evaluator(name="off")
    def other(outputs, inputs, ground_truth):
        return 1.0

    assert isinstance(off, FunctionEvaluator) and settings_of(off).enabled is False
    with pytest.raises(ValueError, match="two evaluators are named 'off'"):
        check_unique_names([off, other])
    check_unique_names([off])


async def test_partials_and_callable_objects_work():
    import functools

    def scaled(outputs, inputs, ground_truth, factor=1.0):
        return factor * len(outputs["contexts"])

    ev = evaluator(functools.partial(scaled, factor=0.5), name="half_contexts")
    assert (await run(ev)).value == 0.5
    assert evaluator(functools.partial(scaled)).name == "partial"
