"""A notebook whose evaluated functions use an ``httpx.AsyncClient`` made in an earlier cell.

The client is bound to the kernel's event loop. ``cells(url)`` uses it once in a cell, then
calls the sync ``evaluate()`` and ``run_benchmark()`` with functions that use it, then uses
it again: all of that must work (the issue's "bound to a different event loop" and "Event
loop is closed" failures came from running on a helper thread's loop). ``AnswerServer`` is
the real loopback HTTP server those calls reach.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[1]
DONE = "LOOP-BOUND CLIENT OK"


class AnswerServer:
    """``GET /answer?q=...`` → ``{"answer": "ANSWER <last word of q>"}`` on 127.0.0.1."""

    def __init__(self) -> None:
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: the client pools its connections

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                server.requests += 1
                time.sleep(0.05)  # concurrent calls open several pooled connections
                query = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
                body = json.dumps({"answer": f"answer {query.rsplit(' ', 1)[-1]}"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> AnswerServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def cells(url: str) -> list[str]:
    """The notebook's code cells (Run All must end with ``DONE`` printed and no error)."""
    return [
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "import httpx\n"
        "from heta_notebook import QueryResponse, evaluate, run_benchmark\n"
        "from tests._runner_helpers import AnswerMatch, ListBenchmark, make_cases\n"
        f"client = httpx.AsyncClient(base_url={url!r})",
        "first = await client.get('/answer', params={'q': 'warm up 0'})  # bound to this loop\n"
        "first.json()",
        "async def ask(inputs):\n"
        "    reply = await client.get('/answer', params={'q': inputs['query']})\n"
        "    return reply.json()['answer']\n"
        "data = [{'inputs': {'query': f'query number {i}'},\n"
        "         'ground_truth': {'answer': f'answer {i}'}} for i in range(6)]\n"
        "experiment = evaluate(ask, data, progress=True)\n"
        "errors = [r.error for r in experiment.case_results if r.error is not None]\n"
        "assert not errors and len(experiment.case_results) == 6, errors",
        "class HttpKB:\n"
        "    query_modes = ('http',)\n"
        "    async def query(self, text, *, mode, top_k=10, options=None):\n"
        "        reply = await client.get('/answer', params={'q': text})\n"
        "        return QueryResponse(mode=mode, answer=reply.json()['answer'])\n"
        "run = run_benchmark(benchmark=ListBenchmark(cases=make_cases(6),\n"
        "                                            evaluators=(AnswerMatch(),)),\n"
        "                    recipe=HttpKB(), progress=True)\n"
        "errors = [r.error for r in run.report.case_results if r.error is not None]\n"
        "assert not errors and len(run.report.case_results) == 6, errors\n"
        "assert run.report.score_summary['http.answer_match'] == 1.0, run.report.score_summary",
        "import asyncio  # every pooled connection again, on this loop\n"
        "after = await asyncio.gather(*(client.get('/answer', params={'q': f'still usable {i}'})\n"
        "                               for i in range(8)))\n"
        "await client.aclose()\n"
        f"print({DONE!r}, after[1].json()['answer'])",
    ]
