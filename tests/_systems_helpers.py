"""Shared pieces for the bring-your-own-system tests: a BM25 ranking of Cranfield computed once
(systems under test look it up, so every form returns the same ranking) and a loopback search
service (http.server in a thread) that serves it as JSON."""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from heta_notebook.kb._recipe import Recipe
from tests._kb_helpers import cranfield

TOP_K = 10
N_CASES = 30


class LazyModule:
    """A module imported at its first attribute, the test skipping when it is not installed
    (``pytest.importorskip``). LangChain and LlamaIndex cost ~2.5 CPU s to import: imported at
    module level, every pytest-xdist worker paid it to collect the framework tests; this way
    only the worker that runs them does."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):  # pytest's collection probes (``__wrapped__``...): no import
            raise AttributeError(attr)
        return getattr(pytest.importorskip(self._name), attr)


@functools.lru_cache(maxsize=1)
def rankings() -> dict[str, list[tuple[str, float]]]:
    """Query text -> BM25's top documents ``(id, score)`` over Cranfield (whole documents)."""
    loaded = cranfield()
    recipe = Recipe(name="bm25-docs", dense=None, hybrid=None, answer=None)
    kb = recipe.build_sync(loaded.documents)
    texts = [case.query for case in loaded.cases]
    responses = kb.query_many(texts, mode="full_text_search", top_k=TOP_K)
    return {
        text: [(r.source["benchmark_document_id"], float(r.score)) for r in response.results]
        for text, response in zip(texts, responses, strict=True)
    }


def ranked_ids(text: str) -> list[str]:
    """The document ids BM25 ranks for ``text``, best first."""
    return [doc for doc, _ in rankings()[text]]


def per_case_scores(report: Any) -> dict[tuple[str, str], float]:
    """``{(case id, score name): value}`` over a report's scored cases."""
    return {
        (result.case_id, score.name): score.value
        for result in report.case_results
        for score in result.scores
        if score.status == "scored"
    }


class SearchService:
    """A loopback JSON search service: POST {"q": text, "k": n} -> {"data": {"hits": [...]}}.

    ``status`` / ``delay`` make it fail or stall; every request body is recorded.
    """

    def __init__(self) -> None:
        self.status, self.delay = 200, 0.0
        self.requests: list[dict[str, Any]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                service.requests.append(body)
                if service.delay:
                    time.sleep(service.delay)
                if service.status != 200:
                    self._send(service.status, b'{"error": "index unavailable"}')
                    return
                hits = [
                    {"doc_id": doc, "score": score, "content": f"document {doc}"}
                    for doc, score in rankings()[body["q"]][: int(body["k"])]
                ]
                reply = {"data": {"hits": hits, "answer": f"{len(hits)} hits"}}
                self._send(200, json.dumps(reply).encode())

            def _send(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/search"

    @contextmanager
    def running(self) -> Iterator[SearchService]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
