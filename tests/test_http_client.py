"""``HttpSystem`` like a production client (issue 40), against a real loopback service: one
pooled connection set per system, retries on dropped connections and 502/503/504 (bounded,
counted in each response), a reply size limit, redirects refused by default and never to
another host unless allowed (and then without the credentials)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from heta_notebook import HttpSystem, RecordsBenchmark, run_benchmark
from heta_notebook.systems import HttpSystemError


class Flaky:
    """A loopback search service: drops every ``drop_every``-th request's connection without
    a reply, answers ``status`` for the first ``fail_first`` requests, can redirect or send
    a huge reply; counts requests, drops and the connections it saw."""

    def __init__(self) -> None:
        self.drop_every, self.fail_first, self.status = 0, 0, 503
        self.fail_body = b'{"error": "busy"}'
        self.refused: set[str] = set()  # queries always answered `status` with `fail_body`
        self.redirect: str | None = None
        self.huge, self.chunked = 0, False
        self.requests = self.drops = 0
        self.ports: set[int] = set()
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        flaky = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize, disable_nagle_algorithm = -1, True  # one send per reply: no 40 ms stalls

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self._answer(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

            def do_GET(self) -> None:  # noqa: N802 - a followed 302 becomes a GET
                self._answer({"q": "redirected"})

            def _answer(self, body: dict[str, Any]) -> None:
                with flaky.lock:
                    flaky.requests += 1
                    n = flaky.requests
                    flaky.ports.add(self.client_address[1])
                    flaky.headers.append(
                        {k.lower(): v for k, v in self.headers.items()} | {"path": self.path}
                    )
                    drop = flaky.drop_every and n % flaky.drop_every == 0
                    flaky.drops += bool(drop)
                if drop:  # the connection dies before any reply
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if n <= flaky.fail_first or body.get("q") in flaky.refused:
                    return self._send(flaky.status, flaky.fail_body)
                if flaky.redirect and self.path == "/search":
                    self.send_response(302)
                    self.send_header("Location", flaky.redirect)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                if flaky.huge:
                    return self._send(200, b'{"results": ["' + b"x" * flaky.huge + b'"]}')
                hits = [{"id": "d1", "text": f"one {body['q']}"}, {"id": "d2", "text": "two"}]
                return self._send(200, json.dumps({"results": hits, "where": self.path}).encode())

            def _send(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if flaky.chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for start in range(0, len(payload), 65536):
                        part = payload[start : start + 65536]
                        self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                    return
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.request_queue_size = 128
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/search"

    @contextmanager
    def running(self) -> Iterator[Flaky]:
        thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02})
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
            thread.join(timeout=5)


def _bench(n: int) -> RecordsBenchmark:
    return RecordsBenchmark(
        [{"id": f"c{i}", "query": f"q{i}", "evidence": ["d1"]} for i in range(n)],
        documents=[{"id": "d1", "text": "one"}, {"id": "d2", "text": "two"}],
    )


def _run(system: HttpSystem, n: int, concurrency: int = 8):
    return run_benchmark(
        benchmark=_bench(n),
        recipe=system,
        config={"max_concurrent_queries": concurrency},
        progress=False,
    ).report


def _retries(report) -> int:
    return sum(
        r.response.metadata.get("http_retries", 0) for r in report.case_results if r.response
    )


def _dropping_run(n: int, concurrency: int) -> None:
    with Flaky().running() as service:
        service.drop_every = 10  # 10% of the requests lose their connection
        report = _run(HttpSystem(service.url, body={"q": "{query}"}), n, concurrency)
    assert [r.error for r in report.case_results if r.error] == []  # 0 connection-level errors
    assert service.drops >= n // 10
    # every drop retried and counted, case by case (a loaded machine may add a retry of its
    # own, e.g. a reset in the accept queue: so at least the drops, never fewer)
    assert _retries(report) >= service.drops
    assert report.metadata["n_http_retries"] == _retries(report)  # and in the report's header
    # pooled: a handful of keep-alive connections per worker, not one per query
    assert len(service.ports) <= concurrency + service.drops + 8 < n
    print(
        f"\n{n} cases at {concurrency}: {service.requests} requests, {service.drops} dropped, "
        f"{_retries(report)} retries counted, {len(service.ports)} connections, 0 errors"
    )


def test_dropped_connections_are_retried_and_counted() -> None:
    _dropping_run(100, 16)


@pytest.mark.slow
def test_two_thousand_cases_at_concurrency_64_against_a_dropping_service() -> None:
    _dropping_run(2000, 64)


def test_503_is_retried_with_backoff_and_a_400_is_not() -> None:
    with Flaky().running() as service:
        service.fail_first = 2
        system = HttpSystem(service.url, body={"q": "{query}"}, retries=3)
        answered = asyncio.run(system.query("q"))
        assert answered["metadata"] == {"http_retries": 2} and service.requests == 3
    with Flaky().running() as service:
        service.fail_first, service.status = 5, 400
        with pytest.raises(HttpSystemError, match="HTTP 400"):
            asyncio.run(HttpSystem(service.url, body={"q": "{query}"}).query("q"))
        assert service.requests == 1
    with Flaky().running() as service:
        service.fail_first = 10
        with pytest.raises(HttpSystemError, match=r"HTTP 503.*after 2 retries"):
            asyncio.run(HttpSystem(service.url, body={"q": "{query}"}, retries=2).query("q"))
        assert service.requests == 3  # bounded


def test_a_connection_failing_every_attempt_is_one_clear_error() -> None:
    with Flaky().running() as service:
        service.drop_every = 1
        with pytest.raises(ConnectionError, match="connection failed .* on each of 3 attempts"):
            asyncio.run(HttpSystem(service.url, body={"q": "{query}"}, retries=2).query("q"))


@pytest.mark.parametrize("chunked", [False, True])
def test_a_reply_past_the_size_limit_is_an_error(chunked: bool) -> None:
    with Flaky().running() as service:
        service.huge, service.chunked = 300_000, chunked
        system = HttpSystem(service.url, body={"q": "{query}"}, max_reply_bytes=100_000)
        with pytest.raises(RuntimeError, match=r"more than max_reply_bytes=100,000 bytes"):
            asyncio.run(system.query("q"))
        big = HttpSystem(service.url, body={"q": "{query}"}, max_reply_bytes=400_000)
        assert len(asyncio.run(big.query("q"))["results"][0]) == 300_000
    with pytest.raises(ValueError, match="max_reply_bytes"):
        HttpSystem("http://h/x", max_reply_bytes=0)


def test_redirects_are_refused_by_default_and_never_cross_hosts_unless_allowed() -> None:
    with Flaky().running() as service:
        service.redirect = "/moved"
        options = {"body": {"q": "{query}"}, "headers": {"X-Api-Key": "key-123456"}}
        with pytest.raises(
            RuntimeError, match="HTTP 302, a redirect to .*/moved; redirects are not"
        ):
            asyncio.run(HttpSystem(service.url, **options).query("q"))
        followed = HttpSystem(service.url, follow_redirects=True, **options)
        assert asyncio.run(followed.query("q"))["results"][0]["text"] == "one redirected"
        assert service.headers[-1]["path"] == "/moved"
        assert service.headers[-1]["x-api-key"] == "key-123456"  # same host: kept

        service.redirect = f"http://localhost:{service.port}/elsewhere"  # another host name
        with pytest.raises(RuntimeError, match="redirected to another host .*allowed_hosts"):
            asyncio.run(followed.query("q"))
        allowed = HttpSystem(
            service.url, follow_redirects=True, allowed_hosts=["localhost"], **options
        )
        asyncio.run(allowed.query("q"))
        assert service.headers[-1]["path"] == "/elsewhere"
        assert "x-api-key" not in service.headers[-1]  # credentials stay with their host


def test_a_redirect_to_an_allowed_other_host_carries_no_credentials() -> None:
    """``auth=``, cookies and secret headers go to the service's own host only: the client
    must not re-apply its ``auth`` on the hop, as browsers and requests do not."""
    with Flaky().running() as service:
        service.redirect = f"http://localhost:{service.port}/elsewhere"  # another host name
        system = HttpSystem(
            service.url,
            body={"q": "{query}"},
            headers={"X-Api-Key": "key-123456", "Accept": "application/json"},
            cookies={"session": "cookie-998877"},
            auth=("me", "pw-445566"),
            follow_redirects=True,
            allowed_hosts=["localhost"],
        )
        assert asyncio.run(system.query("q"))["results"][0]["text"] == "one redirected"
        first, hop = service.headers[-2], service.headers[-1]
        assert first["path"] == "/search" and hop["path"] == "/elsewhere"
        assert first["authorization"].startswith("Basic ")  # the service itself gets them
        assert first["x-api-key"] == "key-123456" and "cookie-998877" in first["cookie"]
        assert hop["host"].startswith("localhost:")
        assert not {"authorization", "x-api-key", "cookie"} & set(hop)  # the other host: none
        assert hop["accept"] == "application/json"  # plain headers still travel
        sent = json.dumps(hop)
        assert "key-123456" not in sent and "cookie-998877" not in sent and "pw-445566" not in sent
        # the same host on another port is another origin too (as requests has it)
        with Flaky().running() as other:
            service.redirect = f"http://127.0.0.1:{other.port}/elsewhere"
            asyncio.run(system.query("q"))
        assert other.headers[-1]["path"] == "/elsewhere"
        assert not {"authorization", "x-api-key", "cookie"} & set(other.headers[-1])


@pytest.mark.parametrize("status", [300, 302, 307, 399])
def test_a_redirect_without_a_location_is_that_cases_error_not_its_answer(status: int) -> None:
    """A 3xx with no ``Location`` is not followed anywhere; its body, however much it looks
    like an answer, is never taken as one: only a 2xx reply answers."""
    with Flaky().running() as service:
        service.fail_first, service.status = 100, status
        service.fail_body = json.dumps({"results": [{"id": "d1", "text": "a lure"}]}).encode()
        system = HttpSystem(service.url, body={"q": "{query}"}, follow_redirects=True)
        with pytest.raises(HttpSystemError, match=f"answered HTTP {status}.*no Location"):
            asyncio.run(system.query("q"))
        service.fail_first, service.refused = 0, {"q3", "q4"}  # in a run: two such cases
        report = _run(system, 6)
    failed = {r.case_id: r for r in report.case_results if r.error}
    assert sorted(failed) == ["c3", "c4"] and not any(r.response for r in failed.values())
    assert all(f"answered HTTP {status}" in r.error.message for r in failed.values() if r.error)


def test_the_manifest_states_the_client_policy() -> None:
    system = HttpSystem("http://h/x", retries=1, follow_redirects=True, allowed_hosts=["b"])
    manifest = system.manifest()
    assert manifest["retries"] == 1 and manifest["follow_redirects"] is True
    assert manifest["allowed_hosts"] == ["b"] and manifest["max_reply_bytes"] == 8 * 1024 * 1024
