"""One redaction policy: URL credentials and every encoding of a key, in every stored message."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from heta_notebook import (
    AnswerCorrectnessJudge,
    FaithfulnessJudge,
    RecordsBenchmark,
    ReportStore,
    run_benchmark,
)
from heta_notebook._util.redaction import (
    is_redacted,
    is_secret_key,
    mark,
    redact,
    redact_text,
    url_secrets,
)
from heta_notebook.integrations.heta._recipes import redact_secrets
from heta_notebook.kb._recipe import Dense, Recipe
from heta_notebook.schema import EvaluationError, EvaluationScore
from tests._judge_server import JudgeServer, Reply

KEY = "sk-a/b+c=d-SECRET-7731"
PASSWORD = "pa55-w0rd-XYZ"
QUERY_TOKEN = "qtok-991-SECRET"


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "x-api-key",
        "OPENAI_API_KEY",
        "password",
        "token",
        "access_token",
        "secret_key",
        "Authorization",
        "client_secret",
    ],
)
def test_secret_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key", ["max_tokens", "token_start", "num_tokens", "key_column", "api_version", "tokenizer"]
)
def test_not_secret_keys(key):
    assert not is_secret_key(key)


def test_kb_recipe_and_heta_recipe_agree():
    settings = {"max_tokens": 512, "api_key": "abcd1234", "nested": [{"token": "t0k3n-1"}]}
    ours, theirs = redact(settings), redact_secrets(settings)
    assert (
        ours
        == theirs
        == {"max_tokens": 512, "api_key": mark("abcd1234"), "nested": [{"token": mark("t0k3n-1")}]}
    )
    manifest = Recipe(
        name="r", dense=Dense(options={"max_tokens": 7, "api_key": "abcd1234"})
    ).manifest()
    text = json.dumps(manifest)
    assert "abcd1234" not in text and '"max_tokens": 7' in text


@pytest.mark.parametrize(
    "text",
    [
        f"GET https://bob:{PASSWORD}@api.example.com/v1 failed",
        f"https://api.example.com/v1/chat?api-version=2024&api-key={QUERY_TOKEN}&x=1",
        f"bad key {quote(KEY, safe='')}",
        f"bad key {quote_plus(KEY)}",
        "bad key " + re.sub("%[0-9A-F]{2}", lambda m: m[0].lower(), quote(KEY, safe="")),
        f'{{"error": {json.dumps(KEY)}}}',
    ],
)
def test_redact_text_hides_every_form(text):
    clean = redact_text(text, [KEY])
    for secret in (PASSWORD, QUERY_TOKEN, KEY, quote(KEY, safe=""), quote_plus(KEY)):
        assert secret not in clean
    assert is_redacted(clean)
    assert "api-version=2024" in redact_text(f"https://h/v?api-version=2024&api-key={QUERY_TOKEN}")


def test_url_secrets_lists_what_a_url_carries():
    url = f"https://bob:{PASSWORD}@h/v1?api-key={QUERY_TOKEN}&api-version=1"
    basic = base64.b64encode(f"bob:{PASSWORD}".encode()).decode()  # what httpx sends
    assert set(url_secrets(url)) == {PASSWORD, "bob", QUERY_TOKEN, basic}


def test_error_records_redact_url_credentials():
    exc = RuntimeError(f"connect to https://bob:{PASSWORD}@h/v1?token={QUERY_TOKEN} refused")
    for record in (EvaluationScore.error_score("e", exc), EvaluationError.from_exception(exc)):
        text = record.model_dump_json()
        assert PASSWORD not in text and QUERY_TOKEN not in text and "refused" in text


class _Kb:
    async def query(self, text, *, mode, top_k, options=None):
        from heta_notebook import QueryResponse, QueryResult

        return QueryResponse(
            mode=mode, answer="Paris", results=[QueryResult(id="r", text="Paris is...")]
        )


def test_a_judge_run_stores_no_credential_anywhere(tmp_path, monkeypatch):
    monkeypatch.setenv("HETA_JUDGE_API_KEY", KEY)
    monkeypatch.setenv("HETA_JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    echo = f"bad key {quote(KEY, safe='')} / {quote_plus(KEY)} / {KEY} / {PASSWORD}"
    with JudgeServer(default=Reply(status=401, body=json.dumps({"error": echo}))) as server:
        host = server.base_url.removeprefix("http://")
        judges = [  # credentials in the user info, and in the query string
            FaithfulnessJudge(base_url=f"http://bob:{PASSWORD}@{host}", model="m", max_retries=0),
            AnswerCorrectnessJudge(
                base_url=f"http://{host}/chat/completions?api-key={QUERY_TOKEN}",
                model="m",
                max_retries=0,
            ),
        ]
        bench = RecordsBenchmark([{"id": "c1", "query": "capital of France?", "answer": "Paris"}])
        store = ReportStore(tmp_path / "store")
        run_benchmark(
            benchmark=bench, recipe=_Kb(), query_modes=["m"], evaluators=judges, store=store
        )
    stored = b"".join(p.read_bytes() for p in Path(tmp_path).rglob("*") if p.is_file())
    assert b"answered HTTP 401" in stored and b"answered HTTP 404" in stored  # errors are kept
    for secret in (KEY, quote(KEY, safe=""), quote_plus(KEY), PASSWORD, QUERY_TOKEN):
        assert secret.encode() not in stored, secret


_SOURCES = [
    {"benchmark_document_id": "d1", "document_id": "d1"},
    {"page": 3, "score_detail": [0.5, None, True], "nested": {"title": "Basic facts"}},
    {"url": "https://bob:pw-123456@h/x"},
    {"url": "https://h/doc?access_token=tok-123456"},
    {"api_key": "sk-1234567890"},
    {"api_key": ""},
    {"token": None},
    {"note": "Authorization: Bearer abcdef123456"},
    {"pair": '"x-api-key": "v-1234567"'},
    {"enc": "https%3A%2F%2Fu%3Apass1234%40h"},
    {"tuple": ("a", "b")},
    {"text": "plain words, no marks"},
]


@pytest.mark.parametrize("source", _SOURCES)
def test_a_response_comes_back_as_itself_exactly_when_redaction_changes_nothing(source):
    """The quick check of a system's reply (no copy) and the full pass agree: a clean reply is
    returned as it is, one with a credential in a result's source or metadata is redacted."""
    from heta_notebook.schema import QueryResponse, QueryResult
    from heta_notebook.schema._records import _RESULT_DATA, _redacted_outside
    from heta_notebook.schema._redact import redacted_response

    plain = QueryResult(id="a", text="t", score=1.0, source={"document_id": "d0"})
    for where in ("source", "metadata"):
        response = QueryResponse(mode="m", results=(plain, QueryResult(id="b", **{where: source})))
        out = redacted_response(response)
        dumped = [r.model_dump(mode="json") for r in response.results]
        changed = any(_redacted_outside(r, _RESULT_DATA) != r for r in dumped)
        assert (out is not response) == changed
        if changed:
            assert out.results[1].model_dump(mode="json") == _redacted_outside(
                dumped[1], _RESULT_DATA
            )


def test_a_reports_metadata_is_redacted_unless_its_run_redacted_it():
    """The run hands its report metadata it redacted itself (``METADATA_REDACTED``, by
    identity); any other report, a loaded file or an equal-looking context, is redacted."""
    from heta_notebook.schema._records import METADATA_REDACTED, EvaluationReport

    fields = dict(
        report_id="r",
        benchmark={"name": "b"},
        knowledge_base_name="kb",
        started_at="t0",
        finished_at="t1",
        metadata={"config": {"api_key": KEY}, "note": f"https://bob:{PASSWORD}@h/x"},
    )
    shown = (
        EvaluationReport(**fields),
        EvaluationReport.model_validate(fields, context={"metadata_redacted": True}),
        EvaluationReport.model_validate_json(json.dumps(fields)),
        EvaluationReport.load(json.loads(EvaluationReport(**fields).model_dump_json())),
    )
    for report in shown:
        assert KEY not in json.dumps(report.metadata)
        assert PASSWORD not in json.dumps(report.metadata)
    trusted = EvaluationReport.model_validate(fields, context=METADATA_REDACTED)
    assert trusted.metadata == fields["metadata"]  # the run's own: not walked a second time


@pytest.mark.parametrize(
    "text",
    [
        f"Authorization: Bearer {KEY}",
        f"authorization=Bearer%20{quote(KEY, safe='')}&x=1",
        f"echo: bearer {quote_plus(KEY)} (rejected)",
        f"BEARER {KEY.lower()}",
    ],
)
def test_a_bearer_token_with_an_equals_sign_inside_is_hidden_whole(text):
    """No secret declared: the header's form alone hides the token, not only up to its "="."""
    clean = redact_text(text)
    assert "secret-7731" not in clean.lower() and is_redacted(clean)
