"""A real OpenAI-compatible Chat Completions server on 127.0.0.1 with scripted replies.

Tests queue :class:`Reply` objects (served in order, then ``default``) or set ``route``, a
function of the request JSON, to answer by content. Every request is recorded with its
headers, so tests can check the Authorization header and count requests.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer: a chat completion with ``content``, or a raw status/body."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    delay: float = 0.0
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}
    )

    def payload(self, model: str) -> bytes:
        if self.body is not None:
            return self.body.encode("utf-8")
        return json.dumps(
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": f"{model}-served",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": self.usage,
            }
        ).encode("utf-8")


@dataclass
class Seen:
    """A request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def verdict(score: float = 1.0, reason: str = "Matches the expected answer.", **extra: Any) -> str:
    """A clean JSON verdict as a judge model would write it."""
    return json.dumps({"score": score, "passed": score >= 0.5, "reason": reason, **extra})


class JudgeServer:
    """``with JudgeServer() as server:`` serves ``server.base_url`` (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self, default: Reply | None = None) -> None:
        self.script: deque[Reply] = deque()
        self.default = default or Reply(content=verdict())
        self.route: Callable[[dict[str, Any]], Reply | None] | None = None
        self.requests: list[Seen] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def queue(self, *replies: Reply) -> None:
        """Serve ``replies`` to the next requests, in order."""
        with self._lock:
            self.script.extend(replies)

    def next_reply(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            if self.script:
                return self.script.popleft()
        routed = self.route(request) if self.route is not None else None
        return routed or self.default

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.requests.append(seen)

    def seen_within(self, count: int, seconds: float = 10.0) -> int:
        """How many requests arrived, waiting up to ``seconds`` for ``count``.

        A client that gave up (a timeout) returns before the server thread has
        necessarily read its request; counting at once would race with that thread.
        """
        deadline = time.monotonic() + seconds
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return len(self.requests)

    def enter(self, delta: int) -> None:
        with self._lock:
            self.in_flight += delta
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def __enter__(self) -> JudgeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _handler_for(owner: JudgeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence
            return

        def do_POST(self) -> None:  # noqa: N802 - http.server naming
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_invalid": raw.decode("utf-8", "replace")}
            owner.record(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(Reply(status=404, body='{"error": "not found"}'), "")
                return
            reply = owner.next_reply(body)
            owner.enter(+1)
            try:
                if reply.delay:
                    time.sleep(reply.delay)
                self._send(reply, str(body.get("model", "")))
            finally:
                owner.enter(-1)

        def _send(self, reply: Reply, model: str) -> None:
            payload = reply.payload(model)
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

    return Handler
