"""The chat answer step against a real OpenAI-compatible server on 127.0.0.1 (scripted replies)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heta_notebook.kb._answer import AnswerPrompt, ChatAnswer
from heta_notebook.kb._chat_answer import parse_answer, render_messages
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._recipe import Recipe
from heta_notebook.schema import BenchmarkDocument, EvaluationReport, QueryResult
from tests._judge_server import JudgeServer, Reply

SECRET = "sk-answer-SECRET-93b1e0"
BOUND = 20.0
DOCS = [
    BenchmarkDocument(document_id="normandy", text="Normandy is a region in France."),
    BenchmarkDocument(document_id="rouen", text="Rouen is the capital of Normandy."),
    BenchmarkDocument(document_id="bread", text="Bread needs flour and water."),
]


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer(
        default=Reply(content=json.dumps({"answer": "France", "citations": [1]}))
    ) as s:
        yield s


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HETA_ANSWER_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANSWER_KEY", SECRET)
    monkeypatch.setenv("HETA_JUDGE_CACHE_DIR", str(tmp_path / "default_cache"))


def step(server: JudgeServer, tmp_path: Path, **kw: Any) -> ChatAnswer:
    options: dict[str, Any] = {
        "model": "answer-model",
        "base_url": server.base_url,
        "api_key_env": "ANSWER_KEY",
        "cache_dir": str(tmp_path / "cache"),
        "timeout": 0.5,
        "max_retries": 2,
        "backoff": 0.01,
        "max_retry_after": 0.05,
    }
    return ChatAnswer(**{**options, **kw})


def knowledge_base(answer: ChatAnswer) -> KnowledgeBase:
    recipe = Recipe(name="chat", dense={"dims": 2}, answer=answer)
    return KnowledgeBase.build_sync(recipe, DOCS)


def ask(kb: KnowledgeBase, question: str, mode: str = "full_text_search", top_k: int = 2):
    return asyncio.run(asyncio.wait_for(kb.query(question, mode=mode, top_k=top_k), BOUND))


@pytest.mark.parametrize("mode", ["full_text_search", "vector_search", "hybrid_search"])
def test_every_mode_answers_through_the_endpoint(server, tmp_path, mode):
    kb = knowledge_base(step(server, tmp_path))
    response = ask(kb, "Normandy is in which country?", mode=mode)
    assert response.answer == "France"
    [citation] = response.citations
    assert citation.result_id == response.results[0].id  # context [1] is the top result
    meta = response.metadata["answer"]
    assert meta["answerer"] == "chat" and meta["model"] == "answer-model"
    assert meta["prompt_version"] == "grounded-answer/1" and meta["abstained"] is False
    assert meta["usage"]["total_tokens"] == 49 and meta["latency_ms"] >= 0
    assert response.trace[-1].stage == "answer"
    seen = server.requests[-1]
    assert seen.headers["authorization"] == f"Bearer {SECRET}"
    assert seen.body["model"] == "answer-model" and seen.body["temperature"] == 0.0


def test_prompt_numbers_the_contexts_and_asks_for_citations(server, tmp_path):
    results = (QueryResult(id="a", text="Alpha text."), QueryResult(id="b", text="Beta text."))
    system, user = render_messages(step(server, tmp_path), "What is alpha?", results)
    assert "Cite" in system["content"] and '"citations"' in system["content"]
    assert (
        user["content"]
        == "Contexts:\n[1] Alpha text.\n\n[2] Beta text.\n\nQuestion: What is alpha?"
    )
    custom = AnswerPrompt(version="v9", system="S", user="Q={question} C={contexts}")
    messages = render_messages(step(server, tmp_path, prompt=custom), "q?", results[:1])
    assert messages == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "Q=q? C=[1] Alpha text."},
    ]


def test_replies_parse_into_answer_and_citations():
    assert parse_answer('{"answer": "Rouen", "citations": [2, 1]}') == ("Rouen", [2, 1])
    assert parse_answer('Sure:\n```json\n{"answer": "Rouen [2]"}\n```') == ("Rouen", [2])
    assert parse_answer('{"answer": null, "citations": []}') == (None, [])
    assert parse_answer('{"answer": "", "citations": ["[3]"]}') == (None, [3])
    assert parse_answer("Rouen is the capital [2][1].") == ("Rouen is the capital .", [2, 1])
    assert parse_answer("Unanswerable.") == (None, [])


def test_abstention_and_out_of_range_citations(server, tmp_path):
    kb = knowledge_base(step(server, tmp_path))
    server.queue(Reply(content=json.dumps({"answer": None, "citations": []})))
    abstained = ask(kb, "Who painted Normandy?")
    assert abstained.answer is None and abstained.citations == ()
    assert abstained.metadata["answer"]["abstained"] is True
    server.queue(Reply(content=json.dumps({"answer": "Rouen", "citations": [2, 7]})))
    response = ask(kb, "capital of Normandy")
    assert [c.result_id for c in response.citations] == [response.results[1].id]
    assert response.metadata["answer"]["invalid_citations"] == [7]


def test_retries_honour_retry_after_then_answer(server, tmp_path):
    kb = knowledge_base(step(server, tmp_path))
    server.queue(
        Reply(status=429, headers={"Retry-After": "0.01"}, body='{"error": "slow down"}'),
        Reply(status=503, body='{"error": "busy"}'),
    )
    response = ask(kb, "Normandy country")
    assert response.answer == "France" and response.metadata["answer"]["attempts"] == 3
    assert len(server.requests) == 3


def test_a_dead_endpoint_keeps_the_results_and_records_the_error(server, tmp_path):
    kb = knowledge_base(step(server, tmp_path, max_retries=1))
    server.queue(*[Reply(status=500, body=f'{{"error": "bad key {SECRET}"}}')] * 2)
    response = ask(kb, "Normandy country")
    assert response.answer is None and response.results
    error = response.metadata["answer"]["error"]
    assert error["error_type"] == "ChatRequestError" and "gave up after 2" in error["message"]
    assert SECRET not in response.model_dump_json()


def test_replies_are_cached_on_disk_and_the_key_never_stored(server, tmp_path):
    answer = step(server, tmp_path)
    kb = knowledge_base(answer)
    first = ask(kb, "Normandy country")
    second = ask(knowledge_base(answer), "Normandy country")
    assert len(server.requests) == 1
    assert first.metadata["answer"]["cache_hit"] is False
    assert second.metadata["answer"]["cache_hit"] is True and second.answer == "France"
    assert second.citations == first.citations
    stored = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    assert '"kind": "answer"' in stored and SECRET not in stored
    # a new prompt version asks again
    ask(
        knowledge_base(
            step(
                server,
                tmp_path,
                prompt=AnswerPrompt(version="v2", system="s", user="{question} {contexts}"),
            )
        ),
        "Normandy country",
    )
    assert len(server.requests) == 2


def test_no_results_means_abstention_without_a_request(server, tmp_path):
    response = ask(knowledge_base(step(server, tmp_path)), "Mona Lisa")
    assert response.results == () and response.answer is None
    assert response.metadata["answer"]["reason"] == "no retrieved result has text"
    assert server.requests == []


def test_missing_key_variable_is_an_answer_error_not_a_crash(server, tmp_path, monkeypatch):
    monkeypatch.delenv("ANSWER_KEY")
    response = ask(knowledge_base(step(server, tmp_path)), "Normandy country")
    error = response.metadata["answer"]["error"]
    assert (
        error["error_type"] == "ChatAnswerNotConfiguredError" and "ANSWER_KEY" in error["message"]
    )
    assert server.requests == []


def test_the_key_never_lands_in_a_report(server, tmp_path):
    from heta_notebook.benchmarks._records import RecordsBenchmark
    from heta_notebook.runner import run_benchmark

    benchmark = RecordsBenchmark(
        [{"case_id": "c1", "query": "Normandy country", "answers": ["France"]}],
        documents=DOCS,
        manifest="tiny",
    )
    recipe = Recipe(name="chat", dense=None, hybrid=None, answer=step(server, tmp_path))
    result = run_benchmark(
        benchmark=benchmark, recipe=recipe, workspace=tmp_path / "ws", progress=False
    )
    report: EvaluationReport = result.report
    text = report.model_dump_json()
    assert SECRET not in text
    assert report.recipe_manifest["answer"]["api_key_env"] == "ANSWER_KEY"
    [row] = report.case_results
    assert row.response.answer == "France"
