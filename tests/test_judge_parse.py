"""Reply parsing and prompt rendering of the LLM judges (no HTTP)."""

from __future__ import annotations

import json

import pytest

from heta_notebook._util.chat_cache import ChatCache, cache_key
from heta_notebook.evaluators._judge import (
    AnswerCorrectnessJudge,
    ContextRelevanceJudge,
    FaithfulnessJudge,
    LLMJudge,
    judge_inputs,
)
from heta_notebook.evaluators._judge_parse import JudgeParseError, parse_reply
from heta_notebook.evaluators._judge_prompts import BUILTIN_PROMPTS, render
from heta_notebook.schema import BenchmarkCase, BenchmarkExpected, QueryResponse, QueryResult


@pytest.mark.parametrize(
    ("reply", "score", "reason"),
    [
        ('{"score": 0.8, "reason": "mostly right"}', 0.8, "mostly right"),
        ('```json\n{"score": 1, "reasoning": "exact"}\n```', 1.0, "exact"),
        (
            'Here is my verdict:\n```\n{"Rating": "0.25", "Explanation": "weak"}\n```\nThanks!',
            0.25,
            "weak",
        ),
        ('Sure. {"score": 0.5, "justification": "half"} Hope this helps {not json}', 0.5, "half"),
        ('{"result": {"score": 0.6, "rationale": "nested"}}', 0.6, "nested"),
        ('{"score": "4/5", "reason": "fraction"}', 0.8, "fraction"),
        ('{"score": "80%", "reason": "percent"}', 0.8, "percent"),
        ("0.7", 0.7, None),
    ],
)
def test_parse_reply_finds_score_and_reason(reply: str, score: float, reason: str | None) -> None:
    verdict = parse_reply(reply)
    assert verdict.score == pytest.approx(score)
    assert verdict.reason == reason


@pytest.mark.parametrize(
    ("reply", "passed"),
    [
        ('{"verdict": "PASS", "reason": "ok"}', True),
        ('{"passed": false}', False),
        ('{"correct": "yes"}', True),
        ('{"verdict": "not supported"}', False),
    ],
)
def test_parse_reply_reads_verdict_words(reply: str, passed: bool) -> None:
    assert parse_reply(reply).passed is passed


@pytest.mark.parametrize(
    "reply",
    ["", "   ", "I think it is fine.", '{"comment": "no verdict here"}', "[1, 2]", "{broken"],
)
def test_parse_reply_rejects_replies_without_a_verdict(reply: str) -> None:
    with pytest.raises(JudgeParseError):
        parse_reply(reply)


def _case(answers: tuple[str, ...] = ("Paris",)) -> BenchmarkCase:
    return BenchmarkCase(
        case_id="c1",
        query="What is the capital of France?",
        expected=BenchmarkExpected(answers=answers),
    )


def _response(answer: str | None = "Paris {is} the capital", n_results: int = 2) -> QueryResponse:
    results = tuple(
        QueryResult(id=f"r{i}", text=f"chunk {i} " + "x" * 50) for i in range(n_results)
    )
    return QueryResponse(mode="full_text_search", answer=answer, results=results)


def test_render_replaces_only_known_placeholders() -> None:
    text = render('{query} -> {"score": 1} {unknown}', {"query": "q {answer}"})
    assert text == 'q {answer} -> {"score": 1} {unknown}'


def test_builtin_prompts_have_versions_and_use_what_they_judge() -> None:
    assert {p.version for p in BUILTIN_PROMPTS.values()} == {
        "answer_correctness/v1",
        "faithfulness/v1",
        "context_relevance/v1",
    }
    assert AnswerCorrectnessJudge().requirements() == ("query", "answer", "expected_answers")
    assert FaithfulnessJudge().requirements() == ("query", "answer", "contexts")
    assert ContextRelevanceJudge().requirements() == ("query", "contexts")


def test_messages_hold_the_case_texts_and_limit_contexts() -> None:
    judge = FaithfulnessJudge(max_contexts=1, max_context_chars=20, use_cache=False)
    system, user = judge.render_messages(_case(), _response())
    assert system["role"] == "system" and '"score"' in system["content"]
    assert "What is the capital of France?" in user["content"]
    assert "Paris {is} the capital" in user["content"]
    assert '<context id="1">' in user["content"] and '<context id="2">' not in user["content"]
    assert "chunk 0 " + "x" * 12 + " [...]" in user["content"]


def test_label_judge_lists_its_labels_in_the_instructions() -> None:
    judge = LLMJudge(
        "tone",
        prompt="Is this polite? {answer}",
        output="label",
        labels={"polite": True, "rude": False},
        use_cache=False,
    )
    system = judge.render_messages(_case(), _response())[0]["content"]
    assert "exactly one of: polite, rude" in system
    assert judge.prompt.version.startswith("custom/")
    with pytest.raises(ValueError, match="labels"):
        LLMJudge("x", prompt="{answer}", output="label")


def test_judge_inputs_fall_back_to_honeyhive_dicts() -> None:
    case = BenchmarkCase(
        case_id="h",
        query="ignored when inputs hold a query",
        metadata={"inputs": {"question": "Q?"}, "ground_truth": {"answer": "A"}},
    )
    response = QueryResponse(
        mode="fn", metadata={"outputs": {"output": "B", "contexts": ["ctx", {"text": "ctx2"}]}}
    )
    inputs = judge_inputs(case, response)
    assert (inputs.query, inputs.answer) == ("Q?", "B")
    assert inputs.expected_answers == ("A",)
    assert inputs.contexts == ("ctx", "ctx2")


def test_cache_key_depends_on_everything_that_decides_the_reply(tmp_path) -> None:
    base = {
        "model": "m",
        "prompt_version": "v1",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.0,
        "max_tokens": 10,
    }
    key = cache_key(**base)
    for change in (
        {"model": "m2"},
        {"prompt_version": "v2"},
        {"messages": [{"role": "user", "content": "hi!"}]},
        {"temperature": 0.5},
        {"max_tokens": 11},
    ):
        assert cache_key(**{**base, **change}) != key
    cache = ChatCache(tmp_path)
    assert cache.get(key) is None
    cache.put(key, {"reply": "0.5"})
    assert cache.get(key)["reply"] == "0.5" and len(cache) == 1
    cache.path(key).write_text("{torn", encoding="utf-8")
    assert cache.get(key) is None
    cache.put(key, {"reply": "0.5"})  # sealed: a changed byte is a miss, asked again
    text = cache.path(key).read_text(encoding="utf-8")
    cache.path(key).write_text(text.replace('"0.5"', '"0.9"'), encoding="utf-8")
    assert cache.get(key) is None
    old = {"key": key, "reply": "0.5"}  # an entry of an earlier version, without a sum
    cache.path(key).write_text(json.dumps(old), encoding="utf-8")
    assert cache.get(key)["reply"] == "0.5"
    cache.path(key).write_text(json.dumps({**old, "key": "0" * 64}), encoding="utf-8")
    assert cache.get(key) is None  # another key's entry
    with pytest.raises(ValueError):
        cache.path("../../etc/passwd")
