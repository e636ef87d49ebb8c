"""Judge overhead against a local scripted endpoint (run by hand: python bench/judge.py).

Measures what the library adds around an LLM call: requests per second through the
concurrency limit with fresh replies, and judgments per second served from the cache.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from heta_notebook.evaluators._judge import AnswerCorrectnessJudge  # noqa: E402
from heta_notebook.schema import BenchmarkCase, BenchmarkExpected, QueryResponse  # noqa: E402
from tests._judge_server import JudgeServer  # noqa: E402

N = 500


async def judge_all(judge: AnswerCorrectnessJudge) -> float:
    cases = [
        BenchmarkCase(case_id=f"c{i}", query=f"q{i}", expected=BenchmarkExpected(answers=("a",)))
        for i in range(N)
    ]
    response = QueryResponse(mode="m", answer="a")
    started = time.perf_counter()
    scores = await asyncio.gather(*(judge.evaluate(case=c, response=response) for c in cases))
    assert all(s.status == "scored" for s in scores)
    return time.perf_counter() - started


def main() -> None:
    with JudgeServer() as server, tempfile.TemporaryDirectory() as folder:
        judge = AnswerCorrectnessJudge(
            base_url=server.base_url, cache_dir=folder, max_concurrency=8
        )
        fresh = asyncio.run(judge_all(judge))
        cached = asyncio.run(judge_all(judge))
        print(f"{N} judgments, concurrency 8, local endpoint (instant replies)")
        print(f"fresh requests: {N / fresh:8.0f}/s  ({fresh * 1000 / N:.2f} ms each)")
        print(f"cache hits:     {N / cached:8.0f}/s  ({cached * 1000 / N:.2f} ms each)")
        print(f"requests seen by the endpoint: {len(server.requests)}")


if __name__ == "__main__":
    main()
