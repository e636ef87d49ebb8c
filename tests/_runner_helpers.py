"""Small in-test benchmarks, knowledge bases and evaluators for the runner's tests.

The KBs implement KnowledgeBaseProtocol directly: they are the backend under test, with
knobs for latency, failures, interrupts and a count of concurrent calls.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from heta_notebook.evaluators._protocol import EvaluatorSettings
from heta_notebook.runner._config import BenchmarkRunConfig
from heta_notebook.runner._statistics import ScoreColumns
from heta_notebook.schema import (
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationScore,
    QueryResponse,
    QueryResult,
)

MODES = ("alpha", "beta")


def score_statistics(
    results: Sequence[EvaluationCaseResult], config: BenchmarkRunConfig
) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    """``score_summary`` and per-key stats of ``results`` added in order, one at a time (the
    reference the runner's out-of-order and checkpoint-fed columns are checked against)."""
    columns = ScoreColumns()
    for position, result in enumerate(results):
        columns.add(position, result)
    return columns.statistics(config)


def make_documents(n: int = 20) -> list[BenchmarkDocument]:
    return [BenchmarkDocument(document_id=f"d{i}", text=f"document {i}") for i in range(n)]


def make_cases(n: int = 12, n_docs: int = 20) -> list[BenchmarkCase]:
    cases = []
    for i in range(n):
        evidence = (BenchmarkEvidence(reference_id=f"d{i % n_docs}", metadata={"relevance": 2}),)
        cases.append(
            BenchmarkCase(
                case_id=f"q{i}",
                query=f"query number {i}",
                expected=BenchmarkExpected(answers=(f"answer {i}",), evidence=evidence),
                labels={"group": "even" if i % 2 == 0 else "odd"},
            )
        )
    return cases


class ListBenchmark:
    """A benchmark from in-memory lists (the BenchmarkProtocol shape, no preparation)."""

    def __init__(self, cases=None, documents=None, evaluators=(), name="toy"):
        self._cases = list(cases if cases is not None else make_cases())
        self._documents = list(documents if documents is not None else make_documents())
        self._evaluators = tuple(evaluators)
        self.manifest = BenchmarkManifest(name=name, version="1", split="test")

    async def prepare(self, workspace):
        return None

    async def documents(self, prepared):
        for document in self._documents:
            yield document

    async def cases(self, prepared):
        for case in self._cases:
            yield case

    def evaluators(self):
        return self._evaluators


def _ranking(text: str, mode: str, n_docs: int, top_k: int) -> list[str]:
    digest = hashlib.sha256(f"{mode}:{text}".encode()).digest()
    number = int(text.rsplit(" ", 1)[-1]) if text.rsplit(" ", 1)[-1].isdigit() else 0
    first = number % n_docs if mode == "alpha" else digest[0] % n_docs
    order = [first] + [(first + 1 + b) % n_docs for b in digest[1 : top_k + 4]]
    return list(dict.fromkeys(f"d{i}" for i in order))[:top_k]


class ToyKB:
    """Deterministic instant KB: mode 'alpha' ranks the right document first, 'beta' hashes."""

    def __init__(
        self,
        *,
        delay: float = 0.0,
        fail_on: Sequence[str] = (),
        hang_on: Sequence[str] = (),
        interrupt_after: int | None = None,
        n_docs: int = 20,
        modes: tuple[str, ...] = MODES,
        name: str = "toy-kb",
    ):
        self.delay, self.fail_on, self.hang_on = delay, set(fail_on), set(hang_on)
        self.interrupt_after, self.n_docs, self.name = interrupt_after, n_docs, name
        self._modes = modes
        self.calls = 0
        self.active = 0
        self.max_active = 0
        self.max_tasks = 0

    @property
    def query_modes(self) -> tuple[str, ...]:
        return self._modes

    async def query(
        self, text: str, *, mode: str, top_k: int = 10, options: Mapping[str, Any] | None = None
    ) -> QueryResponse:
        self.calls += 1
        if self.interrupt_after is not None and self.calls > self.interrupt_after:
            raise KeyboardInterrupt
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        self.max_tasks = max(self.max_tasks, len(asyncio.all_tasks()))
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if text in self.hang_on:
                await asyncio.sleep(3600)
            if text in self.fail_on:
                raise RuntimeError(f"backend failed on {text!r}")
            ids = _ranking(text, mode, self.n_docs, top_k)
            results = tuple(
                QueryResult(
                    id=f"{doc}#0",
                    text=f"chunk of {doc}",
                    score=1.0 / (rank + 1),
                    source={"benchmark_document_id": doc},
                )
                for rank, doc in enumerate(ids)
            )
            answer = f"answer {text.rsplit(' ', 1)[-1]}" if mode == "alpha" else "no idea"
            return QueryResponse(mode=mode, results=results, answer=answer)
        finally:
            self.active -= 1

    def manifest(self) -> dict[str, Any]:
        return {"name": self.name, "recipe": {"name": self.name, "kind": "toy"}}


class ToyRecipe:
    """A recipe that 'builds' a ToyKB and records what it was asked."""

    def __init__(self, name: str = "toy", **kb_options: Any):
        self.name, self.kb_options, self.builds = name, kb_options, []

    def manifest(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "toy",
            **{k: repr(v) for k, v in self.kb_options.items()},
        }

    async def build_knowledge_base(
        self, documents, *, knowledge_base_name, workspace, rebuild=False
    ):
        self.builds.append(
            {
                "n": len(documents),
                "name": knowledge_base_name,
                "workspace": workspace,
                "rebuild": rebuild,
            }
        )
        return ToyKB(n_docs=len(documents), name=knowledge_base_name, **self.kb_options)


class TopHit:
    """1.0 when the first result is the case's first evidence document."""

    name = "top_hit"

    async def evaluate(self, *, case, response) -> EvaluationScore:
        if not case.expected.evidence:
            return EvaluationScore.skipped_score(self.name, "no evidence")
        first = (
            response.results[0].source.get("benchmark_document_id") if response.results else None
        )
        return EvaluationScore(
            name=self.name, value=float(first == case.expected.evidence[0].reference_id)
        )


class AnswerMatch:
    name = "answer_match"

    async def evaluate(self, *, case, response) -> EvaluationScore:
        ok = response.answer in case.expected.answers
        return EvaluationScore(name=self.name, value=ok, passed=ok)


class Broken:
    name = "broken"

    async def evaluate(self, *, case, response) -> EvaluationScore:
        raise ValueError("evaluator bug")


class Flaky:
    """Fails ``failures`` times per case, then succeeds."""

    def __init__(self, failures: int, retry_count: int, name: str = "flaky"):
        self.name, self.failures = name, failures
        self.settings = EvaluatorSettings(retry_count=retry_count, retry_backoff=0.001)
        self.attempts: dict[str, int] = {}

    async def evaluate(self, *, case, response) -> EvaluationScore:
        n = self.attempts[case.case_id] = self.attempts.get(case.case_id, 0) + 1
        if n <= self.failures:
            raise ConnectionError(f"attempt {n} failed")
        return EvaluationScore(name=self.name, value=1.0, metadata={"attempt": n})


class Slow:
    def __init__(
        self, delay: float, timeout: float | None = None, name: str = "slow", enabled: bool = True
    ):
        self.name, self.delay = name, delay
        self.settings = EvaluatorSettings(timeout=timeout, enabled=enabled)

    async def evaluate(self, *, case, response) -> EvaluationScore:
        await asyncio.sleep(self.delay)
        return EvaluationScore(name=self.name, value=0.5)


def comparable(report) -> list[dict[str, Any]]:
    """Case results without timing (latencies, e.g. the answer step's, differ between runs)."""
    return [_without_timing(result.to_dict()) for result in report.case_results]


def _without_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k != "latency_ms"}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value
