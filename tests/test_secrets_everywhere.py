"""Secrets never stored: a run with judges and a chat answerer whose URLs carry credentials in
every form, against a loopback endpoint that echoes its Authorization header and URL back (in
answers, in reasons and in errors), leaves no credential in any file it writes: report,
summary, checkpoint, judge and answer caches, the KB cache's kb.json (issue 27, part 5)."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, quote_plus

import pytest

from heta_notebook import (
    AnswerCorrectnessJudge,
    EvaluationReport,
    FaithfulnessJudge,
    Recipe,
    RecordsBenchmark,
    ReportStore,
    run_benchmark,
)
from heta_notebook._util.redaction import redact_text
from heta_notebook.kb._answer import ChatAnswer

API_KEY = "sk-live/Key+77=SECRET"  # a key with characters that percent-encode
JUDGE_PASS, ANSWER_PASS = "jpass-SECRET-4411", "apass-SECRET-5522"
QUERY_KEY, QUERY_TOKEN = "qkey-SECRET-6633", "qtok-SECRET-7744"
SECRETS = {
    "judge password": JUDGE_PASS,
    "answer password": ANSWER_PASS,
    "?key=": QUERY_KEY,
    "?api-key=": QUERY_TOKEN,
    "API key": API_KEY,
    "Basic (judge)": base64.b64encode(f"judge:{JUDGE_PASS}".encode()).decode(),
    "Basic (answer)": base64.b64encode(f"bob:{ANSWER_PASS}".encode()).decode(),
}


class _Echo(BaseHTTPRequestHandler):
    """Answers every chat request with its own Authorization header and URL in the reply
    (paths under /fail/ answer HTTP 401 with the same echo)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - silence
        return

    def do_POST(self):  # noqa: N802 - http.server naming
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization", "")
        echo = f"auth={auth} url={self.path} quoted={quote(auth)} plus={quote_plus(auth)}"
        if "/fail/" in self.path:
            status, body = 401, json.dumps({"error": f"denied: {echo}"})
        else:
            content = {
                "answer": f"Paris [1] ({echo})",
                "citations": [1],
                "score": 1.0,
                "passed": True,
                "reason": f"grounded; {echo}",
            }
            body = json.dumps(
                {
                    "model": "m",
                    "choices": [{"message": {"role": "assistant", "content": json.dumps(content)}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            )
        payload = body.encode()
        self.send_response(status if "/fail/" in self.path else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def echo_host():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"{host}:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _forms(secret: str) -> list[str]:
    return [secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]]


def test_a_run_writes_no_credential_in_any_file(tmp_path, monkeypatch, echo_host):
    monkeypatch.setenv("HETA_TEST_JUDGE_KEY", API_KEY)
    for name in ("HETA_JUDGE_API_KEY", "HETA_ANSWER_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)  # no key: the user info is the credential
    monkeypatch.setenv("HETA_JUDGE_CACHE_DIR", str(tmp_path / "judge-cache"))
    judges = [
        # user info, no key: the client sends Basic base64(user:pass), echoed back
        FaithfulnessJudge(base_url=f"http://judge:{JUDGE_PASS}@{echo_host}/v1", model="m"),
        # a key (Bearer, echoed) and ?key= in the URL (echoed)
        AnswerCorrectnessJudge(
            base_url=f"http://{echo_host}/v1/chat/completions?key={QUERY_KEY}",
            model="m",
            api_key_env="HETA_TEST_JUDGE_KEY",
        ),
        # an endpoint that refuses, echoing everything in its error body
        AnswerCorrectnessJudge(
            name="refused",
            base_url=f"http://judge:{JUDGE_PASS}@{echo_host}/fail/chat/completions?api-key={QUERY_TOKEN}",
            model="m",
            api_key_env="HETA_TEST_JUDGE_KEY",
            max_retries=0,
        ),
    ]
    answer = ChatAnswer(
        model="m",
        base_url=f"http://bob:{ANSWER_PASS}@{echo_host}/v1?api-key={QUERY_TOKEN}",
        cache_dir=str(tmp_path / "answer-cache"),
        max_retries=0,
    )
    bench = RecordsBenchmark(
        [{"id": f"c{i}", "query": "capital of France?", "answer": "Paris"} for i in range(3)],
        documents=[{"id": "d1", "text": "Paris is the capital of France."}],
    )
    result = run_benchmark(
        benchmark=bench,
        recipe=Recipe(name="chat", dense=None, hybrid=None, answer=answer),
        evaluators=judges,
        store=ReportStore(tmp_path / "store"),
        progress=False,
    )
    report = result.report
    reasons = [s.metadata for r in report.case_results for s in r.scores]
    assert any("grounded" in json.dumps(m) for m in reasons)  # the echoes were scored...
    assert any("401" in json.dumps(m) for m in reasons)  # ...and the refusals recorded
    report.save(tmp_path / "export" / "report.json")  # heta's layout too
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"header.json", "summary.json", "kb.json", "report.json"} <= names, names
    assert any(p.suffix == ".json" and "cache" in str(p.parent) for p in files)
    for path in files:
        data = path.read_bytes()
        for what, secret in SECRETS.items():
            for form in _forms(secret):
                assert form.encode() not in data, f"{what} ({form}) stored in {path}"


@pytest.mark.parametrize(
    "text",
    [
        f"https://bob:{ANSWER_PASS}@h/v1",
        f"https://h/v1?key={QUERY_KEY}&x=1",
        f"https://h/v1?api-key={QUERY_TOKEN}",
        f"Authorization: Basic {SECRETS['Basic (answer)']}",
        "Authorization: Bearer sk-live-77xYz",
        f"next={quote(f'https://bob:{ANSWER_PASS}@h/v1?key={QUERY_KEY}', safe='')}",
        f"q=a%26api%2Dkey%3D{QUERY_TOKEN}",
    ],
)
def test_every_form_is_hidden_by_the_one_policy(text):
    clean = redact_text(text)
    for secret in (ANSWER_PASS, QUERY_KEY, QUERY_TOKEN, SECRETS["Basic (answer)"], "sk-live-77xYz"):
        assert secret not in clean
    assert "***redacted:" in clean


class _SignedUrlKb:
    """A system under test whose results carry signed URLs and whose errors echo a token."""

    async def query(self, text, *, mode, top_k, options=None):
        from heta_notebook import QueryResponse, QueryResult

        if text.endswith("3"):
            raise RuntimeError(f"GET https://h/doc?access_token={QUERY_TOKEN} failed")
        signed = f"https://bucket.s3/doc?X-Amz-Signature={QUERY_KEY}&X-Amz-Date=1"
        return QueryResponse(
            mode=mode,
            answer="Paris",
            results=[QueryResult(id="r", text="Paris.", source={"url": signed})],
            metadata={"fetched": f"https://bob:{ANSWER_PASS}@h/x"},
        )


def test_what_a_system_returns_is_redacted_in_checkpoints_and_reports(tmp_path):
    """Sources, metadata and errors from the system under test: kept in the report, with
    their credentials hidden, in the checkpoint and in the saved report alike."""
    bench = RecordsBenchmark(
        [{"id": f"c{i}", "query": f"q{i}", "answer": "Paris"} for i in range(4)]
    )
    store = ReportStore(tmp_path / "store")
    result = run_benchmark(
        benchmark=bench, recipe=_SignedUrlKb(), query_modes=["m"], store=store, progress=False
    )
    folder = store.report_dir(result.report.knowledge_base_name, result.report.report_id)
    saved = store.load(result.report.knowledge_base_name, result.report.report_id)
    hit = next(r for r in saved.case_results if r.response and r.response.results)
    assert hit.response.results[0].source["url"].startswith("https://bucket.s3/doc?X-Amz-")
    assert "X-Amz-Date=1" in hit.response.results[0].source["url"]
    with store.run("kb", "checkpoint-only") as run:  # a checkpoint of the same records
        run.append(result.report.case_results)
        stream = run.stream_path
    # in memory they are redacted too, where they enter the report (issue 40)
    assert not any(QUERY_KEY in r.model_dump_json() for r in result.report.case_results)
    heta_json = result.report.save(tmp_path / "report.json")  # heta-framework's layout
    for path in [stream, heta_json, *(p for p in folder.rglob("*") if p.is_file())]:
        for secret in (QUERY_KEY, QUERY_TOKEN, ANSWER_PASS):
            assert secret.encode() not in path.read_bytes(), (secret, path)
    # one policy: both layouts keep and hide the same things
    from_json = EvaluationReport.load(heta_json)
    for mine, theirs in zip(from_json.case_results, saved.case_results, strict=True):
        assert mine.model_dump() == theirs.model_dump()


def test_a_reason_from_a_user_evaluator_is_redacted_too():
    from heta_notebook.evaluators._decorators import coerce_score

    score = coerce_score({"score": 1, "reason": f"fetched https://bob:{ANSWER_PASS}@h/x"}, "mine")
    assert ANSWER_PASS not in score.model_dump_json() and "fetched" in score.metadata["reason"]


def test_ordinary_text_is_left_alone():
    ordinary = ("Basic authentication failed", "basic Navier-Stokes flows", "Bearer token missing")
    for text in (*ordinary, "basic Theory of Flight", "max_tokens=5&x=1"):
        assert redact_text(text) == text
