"""Checked before it runs: a dry run of the first queries, and how many ids map to documents.

``preflight`` asks the run's first ``n`` (case, mode) queries once (``n`` is
``BenchmarkRunConfig.preflight_queries``, 5 by default, 0 for no dry run; their responses are
kept and reused by the run, so nothing is asked twice: a query that timed out is that case's
timeout error, its abandoned call counted, not asked again). A shape the adapter cannot read, or a
system that fails on every one of them, stops the run with that one error. **Id coverage** is
the share of the returned results that map to one of the benchmark's documents (by the one
matching rule, :func:`heta_notebook.evaluators._matching.document_ids`): some → a warning, and
the coverage goes into the report's ``metadata["id_coverage"]``; none → before calling that an
error, the dry run goes on, up to ``ESCALATION`` × ``n`` queries (20 by default), and stops at
the first query whose results do map. A system whose first answers happen to miss but later
ones match is partial coverage (a warning), not a broken mapping; one that maps nothing in
all those queries gets :class:`IdCoverageError` before the run, showing the system's ids
beside the benchmark's and how to map them (the option of the adapter in use: ``id_key=`` for
LangChain, ``fields=`` for an ``HttpSystem``, ``document_id=`` otherwise); ids the adapter had
to make up because the system gave none are never shown as the system's.

**Nothing found.** A dry run whose every answer holds no result (an ``HttpSystem`` results
path that matches nothing, a function returning ``[]``) stops with :class:`NoResultsError`
showing what the replies held (their top-level keys, or the value's type and length); after
``ESCALATION`` × ``n`` such queries, not before. Some empty answers are a warning with their
share, kept as ``metadata["id_coverage"]["empty_queries"]``. Answers without results (a
string, ``{"answer": ..., "results": []}``) and abstentions are not empty; an ``HttpSystem``
reply whose results path matches nothing is, answer or not.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from heta_notebook._util.threads import abandoned_calls, note_abandoned
from heta_notebook._util.timeout import with_timeout
from heta_notebook._util.warn import user_stacklevel
from heta_notebook.evaluators._matching import document_ids
from heta_notebook.schema._records import BenchmarkCase, QueryResponse
from heta_notebook.systems._adapt import Unread
from heta_notebook.systems._normalize import MADE_UP_ID, NO_RESULTS, SystemOutputError

DRY_RUN_CASES = 5
ESCALATION = 4  # when the first n map nothing, ask up to ESCALATION * n before an error
Answer = Callable[[BenchmarkCase, str], Awaitable[Any]]


@dataclass(frozen=True)
class Measured:
    """A dry-run response handed to the run with the latency it really took."""

    value: Any
    latency_ms: float


@dataclass(frozen=True)
class TimedOut:
    """A dry-run query past the query timeout: the run records it as that case's error (asking
    again would cost the timeout twice), with the calls it abandoned."""

    error: TimeoutError
    abandoned: tuple[str, ...]


@dataclass(frozen=True)
class Failed:
    """A query asked ahead of the run (see ``dry_run``) that raised: the run records it as
    that case's error, as if it had asked it then."""

    error: Exception
    abandoned: tuple[str, ...]


class IdCoverageError(ValueError):
    """None of a system's results maps to a benchmark document: every metric would be zero."""


class NoResultsError(IdCoverageError):
    """Every dry-run answer of a system held no result (e.g. a results path matching nothing)."""


@dataclass(frozen=True)
class IdCoverage:
    """How many of the dry run's results map to a benchmark document."""

    matched: int
    results: int
    queries: int
    unmatched_examples: tuple[str, ...] = ()
    empty_queries: int = 0  # dry-run answers that held no result

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
            **({"empty_queries": self.empty_queries} if self.empty_queries else {}),
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
    kind: str | None = None,
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
        ahead=True,
    )
    if coverage is not None and stopped is None:
        check_coverage(coverage, benchmark_documents, system, kind=kind)
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
    ahead: bool = False,
) -> tuple[
    dict[tuple[str, str], Measured | TimedOut | Failed], IdCoverage | None, BaseException | None
]:
    """The dry run's answers (and timeouts) by (case id, mode), their id coverage, and the stop that ended
    it early (None). Raises the one shape error, or one error when every query failed; does
    not judge the coverage (:func:`check_coverage` does), so a worker can run it too.

    The first query is asked alone (an unreadable shape stops the run after one call), the
    rest of the first ``n`` ``concurrency`` at a time (a slow system's dry run costs two
    queries' latency, not ``n``); outcomes are judged in the run's order, so a stop keeps
    the answers before it. Beyond ``n`` (nothing mapped yet) it asks one at a time and stops
    at the first query whose results map.

    ``ahead``: when the first answer maps, the run's next queries fill the second round up to
    ``concurrency`` (the run would ask them next anyway; they are kept for it, answers,
    timeouts and errors alike, and judged by nothing here), so the run does not wait a
    round for four queries. A later dry-run query that stops the run wastes those calls."""
    kept: dict[tuple[str, str], Measured] = {}
    timed_out: dict[tuple[str, str], TimedOut] = {}
    failures: list[BaseException] = []
    head, width = max(n, 0), max(1, concurrency)
    reach = max(head * ESCALATION, head + width - 1 if ahead else 0)
    pairs = list(islice(((c, m) for c in cases for m in modes), reach))
    batches = [pairs[:1]] if head else []  # the first alone: a shape error costs one call
    batches += [pairs[i : min(i + width, head)] for i in range(1, min(head, len(pairs)), width)]
    batches += [[pair] for pair in pairs[head : head * ESCALATION]]
    extra: dict[tuple[str, str], Measured | TimedOut | Failed] = {}
    for number, batch in enumerate(batches):
        asked = len(kept) + len(failures)
        if asked >= head and not _maps_nothing_yet(kept, benchmark_documents):
            break
        early = (
            pairs[head : head + width - len(batch)]
            if ahead
            and number == 1
            and asked
            and kept
            and not _maps_nothing_yet(kept, benchmark_documents)
            else []
        )
        try:
            outcomes = await asyncio.gather(
                *(_ask(answer, c, m, timeout) for c, m in (*batch, *early))
            )
        except asyncio.CancelledError:  # the stop button cancels the run's task
            return {**kept, **timed_out}, None, KeyboardInterrupt()
        for (case, mode), outcome in zip(batch, outcomes, strict=False):
            if isinstance(outcome, Measured):
                kept[(case.case_id, mode)] = outcome
            elif isinstance(outcome, TimedOut):
                timed_out[(case.case_id, mode)] = outcome
                failures.append(outcome.error)
            elif isinstance(outcome, SystemOutputError):
                raise outcome
            elif isinstance(outcome, Exception):  # judged below: all failing stops the run
                failures.append(outcome)
            else:  # a stop (KeyboardInterrupt...): the run keeps what was answered before
                return {**kept, **timed_out}, None, outcome  # it, then stops as in the run
        for (case, mode), outcome in zip(early, outcomes[len(batch) :], strict=True):
            if isinstance(outcome, (Measured, TimedOut)):
                extra[(case.case_id, mode)] = outcome
            elif isinstance(outcome, Exception):
                extra[(case.case_id, mode)] = Failed(outcome, ())
            else:  # a stop: the answers before it are kept
                return {**kept, **timed_out, **extra}, None, outcome
        if early:  # the dry run's n queries are all in
            break
    if failures and not kept:
        first = failures[0]
        raise RuntimeError(
            f"{system} failed on each of the first {len(failures)} queries before the run "
            f"started; the first error: {type(first).__name__}: {first}"
        ) from first
    responses = [m.value for m in kept.values()]
    check_found(responses, system)
    return {**kept, **timed_out, **extra}, id_coverage(responses, benchmark_documents), None


async def _ask(
    answer: Answer, case: BenchmarkCase, mode: str, timeout: float | None
) -> Measured | TimedOut | BaseException:
    """One dry-run query: its answer with the latency it took, its timeout, or what it raised
    (a stop included: returned, not raised, so concurrent queries are judged in order)."""
    started = time.perf_counter()
    try:
        with abandoned_calls() as abandoned:
            value = await with_timeout(
                answer(case, mode), timeout, f"query {case.case_id!r} ({mode})"
            )
            if isinstance(value, Unread):  # a System's reply: read here, as query() does
                value = value.read()
    except asyncio.CancelledError:
        raise
    except TimeoutError as exc:
        return TimedOut(exc, tuple(abandoned))
    except BaseException as exc:  # noqa: BLE001 - the caller judges it
        return exc
    return Measured(value, round((time.perf_counter() - started) * 1000, 3))


def _maps_nothing_yet(
    kept: dict[tuple[str, str], Measured], benchmark_documents: Collection[str]
) -> bool:
    """Whether the answers so far found nothing, or returned results and none of them maps
    (go on asking)."""
    responses = [m.value for m in kept.values()]
    if responses and all(map(is_empty, responses)):
        return True
    coverage = id_coverage(responses, benchmark_documents)
    return coverage is not None and coverage.matched == 0


def is_empty(response: Any) -> bool:
    """Whether a dry-run answer found nothing: no result, and either no answer or a reply whose
    results path matched nothing (``metadata["no_results"]``); an abstention is not empty."""
    if not isinstance(response, QueryResponse) or response.results or response.abstained:
        return False
    return response.answer is None or NO_RESULTS in response.metadata


def check_found(responses: Sequence[Any], system: str) -> None:
    """Raise :class:`NoResultsError` when every dry-run answer found nothing."""
    empty = [r for r in responses if is_empty(r)]
    if not responses or len(empty) < len(responses):
        return
    held = dict.fromkeys(
        str(r.metadata.get(NO_RESULTS) or "no results and no answer") for r in empty
    )
    raise NoResultsError(
        f"{system} found nothing for each of the first {len(responses)} queries (the dry run; "
        f"preflight_queries= sets its size), so every retrieval metric would be 0. What it "
        f"returned: {'; '.join(list(held)[:3])}. Return the results (a list of ids, (id, score) pairs or dicts with 'id'), or "
        "point HttpSystem(results='a.path') at where the reply keeps them."
    )


def id_coverage(
    responses: Sequence[QueryResponse], benchmark_documents: Collection[str]
) -> IdCoverage | None:
    """How many results of ``responses`` map to one of ``benchmark_documents``."""
    if not benchmark_documents:
        return None
    known = benchmark_documents.__contains__
    n_results, unmatched = 0, []
    for response in responses:
        keys = _reference_keys(response.results)
        n_results += len(keys)
        missing = [i for i, (_, _, docs) in enumerate(keys) if not any(map(known, docs))]
        if missing:  # their records (lazy results build theirs only then)
            unmatched += [response.results[i] for i in missing]
    if not n_results:
        return None
    own = [r.id for r in unmatched if not r.source.get(MADE_UP_ID)]
    return IdCoverage(
        matched=n_results - len(unmatched),
        results=n_results,
        queries=len(responses),
        unmatched_examples=tuple(dict.fromkeys(own))[:5],
        empty_queries=sum(map(is_empty, responses)),
    )


def _reference_keys(results: Any) -> list[tuple[str, Any, tuple[str, ...]]]:
    """Per result: its id, direct keys and documents (``evaluators._matching``), read from
    the columns of lazy results (no record built) or from each record."""
    if getattr(results, "built", None) is False:
        return results.columns.reference_keys()
    return [(r.id, None, document_ids(r)) for r in results]


_MAPPING_HINTS = {
    "langchain": "as_system(retriever, id_key='the metadata key holding the document id')",
    "http": "HttpSystem(..., fields={'id': 'the field of a hit holding the document id'})",
}
_DEFAULT_HINT = (
    "as_system(obj, document_id='field name' or a callable (QueryResult) -> document id)"
)


def mapping_hint(kind: str | None) -> str:
    """The option that maps results to documents for the adapter ``kind`` (a manifest's kind)."""
    return _MAPPING_HINTS.get(kind or "", _DEFAULT_HINT)


def _their_ids(coverage: IdCoverage) -> str:
    if coverage.unmatched_examples:
        return "The system's ids: " + ", ".join(repr(i) for i in coverage.unmatched_examples)
    return "The system gave no ids (its results carry no id field; the adapter numbered them)"


def check_coverage(
    coverage: IdCoverage,
    benchmark_documents: Collection[str],
    system: str,
    *,
    kind: str | None = None,
) -> None:
    """Raise when no result maps to a benchmark document; warn when only some do, or when
    some dry-run answers found nothing."""
    hint = mapping_hint(kind)
    if coverage.matched == 0:
        ours = ", ".join(repr(d) for d in sorted(benchmark_documents)[:5])
        raise IdCoverageError(
            f"none of the {coverage.results} results {system} returned for the first "
            f"{coverage.queries} queries (the dry run; preflight_queries= sets its size) names "
            f"a benchmark document, so every retrieval metric would be 0. {_their_ids(coverage)}; "
            f"the benchmark's document ids: {ours}. Return the benchmark's document ids as "
            "result ids (or 'doc#n' chunk ids), put them in a result's 'document_id' field or "
            f"metadata['benchmark_document_id'], or say where they are: {hint}."
        )
    if coverage.share < 1.0:
        examples = (
            f"unmatched ids such as {list(coverage.unmatched_examples[:3])}"
            if coverage.unmatched_examples
            else "the unmatched results carry no id of their own"
        )
        warnings.warn(
            f"only {coverage.matched} of {coverage.results} results {system} returned for the "
            f"first {coverage.queries} queries map to a benchmark document ({examples}); "
            f"unmatched results count as misses. Map them with {hint}.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    if coverage.empty_queries:
        share = coverage.empty_queries / coverage.queries
        warnings.warn(
            f"{system} found nothing for {coverage.empty_queries} of the first "
            f"{coverage.queries} queries ({share:.0%}); those cases score 0. The count is kept "
            "in report.metadata['id_coverage']['empty_queries'].",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


def _reusing(
    answer: Answer,
    kept: dict[tuple[str, str], Measured | TimedOut | Failed],
    stopped: BaseException | None = None,
) -> Answer:
    """``answer`` that first hands out the dry run's responses (``Measured``: the run records
    the latency they took) and raises its timeouts (their abandoned calls counted by the
    run); after a stop during the dry
    run, the first case it did not answer stops the run (which saves what was answered)."""

    async def reused(case: BenchmarkCase, mode: str) -> Any:
        found = kept.pop((case.case_id, mode), None)
        if isinstance(found, (TimedOut, Failed)):
            note_abandoned(found.abandoned)
            raise found.error
        if found is not None:
            return found
        if stopped is not None:
            raise stopped
        return await answer(case, mode)

    def reuse(case: BenchmarkCase, mode: str) -> Awaitable[Any]:
        # once the dry run's answers are handed out, the system's own awaitable: no
        # coroutine of ours between a reply and the worker's next query
        return reused(case, mode) if kept or stopped is not None else answer(case, mode)

    return reuse


__all__ = [
    "DRY_RUN_CASES",
    "ESCALATION",
    "IdCoverage",
    "IdCoverageError",
    "Measured",
    "NoResultsError",
    "check_coverage",
    "check_found",
    "dry_run",
    "id_coverage",
    "is_empty",
    "mapping_hint",
    "preflight",
]
