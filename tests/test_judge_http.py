"""LLM judges against a real HTTP server on 127.0.0.1 with scripted replies."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heta_notebook.evaluators._judge import (
    AnswerCorrectnessJudge,
    ContextRelevanceJudge,
    FaithfulnessJudge,
    JudgeNotConfiguredError,
    LLMJudge,
    judge_configured,
)
from heta_notebook.reports._store import ReportStore
from heta_notebook.schema import (
    BenchmarkCase,
    BenchmarkExpected,
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationReport,
    EvaluationScore,
    QueryResponse,
    QueryResult,
)
from tests._judge_server import JudgeServer, Reply, verdict

SECRET = "sk-test-SECRET-4f9a1c77e2"
BOUND = 20.0  # seconds: a failing retry/timeout bound fails the test instead of hanging it


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HETA_JUDGE_BASE_URL", "HETA_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HETA_JUDGE_API_KEY", SECRET)
    monkeypatch.setenv("HETA_JUDGE_CACHE_DIR", str(tmp_path / "default_cache"))


def make_judge(server: JudgeServer, tmp_path: Path, cls: type = AnswerCorrectnessJudge, **kw: Any):
    options: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "judge-model",
        "cache_dir": tmp_path / "cache",
        "timeout": 0.5,
        "max_retries": 2,
        "backoff": 0.01,
        "max_retry_after": 0.05,
    }
    return cls(**{**options, **kw})


def case(answers: tuple[str, ...] = ("Paris",), case_id: str = "c1") -> BenchmarkCase:
    return BenchmarkCase(
        case_id=case_id,
        query="What is the capital of France?",
        expected=BenchmarkExpected(answers=answers),
    )


def response(answer: str | None = "It is Paris.", texts: tuple[str, ...] = ("Paris is...",)):
    results = tuple(QueryResult(id=f"r{i}", text=t) for i, t in enumerate(texts))
    return QueryResponse(mode="full_text_search", answer=answer, results=results)


def judge_one(judge, the_case=None, the_response=None) -> EvaluationScore:
    coroutine = judge.evaluate(case=the_case or case(), response=the_response or response())
    return asyncio.run(asyncio.wait_for(coroutine, BOUND))


# --------------------------------------------------------------------------- replies


def test_clean_json_verdict_reaches_the_score(server: JudgeServer, tmp_path: Path) -> None:
    server.queue(Reply(content=verdict(0.9, "Same city as expected.")))
    score = judge_one(make_judge(server, tmp_path))
    assert score.status == "scored"
    assert (score.value, score.passed, score.reason) == (0.9, True, "Same city as expected.")
    meta = score.metadata
    assert meta["model"] == "judge-model" and meta["response_model"] == "judge-model-served"
    assert meta["prompt_version"] == "answer_correctness/v1"
    assert meta["usage"] == {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}
    assert meta["attempts"] == 1 and meta["cache_hit"] is False and meta["latency_ms"] >= 0
    assert json.loads(meta["raw_reply"])["reason"] == "Same city as expected."
    (seen,) = server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {SECRET}"
    assert seen.body["model"] == "judge-model" and seen.body["temperature"] == 0.0
    user = seen.body["messages"][1]["content"]
    assert "What is the capital of France?" in user and "It is Paris." in user and "- Paris" in user


def test_json_in_code_fence_with_prose(server: JudgeServer, tmp_path: Path) -> None:
    reply = 'My assessment:\n```json\n{"rating": 0.2, "explanation": "Wrong city."}\n```\nDone.'
    server.queue(Reply(content=reply))
    score = judge_one(make_judge(server, tmp_path))
    assert (score.value, score.passed, score.reason) == (0.2, False, "Wrong city.")
    assert score.metadata["raw_reply"] == reply


def test_garbage_reply_is_an_error_score_with_the_raw_text(
    server: JudgeServer, tmp_path: Path
) -> None:
    server.queue(Reply(content="I am not sure what you want from me."))
    judge = make_judge(server, tmp_path)
    score = judge_one(judge)
    assert score.status == "error" and score.passed is None
    assert score.metadata["error"]["error_type"] == "JudgeParseError"
    assert score.metadata["raw_reply"] == "I am not sure what you want from me."
    assert score.metadata["usage"]["total_tokens"] == 49
    judge_one(judge)  # an unusable reply is not cached: the next run asks again
    assert len(server.requests) == 2


def test_score_outside_range_is_an_error_and_score_range_normalises(
    server: JudgeServer, tmp_path: Path
) -> None:
    server.queue(Reply(content='{"score": 4, "reason": "good"}'))
    assert judge_one(make_judge(server, tmp_path)).status == "error"
    server.queue(Reply(content='{"score": 4, "reason": "good"}'))
    score = judge_one(make_judge(server, tmp_path, score_range=(1, 5), threshold=0.7))
    assert score.value == pytest.approx(0.75) and score.passed is True
    assert score.metadata["raw_score"] == 4


def test_label_output_maps_label_to_passed(server: JudgeServer, tmp_path: Path) -> None:
    server.queue(Reply(content='{"verdict": "Not Faithful", "reasoning": "Claim 2 is invented."}'))
    judge = make_judge(
        server,
        tmp_path,
        FaithfulnessJudge,
        output="label",
        labels={"faithful": True, "not_faithful": False},
    )
    score = judge_one(judge)
    assert (score.value, score.passed) == ("not_faithful", False)
    assert score.reason == "Claim 2 is invented." and score.metadata["label"] == "not_faithful"


# --------------------------------------------------------------------------- retries and timeouts


def test_429_with_retry_after_then_success(server: JudgeServer, tmp_path: Path) -> None:
    server.queue(
        Reply(status=429, headers={"Retry-After": "3600"}, body='{"error": "slow down"}'),
        Reply(content=verdict(1.0)),
    )
    score = judge_one(make_judge(server, tmp_path))  # Retry-After is capped at 0.05 s
    assert score.status == "scored" and score.metadata["attempts"] == 2
    assert len(server.requests) == 2


def test_500_then_success(server: JudgeServer, tmp_path: Path) -> None:
    server.queue(Reply(status=500, body="internal error"), Reply(content=verdict(0.0, "No.")))
    score = judge_one(make_judge(server, tmp_path))
    assert (score.status, score.value, score.passed) == ("scored", 0.0, False)
    assert score.metadata["attempts"] == 2


def test_persistent_5xx_gives_an_error_after_the_retries(
    server: JudgeServer, tmp_path: Path
) -> None:
    server.default = Reply(status=503, body="overloaded")
    score = judge_one(make_judge(server, tmp_path, max_retries=2))
    assert score.status == "error" and score.metadata["attempts"] == 3
    assert "HTTP 503" in score.metadata["error"]["message"]
    assert len(server.requests) == 3


def test_reply_slower_than_the_timeout_is_an_error_after_retries(
    server: JudgeServer, tmp_path: Path
) -> None:
    server.default = Reply(content=verdict(), delay=1.5)
    score = judge_one(make_judge(server, tmp_path, timeout=0.2, max_retries=1))
    assert score.status == "error"
    assert score.metadata["error"]["error_type"] == "JudgeRequestError"
    assert "no reply within 0.2 s" in score.metadata["error"]["message"]
    assert score.metadata["attempts"] == 2
    # the server thread may read the last request after the client gave up on it
    assert server.seen_within(2) == 2


def test_client_errors_are_not_retried_and_an_echoed_key_is_redacted(
    server: JudgeServer, tmp_path: Path
) -> None:
    server.default = Reply(status=401, body=json.dumps({"error": f"bad key {SECRET}"}))
    score = judge_one(make_judge(server, tmp_path))
    assert score.status == "error" and score.metadata["attempts"] == 1
    assert "HTTP 401" in score.metadata["error"]["message"]
    assert SECRET not in score.model_dump_json() and "***redacted:" in score.model_dump_json()
    assert len(server.requests) == 1


def test_concurrency_limit_is_shared_by_all_cases(server: JudgeServer, tmp_path: Path) -> None:
    server.default = Reply(content=verdict(), delay=0.05)
    # a timeout far past the reply delay: a loaded box must not turn the count into a retry
    judge = make_judge(server, tmp_path, max_concurrency=2, use_cache=False, timeout=10)

    async def run() -> list[EvaluationScore]:
        jobs = [
            judge.evaluate(case=case(case_id=f"c{i}", answers=(f"a{i}",)), response=response())
            for i in range(6)
        ]
        return await asyncio.gather(*jobs)

    scores = asyncio.run(asyncio.wait_for(run(), BOUND))
    assert all(s.status == "scored" for s in scores)
    assert len(server.requests) == 6 and 1 <= server.max_in_flight <= 2


def test_one_judge_works_across_event_loops_and_as_a_sync_call(
    server: JudgeServer, tmp_path: Path
) -> None:
    judge = make_judge(server, tmp_path, use_cache=False)
    assert judge_one(judge).status == "scored"
    assert judge_one(judge).status == "scored"  # a second asyncio.run: a new loop

    async def inside_a_running_loop() -> dict[str, Any]:
        return judge({"answer": "Paris"}, {"query": "Capital?"}, {"answer": "Paris"})

    result = asyncio.run(inside_a_running_loop())
    assert result["score"] == 1.0 and result["reason"] == "Matches the expected answer."
    plain = judge({"answer": "Paris"}, {"query": "Capital?"}, {"answers": ["Paris"]})
    assert plain["passed"] is True and len(server.requests) == 4


# --------------------------------------------------------------------------- skipping


@pytest.mark.parametrize(
    ("cls", "the_case", "the_response", "reason"),
    [
        (AnswerCorrectnessJudge, case(answers=()), response(), "no expected answer"),
        (AnswerCorrectnessJudge, case(), response(answer=None), "no answer"),
        (FaithfulnessJudge, case(), response(texts=()), "retrieved no results"),
        (FaithfulnessJudge, case(), response(answer="  "), "no answer"),
        (ContextRelevanceJudge, case(), response(answer=None, texts=()), "retrieved no results"),
    ],
)
def test_missing_inputs_are_skipped_without_a_request(
    server: JudgeServer, tmp_path: Path, cls, the_case, the_response, reason: str
) -> None:
    score = judge_one(make_judge(server, tmp_path, cls), the_case, the_response)
    assert score.status == "skipped" and reason in score.metadata["skip_reason"]
    assert server.requests == []


def test_context_relevance_needs_no_answer(server: JudgeServer, tmp_path: Path) -> None:
    score = judge_one(make_judge(server, tmp_path, ContextRelevanceJudge), case(), response(None))
    assert score.status == "scored"
    assert "Paris is..." in server.requests[0].body["messages"][1]["content"]


# --------------------------------------------------------------------------- cache and secrets


def test_cache_prevents_a_second_request(server: JudgeServer, tmp_path: Path) -> None:
    server.queue(Reply(content=verdict(0.7, "Close enough.")))
    first = judge_one(make_judge(server, tmp_path))
    again = judge_one(make_judge(server, tmp_path))  # a new judge object: a notebook re-run
    assert len(server.requests) == 1
    assert again.metadata["cache_hit"] is True and again.metadata["attempts"] == 0
    assert (again.value, again.passed, again.reason) == (first.value, first.passed, first.reason)
    assert again.metadata["usage"] == first.metadata["usage"]

    judge_one(make_judge(server, tmp_path, refresh=True))
    assert len(server.requests) == 2
    judge_one(make_judge(server, tmp_path, use_cache=False, cache_dir=tmp_path / "nocache"))
    assert len(server.requests) == 3 and not (tmp_path / "nocache").exists()
    other = response(answer="It is Lyon.")
    judge_one(make_judge(server, tmp_path), case(), other)  # new inputs: a new request
    assert len(server.requests) == 4


def test_cached_judgments_need_no_api_key(
    server: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge_one(make_judge(server, tmp_path))
    monkeypatch.delenv("HETA_JUDGE_API_KEY")
    score = judge_one(make_judge(server, tmp_path, api_key_env="MY_JUDGE_KEY"))
    assert score.metadata["cache_hit"] is True
    fresh = judge_one(
        make_judge(server, tmp_path, api_key_env="MY_JUDGE_KEY"), case(answers=("x",))
    )
    assert fresh.status == "error" and "MY_JUDGE_KEY" in fresh.metadata["error"]["message"]
    assert len(server.requests) == 1


def test_api_key_never_reaches_a_saved_file(server: JudgeServer, tmp_path: Path) -> None:
    store = ReportStore(tmp_path / "store")
    server.queue(
        Reply(content=verdict(1.0, "Right.")),
        Reply(status=400, body=f'{{"error": "key {SECRET} rejected"}}'),
        Reply(content="garbage"),
    )
    judge = make_judge(server, tmp_path, store=store, cache_dir=None)
    scores = [judge_one(judge, case(answers=(a,), case_id=a)) for a in ("Paris", "x", "y")]
    assert [s.status for s in scores] == ["scored", "error", "error"]
    results = tuple(
        EvaluationCaseResult(
            case_id=f"c{i}", query="q", query_mode="m", scores=(s,), response=response()
        )
        for i, s in enumerate(scores)
    )
    report = EvaluationReport(
        report_id="judge-run",
        benchmark=BenchmarkManifest(name="tiny"),
        knowledge_base_name="kb",
        case_results=results,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:01Z",
        metadata={"evaluators": [judge.manifest()]},
        recipe_manifest={"judge": judge.manifest()},
    )
    store.save(report)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any("_heta/cache/judge" in p.as_posix() for p in files)
    assert any(p.name in {"report.json", "header.json"} for p in files)  # heta or columnar
    for path in files:
        assert SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    assert SECRET not in repr(judge) and SECRET not in json.dumps(judge.manifest())
    assert SECRET not in json.dumps(vars(judge), default=repr)


# --------------------------------------------------------------------------- configuration


def test_configuration_from_environment(
    monkeypatch: pytest.MonkeyPatch, server: JudgeServer, tmp_path: Path
) -> None:
    monkeypatch.delenv("HETA_JUDGE_API_KEY")
    assert judge_configured() is False
    with pytest.raises(JudgeNotConfiguredError, match="HETA_JUDGE_API_KEY"):
        AnswerCorrectnessJudge.from_env()
    # the default OpenAI endpoint without a key: an error score, no request anywhere
    score = judge_one(AnswerCorrectnessJudge(cache_dir=tmp_path / "c"))
    assert score.status == "error" and "no API key" in score.metadata["error"]["message"]

    monkeypatch.setenv("HETA_JUDGE_BASE_URL", server.base_url)  # a local server needs no key
    monkeypatch.setenv("HETA_JUDGE_MODEL", "local-model")
    assert judge_configured() is True
    judge = AnswerCorrectnessJudge.from_env(cache_dir=tmp_path / "c")
    assert judge.model == "local-model" and judge.endpoint == f"{server.base_url}/chat/completions"
    assert judge_one(judge).status == "scored"
    assert "authorization" not in server.requests[0].headers

    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    judge_one(LLMJudge.from_env("custom", prompt="Rate {answer}", cache_dir=tmp_path / "c"))
    assert server.requests[1].headers["authorization"] == "Bearer sk-openai"


def test_manifest_redacts_credentials_in_the_base_url() -> None:
    judge = AnswerCorrectnessJudge(
        base_url="https://user:pw@example.com/v1?key=abc", use_cache=False
    )
    manifest = judge.manifest()
    assert manifest["base_url"] == "https://example.com/v1"
    assert manifest["api_key_env"] == ["HETA_JUDGE_API_KEY", "OPENAI_API_KEY"]
    assert "pw" not in repr(judge) and "abc" not in repr(judge)


def test_retry_after_accepts_an_http_date_and_is_capped() -> None:
    import email.utils
    from datetime import datetime, timedelta, timezone

    import httpx

    from heta_notebook.evaluators._judge import _retry_after

    def wait(value: str | None, cap: float = 30.0) -> float | None:
        headers = {"Retry-After": value} if value is not None else {}
        return _retry_after(httpx.Response(429, headers=headers), cap)

    later = datetime.now(timezone.utc) + timedelta(seconds=20)
    assert 10 < wait(email.utils.format_datetime(later, usegmt=True)) <= 20
    assert wait("2.5") == 2.5 and wait("9999") == 30.0 and wait("-4") == 0.0
    assert wait(None) is None and wait("soon") is None


def test_a_cached_reply_that_no_longer_fits_is_asked_again(
    server: JudgeServer, tmp_path: Path
) -> None:
    server.queue(Reply(content='{"score": 1, "reason": "fine"}'))
    first = judge_one(make_judge(server, tmp_path, output_instructions=""))
    server.queue(Reply(content='{"label": "good", "reason": "fine"}'))
    labelled = make_judge(
        server, tmp_path, output="label", labels={"good": True}, output_instructions=""
    )
    score = judge_one(labelled)  # same messages, so same key; the cached score has no label
    assert score.metadata["cache_key"] == first.metadata["cache_key"]
    assert (score.value, score.metadata["cache_hit"], len(server.requests)) == ("good", False, 2)


def test_identical_requests_in_flight_are_sent_once(server: JudgeServer, tmp_path: Path) -> None:
    server.default = Reply(content=verdict(0.8, "Shared."), delay=0.1)
    # a timeout far past the reply delay: a loaded box must not turn the count into a retry
    judge = make_judge(server, tmp_path, refresh=True, timeout=10)

    async def run() -> list[EvaluationScore]:
        same = [judge.evaluate(case=case(), response=response()) for _ in range(3)]
        return await asyncio.gather(*same)

    scores = asyncio.run(asyncio.wait_for(run(), BOUND))
    assert len(server.requests) == 1
    assert [s.reason for s in scores] == ["Shared."] * 3
    assert sorted(s.metadata["cache_hit"] for s in scores) == [False, True, True]


def test_an_unwritable_cache_costs_the_cache_not_the_judgment(
    server: JudgeServer, tmp_path: Path
) -> None:
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the cache folder should be", encoding="utf-8")
    score = judge_one(make_judge(server, tmp_path, cache_dir=blocker))
    assert score.status == "scored" and "cache_error" in score.metadata
