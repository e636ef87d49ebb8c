"""Answers only where answers are expected.

A retrieval-only benchmark (Cranfield: no expected answers) runs no answer step unless the
recipe asks for one, so its card, comparison and CLI summary say nothing about abstentions; a
chat answerer's outage (HTTP 500, a timeout; a real loopback server) is an error score with its
reason, never an abstention.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heta_notebook import (
    AnswerContains,
    BeirBenchmark,
    BenchmarkCase,
    Extractive,
    Recipe,
    RecordsBenchmark,
    compare,
    run_benchmark,
)
from heta_notebook.cli import main
from heta_notebook.kb._answer import ChatAnswer
from heta_notebook.runner._answer_default import answer_where_expected, expects_answers
from tests._judge_server import JudgeServer, Reply


@pytest.fixture(scope="module")
def cranfield_runs():
    recipes = {
        "default": Recipe(name="default", dense=None, hybrid=None),
        "chunks": Recipe(
            name="chunks", dense=None, hybrid=None, chunking={"unit": "words", "size": 80}
        ),
    }
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(), recipes=recipes, limit=8, progress=False
    )


def test_a_retrieval_only_report_runs_no_answer_step_and_shows_no_abstention(cranfield_runs):
    report = cranfield_runs["default"]
    assert report.recipe_manifest["answer"] is None
    assert all(r.response is None or r.response.answer is None for r in report.case_results)
    assert "abstain" not in report._repr_html_().lower()
    assert "abstain" not in compare(cranfield_runs)._repr_html_().lower()
    assert "abstain" not in repr(report).lower()


def test_the_cli_summary_of_a_retrieval_run_says_nothing_about_abstaining(capsys):
    assert main(["run", "cranfield", "--recipe", "bm25", "--limit", "4"]) == 0
    assert "abstain" not in capsys.readouterr().out.lower()


def test_a_chosen_answer_step_and_benchmarks_with_answers_keep_theirs():
    plain = Recipe(name="r", dense=None, hybrid=None)
    chosen = Recipe(name="r", dense=None, hybrid=None, answer=Extractive())
    retrieval = [BenchmarkCase(case_id="1", query="q")]
    answers = [BenchmarkCase(case_id="1", query="q", expected={"answers": ["a"]})]
    unanswerable = [BenchmarkCase(case_id="1", query="q", expected={"metadata": {"abstain": True}})]
    assert answer_where_expected(plain, retrieval).answer is None
    assert answer_where_expected(chosen, retrieval).answer == Extractive()
    assert answer_where_expected(plain, answers).answer == Extractive()
    assert expects_answers(unanswerable) and not expects_answers(retrieval)
    assert answer_where_expected("a system, not a recipe", retrieval) == "a system, not a recipe"


def _answer_benchmark() -> RecordsBenchmark:
    docs = [
        {"document_id": "normandy", "text": "Normandy is a region in France."},
        {"document_id": "bread", "text": "Bread needs flour and water."},
    ]
    rows = [
        {"id": "q1", "query": "Which country is Normandy in?", "answers": ["France"]},
        {"id": "q2", "query": "What does bread need?", "answers": ["flour"]},
    ]
    return RecordsBenchmark(rows, documents=docs, manifest="answers")


@pytest.mark.parametrize("outage", ["http_500", "timeout"])
def test_a_chat_answerer_outage_is_an_error_score_not_an_abstention(outage, tmp_path, monkeypatch):
    monkeypatch.setenv("ANSWER_KEY", "sk-test-answer")
    reply = Reply(status=500, body='{"error": "upstream down"}')
    if outage == "timeout":
        reply = Reply(content=json.dumps({"answer": "France", "citations": [1]}), delay=1.0)
    with JudgeServer(default=reply) as server:
        step = ChatAnswer(
            model="answer-model",
            base_url=server.base_url,
            api_key_env="ANSWER_KEY",
            cache_dir=str(Path(tmp_path) / "cache"),
            timeout=0.2,
            max_retries=1,
            backoff=0.01,
            max_retry_after=0.05,
        )
        run = run_benchmark(
            benchmark=_answer_benchmark(),
            recipe=Recipe(name="chat", dense=None, hybrid=None, answer=step),
            evaluators=[AnswerContains()],
            progress=False,
        )
    report = run.report
    for result in report.case_results:
        (score,) = result.scores
        assert score.status == "error", score
        assert "the answer step failed" in score.metadata["error"]["message"]
        assert not result.response.abstained
    assert "abstain" not in report._repr_html_().lower()
