"""Checked before it runs: a dry run of the first queries, and how many ids map to documents.

``preflight`` asks the run's first ``n`` (case, mode) queries once (``n`` is
``BenchmarkRunConfig.preflight_queries``, 5 by default, 0 for no dry run; their responses are
kept and reused by the run, so nothing is asked twice). A shape the adapter cannot read, or a
system that fails on every one of them, stops the run with that one error. **Id coverage** is
the share of the returned results that map to one of the benchmark's documents (by the one
matching rule, :func:`heta_notebook.evaluators._matching.document_ids`): some → a warning, and
the coverage goes into the report's ``metadata["id_coverage"]``; none → before calling that an
error, the dry run goes on, up to ``ESCALATION`` × ``n`` queries (20 by default), and stops at
the first query whose results do map. A system whose first answers happen to miss but later
ones match is partial coverage (a warning), not a broken mapping; one that maps nothing in
all those queries gets :class:`IdCoverageError` before the run, showing the system's ids
beside the benchmark's and how to map them.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from heta_notebook._util.timeout import with_timeout
from heta_notebook.evaluators._matching import document_ids
from heta_notebook.schema._records import BenchmarkCase, QueryResponse
from heta_notebook.systems._normalize import SystemOutputError

DRY_RUN_CASES = 5
ESCALATION = 4  # when the first n map nothing, ask up to ESCALATION * n before an error
Answer = Callable[[BenchmarkCase, str], Awaitable[Any]]


@dataclass(frozen=True)
class Measured:
    """A dry-run response handed to the run with the latency it really took."""

    value: Any
    latency_ms: float


class IdCoverageError(ValueError):
    """None of a system's results maps to a benchmark document: every metric would be zero."""


@dataclass(frozen=True)
class IdCoverage:
    """How many of the dry run's results map to a benchmark document."""

    matched: int
    results: int
    queries: int
    unmatched_examples: tuple[str, ...] = ()

    @property
    def share(self) -> float:
        """Matched results / returned results (1.0 when nothing was returned)."""
        return self.matched / self.results if self.results else 1.0

    def to_dict(self) -> dict[str, Any]:
        """The record kept in ``report.metadata["id_coverage"]``."""
        return {
            "share": round(self.share, 4),
            "matched": self.matched,
            "results": self.results,
            "checked_queries": self.queries,
            "unmatched_examples": list(self.unmatched_examples),
        }


async def preflight(
    answer: Answer,
    cases: Sequence[BenchmarkCase],
    modes: Sequence[str],
    benchmark_documents: Collection[str],
    *,
    system: str,
    n: int = DRY_RUN_CASES,
    timeout: float | None = None,
    concurrency: int = 1,
) -> tuple[Answer, IdCoverage | None]:
    """Dry-run the run's first ``n`` (case, mode) items (more when none maps, see the module
    docstring), in the run's order (each within ``timeout`` seconds, the run's query timeout;
    up to ``concurrency`` at once, the run's limit); return an ``answer`` that reuses their
    responses and the id coverage (None when the system returned no results, the benchmark
    has no documents or ``n`` is 0)."""
    kept, coverage, stopped = await dry_run(
        answer,
        cases,
        modes,
        benchmark_documents,
        system=system,
        n=n,
        timeout=timeout,
        concurrency=concurrency,
    )
    if coverage is not None and stopped is None:
        check_coverage(coverage, benchmark_documents, system)
    return _reusing(answer, kept, stopped=stopped), coverage


async def dry_run(
    answer: Answer,
    cases: Sequence[BenchmarkCase],
    modes: Sequence[str],
    benchmark_documents: Collection[str],
    *,
    system: str,
    n: int = DRY_RUN_CASES,
    timeout: float | None = None,
    concurrency: int = 1,
) -> tuple[dict[tuple[str, str], Measured], IdCoverage | None, BaseException | None]:
    """The dry run's answers by (case id, mode), their id coverage, and the stop that ended
    it early (None). Raises the one shape error, or one error when every query failed; does
    not judge the coverage (:func:`check_coverage` does), so a worker can run it too.

    The first query is asked alone (an unreadable shape stops the run after one call), the
    rest of the first ``n`` ``concurrency`` at a time (a slow system's dry run costs two
    queries' latency, not ``n``); outcomes are judged in the run's order, so a stop keeps
    the answers before it. Beyond ``n`` (nothing mapped yet) it asks one at a time and stops
    at the first query whose results map."""
    kept: dict[tuple[str, str], Measured] = {}
    failures: list[BaseException] = []
    pairs = list(islice(((c, m) for c in cases for m in modes), max(n, 0) * ESCALATION))
    head, width = max(n, 0), max(1, concurrency)
    batches = [pairs[:1]] if head else []  # the first alone: a shape error costs one call
    batches += [pairs[i : min(i + width, head)] for i in range(1, min(head, len(pairs)), width)]
    batches += [[pair] for pair in pairs[head:]]
    for batch in batches:
        asked = len(kept) + len(failures)
        if asked >= head and not _maps_nothing_yet(kept, benchmark_documents):
            break
        try:
            outcomes = await asyncio.gather(*(_ask(answer, c, m, timeout) for c, m in batch))
        except asyncio.CancelledError:  # the stop button cancels the run's task
            return kept, None, KeyboardInterrupt()
        for (case, mode), outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, Measured):
                kept[(case.case_id, mode)] = outcome
            elif isinstance(outcome, SystemOutputError):
                raise outcome
            elif isinstance(outcome, Exception):  # judged below: all failing stops the run
                failures.append(outcome)
            else:  # a stop (KeyboardInterrupt...): the run keeps what was answered before
                return kept, None, outcome  # it, then stops the way a stop in the run does
    if failures and not kept:
        first = failures[0]
        raise RuntimeError(
            f"{system} failed on each of the first {len(failures)} queries before the run "
            f"started; the first error: {type(first).__name__}: {first}"
        ) from first
    return kept, id_coverage([m.value for m in kept.values()], benchmark_documents), None


async def _ask(
    answer: Answer, case: BenchmarkCase, mode: str, timeout: float | None
) -> Measured | BaseException:
    """One dry-run query: its answer with the latency it took, or what it raised (a stop
    included: returned, not raised, so concurrent queries are judged in order)."""
    started = time.perf_counter()
    try:
        value = await with_timeout(answer(case, mode), timeout, f"query {case.case_id!r}")
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # noqa: BLE001 - the caller judges it
        return exc
    return Measured(value, round((time.perf_counter() - started) * 1000, 3))


def _maps_nothing_yet(
    kept: dict[tuple[str, str], Measured], benchmark_documents: Collection[str]
) -> bool:
    """Whether the answers so far returned results and none of them maps (go on asking)."""
    coverage = id_coverage([m.value for m in kept.values()], benchmark_documents)
    return coverage is not None and coverage.matched == 0


def id_coverage(
    responses: Sequence[QueryResponse], benchmark_documents: Collection[str]
) -> IdCoverage | None:
    """How many results of ``responses`` map to one of ``benchmark_documents``."""
    keys = [key for response in responses for key in _reference_keys(response.results)]
    if not keys or not benchmark_documents:
        return None
    known = benchmark_documents.__contains__
    unmatched = [rid for rid, _, docs in keys if not any(map(known, docs))]
    return IdCoverage(
        matched=len(keys) - len(unmatched),
        results=len(keys),
        queries=len(responses),
        unmatched_examples=tuple(dict.fromkeys(unmatched))[:5],
    )


def _reference_keys(results: Any) -> list[tuple[str, Any, tuple[str, ...]]]:
    """Per result: its id, direct keys and documents (``evaluators._matching``), read from
    the columns of lazy results (no record built) or from each record."""
    if getattr(results, "built", None) is False:
        return results.columns.reference_keys()
    return [(r.id, None, document_ids(r)) for r in results]


def check_coverage(coverage: IdCoverage, benchmark_documents: Collection[str], system: str) -> None:
    """Raise when no result maps to a benchmark document; warn when only some do."""
    if coverage.matched == 0:
        theirs = ", ".join(repr(i) for i in coverage.unmatched_examples)
        ours = ", ".join(repr(d) for d in sorted(benchmark_documents)[:5])
        raise IdCoverageError(
            f"none of the {coverage.results} results {system} returned for the first "
            f"{coverage.queries} queries (the dry run; preflight_queries= sets its size) names a benchmark document, so every retrieval metric "
            f"would be 0. The system's ids: {theirs}; the benchmark's document ids: {ours}. "
            "Return the benchmark's document ids as result ids (or 'doc#n' chunk ids), put "
            "them in a result's 'document_id' field or metadata['benchmark_document_id'], or "
            "say where they are: as_system(obj, document_id='field name' or a callable "
            "(QueryResult) -> document id)."
        )
    if coverage.share < 1.0:
        warnings.warn(
            f"only {coverage.matched} of {coverage.results} results {system} returned for the "
            f"first {coverage.queries} queries map to a benchmark document (unmatched ids such as "
            f"{list(coverage.unmatched_examples[:3])}); unmatched results count as misses. "
            "Map them with as_system(obj, document_id=...).",
            UserWarning,
            stacklevel=4,
        )


def _reusing(
    answer: Answer, kept: dict[tuple[str, str], Measured], stopped: BaseException | None = None
) -> Answer:
    """``answer`` that first hands out the dry run's responses (``Measured``: the run records
    the latency they took); after a stop during the dry
    run, the first case it did not answer stops the run (which saves what was answered)."""

    async def reuse(case: BenchmarkCase, mode: str) -> Any:
        found = kept.pop((case.case_id, mode), None)
        if found is not None:
            return found
        if stopped is not None:
            raise stopped
        return await answer(case, mode)

    return reuse


__all__ = [
    "DRY_RUN_CASES",
    "ESCALATION",
    "IdCoverage",
    "IdCoverageError",
    "Measured",
    "check_coverage",
    "dry_run",
    "id_coverage",
    "preflight",
]
