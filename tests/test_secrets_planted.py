"""A secrets test that cannot miss a file (issue 40): known secrets planted everywhere a user
puts them (``HttpSystem`` URL, request template, headers, cookies, ``auth`` and ``secrets=``;
judge URLs and the environment; a function system's result metadata and errors; error replies
of a real loopback server echoing every header, the URL and the body), then a run, saves,
HTML exports, both kinds of baseline and the CLI. Every file the project wrote under the
test's temp folder, every HTML view (in memory and reloaded), the CLI output and the warnings
hold 0 of them, in any form."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import sys
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, quote_plus

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from heta_notebook import (
    AnswerCorrectnessJudge,
    EvaluationReport,
    FaithfulnessJudge,
    HttpSystem,
    QueryResponse,
    QueryResult,
    RecordsBenchmark,
    ReportStore,
    compare,
    run_benchmark,
)
from heta_notebook._util.redaction import mark
from heta_notebook.cli import main
from heta_notebook.testing.pytest_plugin import Baseline

PLANTED = {
    "url ?token=": "urltok-PLANT-1001",
    "url &sig=": "urlsig-PLANT-1002",
    "url password": "urlpass-PLANT-1003",
    "template api_key": "tplapikey-PLANT-1004",
    "template key": "tplkey-PLANT-1005",
    "Ocp-Apim-Subscription-Key": "ocp-PLANT-1006",
    "X-Api-Key": "xapi-PLANT-1007",
    "cookie": "cookie-PLANT-1008",
    "auth password": "authpass-PLANT-1009",
    "declared": "declared-PLANT-1010",
    "judge password": "judgepass-PLANT-1011",
    "judge key (env)": "sk-envkey/PLANT+1012=",
    "function metadata api_key": "fnkey-PLANT-1013",
    "function metadata token": "fntok-PLANT-1014",
    "function error bearer": "fnbearer9PLANT1015",
    "object manifest key": "objkey-PLANT-1016",
}
_BASICS = {  # what HTTP clients build from user:password
    "Basic (url)": ("svc", PLANTED["url password"]),
    "Basic (auth)": ("me", PLANTED["auth password"]),
    "Basic (judge)": ("judge", PLANTED["judge password"]),
}
SECRETS = {
    **PLANTED,
    **{k: base64.b64encode(f"{u}:{p}".encode()).decode() for k, (u, p) in _BASICS.items()},
}


def forms(secret: str) -> set[str]:
    return {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}


def leaks(text: str) -> list[str]:
    """The planted secrets (by name) found in ``text`` in any form."""
    return [name for name, s in SECRETS.items() if any(f in text for f in forms(s))]


class _Service(BaseHTTPRequestHandler):
    """A search service and chat endpoint that echoes what it was sent: headers, URL and
    body in its 500 replies (queries containing "fail"), the declared secret in its results'
    metadata and answer, the Authorization header in the judge's reason."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - silence
        return

    def do_POST(self):  # noqa: N802 - http.server naming
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        echo = {"headers": dict(self.headers), "path": self.path, "body": raw.decode()}
        if "/chat/completions" in self.path:
            content = {
                "answer": "Paris",
                "score": 1.0,
                "passed": True,
                "reason": f"grounded; saw {self.headers.get('Authorization')} at {self.path}",
            }
            reply = {
                "model": "m",
                "choices": [{"message": {"role": "assistant", "content": json.dumps(content)}}],
            }
            return self._send(200, reply)
        body = json.loads(raw or b"{}")
        if "fail" in body.get("q", ""):
            return self._send(500, {"error": "backend down", "request": echo})
        hit = {
            "doc_id": "d1",
            "content": "Paris is the capital of France.",
            "score": 1.0,
            "metadata": {"debug": f"served with {PLANTED['declared']}", "via": self.path},
        }
        return self._send(200, {"results": [hit], "answer": f"Paris ({PLANTED['declared']})"})

    def _send(self, status, data):
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _service(host: str) -> HttpSystem:
    return HttpSystem(
        f"http://svc:{PLANTED['url password']}@{host}/search"
        f"?token={PLANTED['url ?token=']}&sig={PLANTED['url &sig=']}&v=2",
        body={
            "q": "{query}",
            "k": "{top_k}",
            "api_key": PLANTED["template api_key"],
            "key": PLANTED["template key"],
        },
        headers={
            "Ocp-Apim-Subscription-Key": PLANTED["Ocp-Apim-Subscription-Key"],
            "X-Api-Key": PLANTED["X-Api-Key"],
            "Accept": "application/json",
        },
        cookies={"session": PLANTED["cookie"]},
        auth=("me", PLANTED["auth password"]),
        secrets=[PLANTED["declared"]],
        fields={"id": "doc_id", "text": "content"},
        name="service",
        retries=0,
    )


def _function(text: str) -> QueryResponse:
    if "fail" in text:
        raise RuntimeError(
            f"upstream refused: Authorization: Bearer {PLANTED['function error bearer']}"
        )
    meta = {
        "api_key": PLANTED["function metadata api_key"],
        "link": f"https://cdn.example/d1?access_token={PLANTED['function metadata token']}",
    }
    return QueryResponse(
        mode="default",
        answer="Paris",
        results=[QueryResult(id="d1", text="Paris is the capital of France.", metadata=meta)],
    )


class _ObjectSystem:
    """A user's own object system whose ``manifest()`` holds a bare ``key``: stored under the
    same configuration policy as ``HttpSystem``'s."""

    def manifest(self) -> dict:
        return {"index": "bm25", "body": {"key": PLANTED["object manifest key"]}}

    def query(self, text: str) -> list[dict]:
        return [{"id": "d1", "text": "Paris is the capital of France."}]


class _Stopping:
    """The planted service, stopped (as by the notebook's stop button) after ``after`` queries:
    its run is left partial, so its checkpoint files stay on disk to be grepped."""

    def __init__(self, service: HttpSystem, after: int) -> None:
        self.service, self.after, self.calls = service, after, 0

    def manifest(self) -> dict:
        return self.service.manifest()

    async def query(self, text: str) -> dict:
        self.calls += 1
        if self.calls > self.after:
            raise KeyboardInterrupt
        return await self.service.query(text)


def _partial_bench() -> RecordsBenchmark:
    """12 cases, one failing (its 500 reply echoes every header): a run past the dry run."""
    cases = [
        {"id": f"c{i}", "query": "fail now" if i == 3 else "capital of France?", "answer": "Paris"}
        for i in range(12)
    ]
    documents = [{"id": "d1", "text": "Paris is the capital of France."}]
    return RecordsBenchmark([{**c, "evidence": ["d1"]} for c in cases], documents=documents)


def _file_text(path) -> str:
    """A written file as text: its bytes, and for Parquet and Arrow files (compressed pages)
    also their rows decoded, so a secret in a compressed column cannot hide from the grep."""
    text = path.read_bytes().decode("utf-8", "replace")
    if path.suffix == ".parquet":
        rows = pq.read_table(path).to_pylist()
    elif path.suffix == ".arrows":
        with pa.ipc.open_stream(path) as reader:
            rows = reader.read_all().to_pylist()
    else:
        return text
    return text + json.dumps(rows, ensure_ascii=False, default=str)


BENCH_MODULE = """
from heta_notebook import HttpSystem, RecordsBenchmark
BENCH = RecordsBenchmark(
    [{"id": f"c{i}", "query": "fail now" if i == 3 else "capital of France?", "answer": "Paris",
      "evidence": ["d1"]} for i in range(4)],
    documents=[{"id": "d1", "text": "Paris is the capital of France."}],
)
"""


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """One run with every secret planted, saved, exported and listed; what it wrote and showed."""
    root = tmp_path_factory.mktemp("planted")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Service)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    host = f"127.0.0.1:{server.server_address[1]}"
    patch = pytest.MonkeyPatch()
    patch.setenv("PLANTED_JUDGE_KEY", PLANTED["judge key (env)"])
    patch.setenv("HETA_JUDGE_CACHE_DIR", str(root / "judge-cache"))
    (root / "mods").mkdir()
    (root / "mods" / "planted_bench.py").write_text(BENCH_MODULE)
    (root / "mods" / "planted_system.py").write_text(
        f"from tests.test_secrets_planted import _service\nSERVICE = _service({host!r})\n"
    )
    patch.syspath_prepend(str(root / "mods"))
    shown: dict[str, str] = {}
    out, err = io.StringIO(), io.StringIO()
    try:
        sys.modules.pop("planted_bench", None)
        from planted_bench import BENCH  # type: ignore[import-not-found]

        judges = [
            FaithfulnessJudge(
                base_url=f"http://judge:{PLANTED['judge password']}@{host}/v1", model="m"
            ),
            AnswerCorrectnessJudge(
                base_url=f"http://{host}/v1/chat/completions",
                model="m",
                api_key_env="PLANTED_JUDGE_KEY",
            ),
        ]
        store = ReportStore(root / "store")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            runs = run_benchmark(
                benchmark=BENCH,
                recipes={
                    "service": _service(host),
                    "function": _function,
                    "object": _ObjectSystem(),
                },
                evaluators=judges,
                store=store,
                progress=False,
            )
            stopped = run_benchmark(  # left partial: its checkpoint stays on disk
                benchmark=_partial_bench(),
                recipe=_Stopping(_service(host), after=8),
                evaluators=judges,
                store=ReportStore(root / "partial-store"),
                config={"checkpoint_every": 1, "max_concurrent_queries": 1},
                progress=False,
            ).report
        reports = [r.report for r in runs.results.values()]
        shown["warnings"] = "\n".join(str(w.message) for w in caught)
        shown["to_html partial"] = str(stopped.to_html())
        for report in reports:
            label = report.metadata.get("label", report.report_id)
            shown[f"to_html {label}"] = str(report.to_html())
            shown[f"card {label}"] = report.card()._repr_html_()
            shown[f"repr {label}"] = repr(report)
            shown[f"json {label}"] = report.to_json()
            report.save(root / "heta" / label / "report.json")
            report.save(root / "columnar" / label, format="columnar")
            report.to_html(root / "html" / f"{label}.html")
        shown["comparison"] = runs.compare()._repr_html_()
        compare(reports).to_html(root / "html" / "comparison.html")
        Baseline(root / "baselines" / "service.json").save(reports[0])
        Baseline("service-baseline", store=ReportStore(root / "baseline-store")).save(reports[0])
        reloaded = [
            EvaluationReport.load(root / "heta" / r.metadata["label"] / "report.json")
            for r in reports
        ]
        for report in reloaded:
            label = report.metadata["label"]
            shown[f"reloaded to_html {label}"] = str(report.to_html())
            shown[f"reloaded card {label}"] = report.card()._repr_html_()
        shown["reloaded comparison"] = compare(reloaded)._repr_html_()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            codes = [
                main(
                    [
                        "run",
                        "planted_bench:BENCH",
                        "--recipe",
                        "planted_system:SERVICE",
                        "--out",
                        str(root / "cli-store"),
                    ]
                ),
                main(["ls", str(root / "store"), "--long"]),
                main(["ls", str(root / "store"), "--json"]),
                main(
                    [
                        "export",
                        str(root / "heta" / "service"),
                        "-o",
                        str(root / "html" / "cli.html"),
                    ]
                ),
                main(  # its table, summary, page and JUnit XML name the service's settings
                    [
                        "gate",
                        str(root / "heta" / "service"),
                        "--baseline",
                        str(root / "baselines" / "service.json"),
                        "--page-dir",
                        str(root / "gate-pages"),
                        "--junit-xml",
                        str(root / "gate.xml"),
                        "--score",
                        "faithfulness",
                    ]
                ),
            ]
        shown["cli output"] = out.getvalue() + err.getvalue()
        yield {
            "root": root,
            "reports": reports,
            "stopped": stopped,
            "reloaded": reloaded,
            "shown": shown,
            "codes": codes,
        }
    finally:
        patch.undo()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.mark.slow  # one shared run with every secret planted (~10 s)
def test_the_run_really_met_every_planted_secret(planted):
    """Not a test that cannot fail: the service, the judges and the errors all took part."""
    service, function, own = planted["reports"]
    assert planted["codes"] == [0, 0, 0, 0, 0]
    errors = [r.error.message for r in service.case_results if r.error]
    assert len(errors) == 1 and "backend down" in errors[0] and "X-Api-Key" in errors[0]
    assert any("Bearer" in r.error.message for r in function.case_results if r.error)
    reasons = [s.reason or "" for r in service.case_results for s in r.scores]
    assert any("grounded" in reason for reason in reasons)
    assert mark(PLANTED["declared"]) in service.case_results[0].response.answer
    assert service.recipe_manifest["headers"]["Accept"] == "application/json"  # plain stays
    assert own.recipe_manifest["index"] == "bm25"  # the object's own manifest() was stored
    assert own.recipe_manifest["body"]["key"] == mark(PLANTED["object manifest key"])
    files = [p for p in planted["root"].rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"report.json", "header.json", "summary.json", "cli.html", "comparison.html"} <= names
    assert "gate.xml" in names and any(p.parent.name == "gate-pages" for p in files)
    # a run left partial: its checkpoint is among the files grepped, and holds the service's
    # replies (the 500 echoing every header included), not an empty stream
    assert planted["stopped"].is_partial
    checkpoint = [p for p in files if p.name == "cases.arrows"]
    assert len(checkpoint) == 1 and {"cases.arrows.sums", "checkpoint.json"} <= names
    held = _file_text(checkpoint[0])
    assert "backend down" in held and mark(PLANTED["declared"]) in held  # hidden, not lost


@pytest.mark.slow  # one shared run with every secret planted (~10 s)
def test_no_file_the_project_wrote_holds_a_secret(planted):
    files = [p for p in planted["root"].rglob("*") if p.is_file() and p.suffix != ".py"]
    assert len(files) > 20
    found = {str(p.relative_to(planted["root"])): leaks(_file_text(p)) for p in files}
    assert {k: v for k, v in found.items() if v} == {}
    grepped = {p.name for p in files}  # checkpoints included (a run was left partial)
    assert {"cases.arrows", "cases.arrows.sums", "checkpoint.json"} <= grepped


@pytest.mark.slow  # one shared run with every secret planted (~10 s)
def test_no_view_in_memory_or_reloaded_shows_a_secret(planted):
    found = {name: leaks(text) for name, text in planted["shown"].items()}
    assert {k: v for k, v in found.items() if v} == {}


@pytest.mark.slow  # one shared run with every secret planted (~10 s)
def test_in_memory_and_reloaded_reports_agree_and_fingerprints_are_stable(planted):
    for report, again in zip(planted["reports"], planted["reloaded"], strict=True):
        assert json.loads(report.stored_json())["recipe_manifest"] == again.recipe_manifest
        assert report.recipe_manifest == again.recipe_manifest
    manifest = planted["reports"][0].recipe_manifest
    assert manifest["body"]["key"] == mark(PLANTED["template key"])  # same key, same mark
    assert manifest["headers"]["X-Api-Key"] == mark(PLANTED["X-Api-Key"])


def test_a_report_built_by_hand_is_redacted_where_it_is_shown(tmp_path):
    """A report that never went through a run still shows no URL token in any HTML view."""
    from tests._cli_helpers import make_report

    url = f"https://h/x?token={PLANTED['url ?token=']}&sig={PLANTED['url &sig=']}"
    data = make_report().model_dump(mode="json")
    data.update(recipe_manifest={"name": "bm25", "url": url}, metadata={"service": url})
    report = EvaluationReport.model_validate(data)
    for text in (
        str(report.to_html()),
        report.card()._repr_html_(),
        compare([report])._repr_html_(),
    ):
        assert leaks(text) == []
    report.save(tmp_path / "r.json")
    assert leaks((tmp_path / "r.json").read_text()) == []


@pytest.mark.parametrize(
    "text",
    [
        "status code: 500",
        "max_tokens: 512, top_k=10",
        "unexpected token: '}' at line 1",
        "key points: recall and precision",
        "Basic authentication failed",
    ],
)
def test_ordinary_text_stays_as_it_is(text):
    from heta_notebook._util.redaction import redact_text

    assert redact_text(text) == text


def test_fingerprints_are_stable_distinct_and_idempotent():
    from heta_notebook._util.redaction import redact_config, redact_text

    text = '{"X-Api-Key": "k-123456"} Cookie: s=abcd1234 https://u:pw12@h/x?sig=s1s1s1&v=2'
    once = redact_text(text)
    assert redact_text(once) == once and "k-123456" not in once and "v=2" in once
    assert mark("k-123456") in once and mark("k-123456") != mark("k-654321")
    config = {"headers": {"Cookie": "a=1", "Accept": "*/*"}, "body": {"key": "K1", "k": 3}}
    assert redact_config(redact_config(config)) == redact_config(config)
    assert redact_config(config)["body"] == {"key": mark("K1"), "k": 3}
