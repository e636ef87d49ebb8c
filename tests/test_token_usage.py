"""Token usage: a chat answerer's and a judge's tokens per case, from the endpoint's ``usage``
replies (a real loopback server), summed per recipe in ``token_usage`` and on the card; cached
replies are counted as cached, not spent again; a price table gives the cost."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from heta_notebook import AnswerCorrectnessJudge, ChatAnswer, Recipe, run_benchmark
from heta_notebook.analysis import token_usage, usage_totals
from heta_notebook.benchmarks import RecordsBenchmark
from tests._judge_server import JudgeServer, Reply, verdict

ANSWER_USAGE = {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35}
JUDGE_USAGE = {"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220}
DOCS = [{"id": f"d{i}", "text": f"Fact number {i} is {i * 7}."} for i in range(6)]
CASES = [
    {"id": f"q{i}", "query": f"fact number {i}", "answer": str(i * 7), "reference_ids": [f"d{i}"]}
    for i in range(6)
]


def route(request: dict[str, Any]) -> Reply:
    if "numbered contexts" in request["messages"][0]["content"]:  # the answer step
        return Reply(content=json.dumps({"answer": "42", "citations": [1]}), usage=ANSWER_USAGE)
    return Reply(content=verdict(1.0, "fine"), usage=JUDGE_USAGE)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeServer]:
    monkeypatch.setenv("TEST_CHAT_KEY", "sk-test")
    with JudgeServer() as running:
        running.route = route
        yield running


def _run(server: JudgeServer, tmp_path) -> Any:
    options = {"base_url": server.base_url, "api_key_env": "TEST_CHAT_KEY", "backoff": 0.01}
    recipe = Recipe(
        name="chat",
        dense=None,
        hybrid=None,
        answer=ChatAnswer(model="answer-model", cache_dir=str(tmp_path / "cache"), **options),
    )
    judge = AnswerCorrectnessJudge(
        model="judge-model", cache_dir=str(tmp_path / "cache"), **options
    )
    return run_benchmark(
        benchmark=RecordsBenchmark(CASES, documents=DOCS, manifest="facts"),
        recipe=recipe,
        evaluators=[judge],
        workspace=tmp_path / "kb",
        progress=False,
    ).report


def test_tokens_per_source_match_the_servers_usage_replies(server, tmp_path) -> None:
    report = _run(server, tmp_path)
    usage = token_usage(report, prices={"answer-model": {"prompt": 1.0, "completion": 2.0}})
    rows = usage.set_index("source")
    n = len(CASES)
    assert rows.loc["answer", "requests"] == n and rows.loc["answer", "cached"] == 0
    assert rows.loc["answer", "total_tokens"] == 35 * n
    assert rows.loc["answer_correctness", "prompt_tokens"] == 200 * n
    assert rows.loc["answer_correctness", "model"] == "judge-model"
    assert rows.loc["answer", "cost_usd"] == pytest.approx((30 * 1.0 + 5 * 2.0) * n / 1e6)
    assert pd.isna(rows.loc["answer_correctness", "cost_usd"])  # no price for judge-model
    assert len(server.requests) == 2 * n
    card = report.card()._repr_html_()
    assert "chat tokens" in card and f"{255 * n:,}" in card


def test_cached_replies_are_counted_as_cached_not_spent(server, tmp_path) -> None:
    _run(server, tmp_path)
    again = _run(server, tmp_path)
    totals = usage_totals(again)
    assert totals["requests"] == 2 * len(CASES) and totals["cached"] == 2 * len(CASES)
    assert totals["total_tokens"] == 0
