"""The UMBRELA-style relevance judge against a real loopback OpenAI-compatible server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heta_notebook.labels import LabelSet, RelevanceJudge, fill_holes, pool
from tests._judge_server import JudgeServer, Reply

QUERIES = {"q1": "wing flutter at supersonic speed", "q2": "boundary layer transition"}
DOCS = {f"d{i}": f"passage {i} about GRADE{i % 4}" for i in range(8)}


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HETA_JUDGE_BASE_URL", "HETA_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HETA_JUDGE_API_KEY", "sk-test-labels")
    monkeypatch.setenv("HETA_JUDGE_CACHE_DIR", str(tmp_path / "default_cache"))


def _judge(server: JudgeServer, tmp_path: Path, **kw: Any) -> RelevanceJudge:
    options: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "umbrela-test",
        "cache_dir": tmp_path / "cache",
        "timeout": 0.5,
        "max_retries": 1,
        "backoff": 0.01,
    }
    return RelevanceJudge(**{**options, **kw})


def _by_passage(request: dict[str, Any]) -> Reply:
    """Grade = the digit after GRADE in the passage; d5 gets garbage, d6 a 500, d7 times out."""
    text = request["messages"][-1]["content"]
    if "passage 5 " in text:
        return Reply(content="I cannot decide, sorry.")
    if "passage 6 " in text:
        return Reply(status=500, body='{"error": "boom"}')
    if "passage 7 " in text:
        return Reply(content=json.dumps({"score": 1, "reason": "late"}), delay=0.8)
    grade = int(text.split("GRADE")[1][0])
    return Reply(content=json.dumps({"score": grade, "reason": f"looks like {grade}"}))


def test_fill_labels_pairs_with_provenance_and_keeps_failures_per_pair(
    server: JudgeServer, tmp_path: Path
) -> None:
    server.route = _by_passage
    labels = LabelSet.open(tmp_path / "labels", {"q1": {"d0": 1}})
    runs = {"q1": {f"d{i}": 10.0 - i for i in range(8)}}
    judge = _judge(server, tmp_path)
    result = fill_holes(
        labels, pool(runs, depth=8, labels=labels), judge, queries=QUERIES, documents=DOCS
    )
    failed = {f.doc_id for f in result.failures}
    assert len(result.added) == 4 and failed == {"d5", "d6", "d7"}
    reasons = {f.doc_id: f.reason for f in result.failures}
    assert "no JSON object with a score" in reasons["d5"] and "HTTP 500" in reasons["d6"]
    assert "no reply within 0.5 s" in reasons["d7"]
    assert labels.grade("q1", "d3") == 3 and labels.grade("q1", "d0") == 1  # original kept
    label = labels.labels("judge")[("q1", "d2")]
    assert (label.who, label.model, label.reason) == ("relevance", "umbrela-test", "looks like 2")
    assert label.prompt_hash == judge.prompt_hash and len(label.prompt_hash) == 16
    assert result.usage["total_tokens"] == 49 * 4
    back = LabelSet.load(tmp_path / "labels")  # saved to disk: nothing labelled is lost
    assert back.qrels() == labels.qrels()
    # the second pass asks only about what is still unjudged, and the cache answers the rest
    asked = len(server.requests)
    server.route = lambda request: (
        Reply(content=json.dumps({"score": 2, "reason": "now"}))
        if "passage 7 " in request["messages"][-1]["content"]
        else _by_passage(request)
    )
    again = fill_holes(
        labels, pool(runs, depth=8, labels=labels), judge, queries=QUERIES, documents=DOCS
    )
    assert len(again.added) == 1 and len(again.failures) == 2
    assert len(server.requests) - asked == 1 + 2 + 1  # garbage once, the 500 twice, d7 once


def test_limit_sample_and_a_non_integer_grade(server: JudgeServer, tmp_path: Path) -> None:
    server.default = Reply(content=json.dumps({"score": 1.5, "reason": "between"}))
    labels = LabelSet({})
    pairs = [("q2", d) for d in DOCS]
    result = fill_holes(
        labels, pairs, _judge(server, tmp_path), queries=QUERIES, documents=DOCS, limit=2
    )
    assert [f.reason for f in result.failures] == ["grade 1.5 is not an integer 0-3"] * 2
    server.default = Reply(content=json.dumps({"score": 2, "reason": "ok"}))
    sampled = fill_holes(
        labels,
        pairs,
        _judge(server, tmp_path, use_cache=False),
        queries=QUERIES,
        documents=DOCS,
        sample=3,
        seed=1,
    )
    assert len(sampled.added) == 3 and len(labels) == 3


def test_the_prompt_is_umbrelas_and_the_passage_is_sent(
    server: JudgeServer, tmp_path: Path
) -> None:
    server.default = Reply(content=json.dumps({"score": 0, "reason": "unrelated"}))
    labels = LabelSet({})
    fill_holes(labels, [("q1", "d1")], _judge(server, tmp_path), queries=QUERIES, documents=DOCS)
    sent = server.requests[0].body["messages"]
    assert "integer scale of 0 to 3" in sent[1]["content"]
    assert "passage 1 about GRADE1" in sent[1]["content"] and QUERIES["q1"] in sent[1]["content"]
    assert labels.grade("q1", "d1") == 0  # a judged non-relevant pair is judged
