"""Run (case, query mode) work items through a bounded worker pool.

``max_concurrent_queries`` workers pull items from one lazy iterator, so a run of 100,000
cases never holds more than that many item tasks. A worker asks its next query as soon as
a reply is in; replies are read a whole round at a time (``_Pool._read_later``) and their
batch scored every few rounds (``SCORE_AFTER``).
Each finished result goes to the checkpoint sink and the progress bar as it is delivered;
results are keyed by the item's index so the final report keeps benchmark order × mode
order whatever the completion order.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from heta_notebook._util.gc import paused_gc
from heta_notebook._util.loop import abandoned_calls, loop_mismatch
from heta_notebook.kb._answer import answer_response, runs_in_thread
from heta_notebook.kb._passages import Judged, Passage
from heta_notebook.runner._config import BenchmarkRunConfig
from heta_notebook.runner._progress import RunProgress
from heta_notebook.runner._scoring import CaseScorer, with_timeout
from heta_notebook.schema._construct import LazyScores, constructed_record
from heta_notebook.schema._records import (
    BenchmarkCase,
    EvaluationCaseResult,
    EvaluationError,
    QueryResponse,
)
from heta_notebook.schema._redact import redacted_response
from heta_notebook.systems._adapt import Unread
from heta_notebook.systems._check import Measured

Answer = Callable[[BenchmarkCase, str], Awaitable[Any]]


class WorkItem:
    """One case under one query mode, answered by ``answer`` (a KB query or a function).

    Made between a worker's reply and its next query, so kept cheap: a class with slots (a
    frozen dataclass's ``__init__`` costs three times as much), and ``metadata`` may be a
    ``CaseMetadata``, built when the result is (after the round), not on the way to a query.
    """

    __slots__ = ("_metadata", "answer", "case", "index", "mode")

    def __init__(
        self,
        index: int,
        case: BenchmarkCase,
        mode: str,
        answer: Answer,
        metadata: dict[str, Any] | CaseMetadata | None = None,
    ) -> None:
        self.index, self.case, self.mode, self.answer = index, case, mode, answer
        self._metadata = {} if metadata is None else metadata

    @property
    def metadata(self) -> dict[str, Any]:
        """The metadata of the item's case result (``case_metadata``)."""
        metadata = self._metadata
        return metadata if isinstance(metadata, dict) else metadata.value()


class CaseMetadata:
    """``case_metadata(case, **extra)``, built on its first read and kept: one per case,
    shared by the case's items (one per mode)."""

    __slots__ = ("_case", "_extra", "_value")

    def __init__(self, case: BenchmarkCase, extra: dict[str, Any]) -> None:
        self._case, self._extra = case, extra
        self._value: dict[str, Any] | None = None

    def value(self) -> dict[str, Any]:
        """The metadata dict (built once)."""
        if self._value is None:
            self._value = case_metadata(self._case, **self._extra)
        return self._value


class CheckpointSink:
    """Buffers finished results and appends them to a run's checkpoint every N results or
    T seconds.

    A batch scored together arrives at once (``extend``) and is appended as one batch,
    with the score columns its scorer kept (``reports._tables.score_table``).
    """

    def __init__(self, run: Any, config: BenchmarkRunConfig):
        self._run = run  # an open ``store.run(...)`` handle: O(1) appends
        self._every, self._interval = config.checkpoint_every, config.checkpoint_interval
        self._buffer: list[EvaluationCaseResult] = []
        self._columns: list[list[Sequence[Any]] | None] = []  # per ``extend``d batch
        self._last = time.monotonic()

    def add(self, result: EvaluationCaseResult) -> None:
        """Buffer one result; flush when the buffer is full or old enough."""
        self._buffer.append(result)
        self._columns.append(None)
        self._maybe_flush()

    def extend(
        self, results: list[EvaluationCaseResult], columns: list[Sequence[Any]] | None
    ) -> None:
        """Buffer a batch of results finished together (``columns``: their scores by
        evaluator, as ``CaseScorer.score_batch`` returns them); flush as ``add`` does."""
        self._buffer.extend(results)
        self._columns.append(columns)
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if len(self._buffer) >= self._every or time.monotonic() - self._last >= self._interval:
            self.flush()

    def flush(self) -> None:
        """Append every buffered result to the checkpoint (fsynced by the store)."""
        buffer, columns = self._buffer, self._columns
        self._buffer, self._columns = [], []
        if buffer:
            writes_columns = getattr(self._run, "writes_columns", False)
            self._run.append(buffer, _score_table(columns) if writes_columns else None)
        self._last = time.monotonic()


def _score_table(columns: list[list[Sequence[Any]] | None]) -> Any:
    """The buffered batches' score rows from their scorers' columns (None when a result
    came alone: the checkpoint reads every score off the records)."""
    if not columns or any(c is None for c in columns):
        return None
    from heta_notebook.reports._tables import score_tables

    return score_tables([c for c in columns if c is not None])


# At most this long between a reply and its reading when the workers' answers do not come
# in whole rounds (backends of varied latency): the batch window of ``BatchStage`` too.
READ_WINDOW = 0.01
# Replies read a round at a time are scored at a round's read once their batch holds a full
# ``BatchStage`` or its first case waited this long (its own timer, twice this, when no read
# comes). Most rounds then only read and the loop is back to waiting ~1 ms after the replies:
# the selector sleeps whole milliseconds, rounded up (on CPython 3.11 a timeout of 9, 13 or 18
# ms sleeps one more), so each round's work after its replies costs that round up to 1 ms
# (+1) of lateness on a timer-driven backend; fewer, larger batches cost that less often.
SCORE_AFTER = 0.05

# Results delivered between two ``gc.freeze()`` calls (see ``frozen_results``).
_FREEZE_EVERY = 256
_freezing = 0  # runs in progress that freeze (runs may overlap on one loop)


@contextmanager
def frozen_results() -> Iterator[None]:
    """Keep what is alive out of the cyclic GC's scans while a run goes on, then hand it back.

    A run holds ~25 records per case result; with a million live objects (this run's or the
    previous reports in a notebook) one full collection stops the event loop for 0.2-1 s,
    every worker with it. ``gc.freeze()`` (a list splice, O(1)) at the start and every
    ``_FREEZE_EVERY`` results moves them to the permanent generation; collections go on for
    new objects. ``gc.unfreeze()`` at the end hands everything back to the oldest generation,
    so the collector sees it again as before. Nothing is freed later than it would be but
    cyclic garbage born before a freeze. Skipped when the collector is off or something else
    froze objects (e.g. a server freezing before ``fork``: its freeze is left alone).
    """
    global _freezing
    if not _freezing and (not gc.isenabled() or gc.get_freeze_count()):
        yield
        return
    _freezing += 1
    gc.freeze()
    try:
        yield
    finally:
        _freezing -= 1
        if not _freezing:
            gc.unfreeze()


def _freeze_now() -> None:
    if _freezing:
        gc.freeze()


@dataclass
class Execution:
    """What a pool run produced: results by item index and whether it was interrupted."""

    results: dict[int, EvaluationCaseResult]
    interrupted: str | None = None


@dataclass
class Answered:
    """A case whose query and per-case evaluators are done, waiting for its batch metrics."""

    item: WorkItem
    response: QueryResponse
    latency_ms: float
    scores: list[Any]

    def result(self, scores: LazyScores | None = None) -> EvaluationCaseResult:
        """The finished case result (every part already validated: not validated again);
        ``scores``: its row of the batch's score columns, else its own scores."""
        return constructed_record(
            EvaluationCaseResult,
            {
                "case_id": self.item.case.case_id,
                "query": self.item.case.query,
                "query_mode": self.item.mode,
                "scores": tuple(self.scores) if scores is None else scores,
                "response": self.response,
                "latency_ms": self.latency_ms,
                "error": None,
                "metadata": dict(self.item.metadata),
            },
        )


class BatchStage:
    """Collects answered cases and scores their built-in metrics together, then delivers them.

    A batch is scored when it is full or ``window`` seconds after its first case, so workers
    never wait for it: they go on to the next query while the batch fills.
    """

    def __init__(
        self,
        scorer: CaseScorer,
        deliver: Callable[[list[int], list[EvaluationCaseResult], Any], None],
        size: int = 256,
        window: float = READ_WINDOW,
    ):
        self._scorer, self._deliver, self._size, self._window = scorer, deliver, size, window
        self._pending: list[Answered] = []
        self._timer: asyncio.TimerHandle | None = None
        self.failure: BaseException | None = None

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, answered: Answered) -> None:
        """Queue one case; score the batch now if it is full, else within ``window``."""
        self._pending.append(answered)
        if len(self._pending) >= self._size:
            self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._window, self._on_timer)

    def waited(self, seconds: float) -> bool:
        """Whether the batch's first case has waited ``seconds`` (its timer's start on)."""
        timer = self._timer
        if timer is None:
            return bool(self._pending)
        return timer.when() - self._window + seconds <= asyncio.get_running_loop().time()

    def _on_timer(self) -> None:
        self._timer = None
        try:
            self.flush()
        except BaseException as exc:  # noqa: BLE001 - re-raised by execute(), not lost in the loop
            self.failure = exc

    def flush(self) -> None:
        """Score and deliver every queued case."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending = self._pending, []
        if not pending:
            return
        columns = self._scorer.score_batch(
            [a.item.case for a in pending],
            [a.response for a in pending],
            [a.scores for a in pending],
        )
        if columns is None:  # the batch failed: each case's slots hold its scores
            results = [answered.result() for answered in pending]
        else:
            results = [a.result(LazyScores(columns, row)) for row, a in enumerate(pending)]
        self._deliver([answered.item.index for answered in pending], results, columns)


async def execute(
    items: Iterable[WorkItem],
    *,
    evaluators: Sequence[Any],
    config: BenchmarkRunConfig,
    sink: CheckpointSink | None,
    progress: RunProgress,
    on_result: Callable[[int, EvaluationCaseResult], None] | None = None,
    on_batch: Callable[[], None] | None = None,
) -> Execution:
    """Run every item with at most ``config.max_concurrent_queries`` queries in flight.

    ``on_result(index, result)`` sees each finished result as it is delivered (e.g. the
    report's score columns, filled while the loop waits for queries, not after the run);
    ``on_batch()`` is called after each scored batch's results were (e.g. to read the
    batch's columns then, not all batches' at the end).
    """
    scorer = CaseScorer(evaluators, config.evaluator_timeout)
    return await _Pool(items, scorer, config, sink, progress, on_result, on_batch).run()


class _Pool:
    """The workers of one run, the batch stage they feed, and where results go."""

    def __init__(
        self,
        items: Iterable[WorkItem],
        scorer: CaseScorer,
        config: BenchmarkRunConfig,
        sink: CheckpointSink | None,
        progress: RunProgress,
        on_result: Callable[[int, EvaluationCaseResult], None] | None = None,
        on_batch: Callable[[], None] | None = None,
    ):
        self.source, self.scorer, self.config = iter(items), scorer, config
        self.sink, self.progress, self.on_result = sink, progress, on_result
        self.on_batch = on_batch
        self.state = Execution(results={})
        self.deferred = scorer.batch_only
        window = 2 * SCORE_AFTER if self.deferred else READ_WINDOW
        self.stage = BatchStage(scorer, self.deliver_batch, window=window)
        self.workers: list[asyncio.Task[None]] = []
        self.failure: BaseException | None = None
        # replies read after their worker has asked its next query (``_read_later``)
        self.replies: deque[Reply] = deque()
        self._answered: set[int] = set()  # workers with an answer since the last read
        self._active = 0  # workers still pulling items
        self._soon: asyncio.Handle | None = None  # the read of a whole round, next loop turn
        self._timer: asyncio.TimerHandle | None = None  # the read ``READ_WINDOW`` after a reply

    def deliver(self, index: int, result: EvaluationCaseResult) -> None:
        """Record a finished result: report slot, ``on_result``, checkpoint, progress bar."""
        self._record(index, result)
        if self.sink is not None:
            self._checkpoint(self.sink.add, result)
        self.progress.update(result)

    def deliver_batch(
        self, indices: list[int], results: list[EvaluationCaseResult], columns: Any
    ) -> None:
        """``deliver`` for a batch scored together: checkpointed as one batch, with the
        score columns its scorer kept."""
        for index, result in zip(indices, results, strict=True):
            self._record(index, result)
        if self.on_batch is not None:
            self.on_batch()
        if self.sink is not None:
            self._checkpoint(self.sink.extend, results, columns)
        for result in results:
            self.progress.update(result)

    def _record(self, index: int, result: EvaluationCaseResult) -> None:
        self.state.results[index] = result
        if len(self.state.results) % _FREEZE_EVERY == 0:
            _freeze_now()  # the results so far: no collection rescans them (frozen_results)
        if self.on_result is not None:
            self.on_result(index, result)

    def _checkpoint(self, write: Callable[..., None], *args: Any) -> None:
        try:
            write(*args)
        except Exception as exc:  # e.g. a full disk: stop everyone, raise at the end
            self.failure = self.failure or exc
            self.stop()
            raise

    async def run(self) -> Execution:
        """Start the workers, wait for them (or an interrupt), flush what is answered."""
        count = self.config.max_concurrent_queries
        self.workers.extend(asyncio.ensure_future(self.worker(n)) for n in range(count))
        try:
            await asyncio.gather(*self.workers, return_exceptions=True)
        except (asyncio.CancelledError, KeyboardInterrupt) as exc:
            self.state.interrupted = type(exc).__name__
            self.stop()
            await asyncio.gather(*self.workers, return_exceptions=True)
        finally:
            with paused_gc():  # as a round's read (``_read_now``): the last batch is scored here
                try:  # answered cases are never lost, even when interrupted
                    self._unschedule_reads()
                    self.read_replies()
                finally:
                    try:
                        self.stage.flush()
                    finally:
                        if self.sink is not None:
                            self.sink.flush()
        failure = self.failure or self.stage.failure
        if failure is not None:
            raise failure
        return self.state

    def stop(self) -> None:
        """Cancel every worker (their in-flight cases are redone on resume)."""
        for task in self.workers:
            task.cancel()

    async def worker(self, number: int) -> None:
        """Pull items until none is left; stop everyone on Ctrl-C or on an internal failure.

        When no evaluator needs a coroutine per case (the built-in metrics are scored in
        batches), a worker asks its next query as soon as an answer is in and leaves the
        reply to ``_read_later``, so replies that arrive together restart their queries
        together.
        """
        self._active += 1
        try:
            if self.deferred:
                await self._ask_ahead(number)
            for item in self.source:  # each case read and scored by its worker
                self.settle(item.index, await answer_item(item, self.scorer, self.config))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - _stopped says why and stops everyone
            self._stopped(exc)
        finally:
            self._active -= 1
            if self.deferred and self._active:
                self._read_later(None)  # the round may be whole without this worker

    async def _ask_ahead(self, number: int) -> None:
        """The worker's loop when replies are read later: ``ask`` each item, hand the reply to
        ``_read_later``. Without a query timeout ``ask`` is written out here: between a reply
        and the next query runs no coroutine of ours but this one (each worker's step delays
        the next round's queries of the workers after it)."""
        if self.config.query_timeout is not None:
            for item in self.source:
                self._replied(number, item, await ask(item, self.config))
            return
        perf_counter = time.perf_counter
        for item in self.source:
            started = perf_counter()
            try:
                with abandoned_calls() as abandoned:
                    raw = await item.answer(item.case, item.mode)
            except Exception as exc:  # noqa: BLE001 - isolation: the run goes on
                self._replied(number, item, _failed(item, exc, started, abandoned))
            else:
                self._replied(number, item, _reply(item, raw, started, perf_counter(), abandoned))

    def _replied(self, number: int, item: WorkItem, reply: Reply | EvaluationCaseResult) -> None:
        if isinstance(reply, Reply):
            self.replies.append(reply)
        else:
            self.deliver(item.index, reply)  # the query failed
        self._read_later(number)

    def settle(self, index: int, outcome: EvaluationCaseResult | Answered) -> None:
        """A case's outcome to its batch (scored with others) or straight to ``deliver``."""
        if not isinstance(outcome, Answered):
            self.deliver(index, outcome)  # the query failed
        elif self.scorer.batch_indices:
            self.stage.add(outcome)
        else:
            self.deliver(outcome.item.index, outcome.result())

    def _stopped(self, exc: BaseException) -> None:
        """Stop every worker after ``exc``: Ctrl-C (the notebook's stop button) or another
        BaseException from user code is the report's ``metadata.interrupted``; any other
        exception is not a case failure (those are isolated), e.g. a full disk, and is
        raised at the end."""
        if isinstance(exc, Exception):
            self.failure = self.failure or exc
        else:  # never swallowed: the report says why the run stopped
            self.state.interrupted = type(exc).__name__
        self.stop()

    def _read_later(self, number: int | None) -> None:
        """Read the replies once every active worker has answered since the last read (a
        whole round: its replies are read next loop turn, while every query of the next round
        waits on its backend; their batch is scored there once it waited ``SCORE_AFTER``), or
        ``READ_WINDOW`` seconds after the first unread reply, whichever comes first."""
        if number is not None:
            self._answered.add(number)
        if not self.replies or self._soon is not None:
            return
        loop = asyncio.get_running_loop()
        if len(self._answered) >= self._active:
            if self._timer is not None:
                self._timer.cancel()
            self._soon = loop.call_soon(self._read_now)
        elif self._timer is None:
            self._timer = loop.call_later(READ_WINDOW, self._read_now)

    def _unschedule_reads(self) -> None:
        for handle in (self._soon, self._timer):
            if handle is not None:
                handle.cancel()
        self._soon = self._timer = None

    def _read_now(self) -> None:
        self._unschedule_reads()
        self._answered.clear()
        try:
            # a round's reading and scoring makes many short-lived objects: no collection
            # walks them while they live (paused_gc; the next collection sees the survivors)
            with paused_gc():
                self.read_replies()
                # else with a later round's (full: at once); in the run's tail (a worker found
                # no item left) every round's, so the end of the run scores one round at most
                if self.stage.waited(SCORE_AFTER) or self._active < len(self.workers):
                    self.stage.flush()
        except BaseException as exc:  # noqa: BLE001 - a loop callback: stop and say why
            self._stopped(exc)

    def read_replies(self) -> None:
        """Read the replies waiting (``read_reply``) and hand each case on as ``worker`` does."""
        replies, slots = self.replies, len(self.scorer.evaluators)
        while replies:
            reply = replies.popleft()
            index, response = reply.item.index, read_reply(reply)
            if isinstance(response, QueryResponse):
                self.settle(index, Answered(reply.item, response, reply.latency_ms, [None] * slots))
            else:
                self.deliver(index, response)  # its reply could not be read


class ThreadedQueries:
    """Answers queries of a KB with a sync ``query_many`` in a worker thread, in batches.

    The built-in KB's searches are CPU work that never yields: on the loop they would keep a
    stop or a cancel waiting until every case is done. Queries asked in the same loop turn
    (one per worker) go to the thread as one ``query_many`` batch per mode, so the loop stays
    free and a cancel ends the run after at most one batch. A failing batch is redone query
    by query, so one bad query fails only its own case. The recipe's answer step runs with the
    batch when it is local CPU work (extractive), and on the loop when it waits on HTTP (chat).
    """

    def __init__(self, kb: Any, *, top_k: int, options: dict[str, Any]):
        self._kb, self._top_k, self._options = kb, top_k, options
        self._waiting: dict[str, list[tuple[str, asyncio.Future[Any], list[Judged]]]] = {}
        self._step = getattr(getattr(kb, "recipe", None), "answer", None)
        self._answer_in_thread = runs_in_thread(self._step)

    async def answer(self, case: BenchmarkCase, mode: str) -> Any:
        """The KB's response to ``case.query`` in ``mode`` (an ``Answer`` for ``WorkItem``)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        batch = self._waiting.setdefault(mode, [])
        batch.append((case.query, future, judged_items(case)))
        if len(batch) == 1:
            loop.call_soon(self._send, mode)
        response = await future
        if self._step is None or self._answer_in_thread:
            return response
        return await answer_response(self._step, case.query, response)

    def _send(self, mode: str) -> None:
        batch = self._waiting.pop(mode, [])
        batch = [entry for entry in batch if not entry[1].cancelled()]
        if batch:
            sent = asyncio.ensure_future(asyncio.to_thread(self._search, mode, batch))
            sent.add_done_callback(functools.partial(_settle, batch))

    def _search(self, mode: str, batch: list[tuple[str, Any, list[Judged]]]) -> list[Any]:
        """In the worker thread: one batched call, or per query when the batch fails.

        Each query's judged documents go with it: the KB counts the exact deep ranks of those
        missing from its top k during the search (``kb._deep_rank``; the miss taxonomy reads
        them from ``metadata["deep_ranks"]``).
        """
        texts = [text for text, _, _ in batch]
        judged = [ids for _, _, ids in batch]
        try:
            return self._query(texts, mode, judged)
        except Exception:  # noqa: BLE001 - isolate the failing query below
            return [self._one(text, mode, ids) for text, ids in zip(texts, judged, strict=True)]

    def _query(self, texts: list[str], mode: str, judged: list[list[Judged]]) -> list[Any]:
        return self._kb.query_many(
            texts,
            mode=mode,
            top_k=self._top_k,
            options=self._options,
            answer=self._answer_in_thread,
            judged=judged,
        )

    def _one(self, text: str, mode: str, judged: list[Judged]) -> Any:
        try:
            return self._query([text], mode, [judged])[0]
        except Exception as exc:  # noqa: BLE001 - handed to that case's worker
            return _Failed(exc)


@dataclass(frozen=True)
class _Failed:
    error: Exception


def _settle(batch: list[tuple[str, asyncio.Future[Any], Any]], sent: asyncio.Future[Any]) -> None:
    """Hand each waiting worker its response (or error); cancelled waiters are skipped."""
    if sent.cancelled():
        outcomes: list[Any] = [_Failed(RuntimeError("the query batch was cancelled"))] * len(batch)
    elif sent.exception() is not None:
        outcomes = [_Failed(sent.exception())] * len(batch)  # type: ignore[arg-type]
    else:
        outcomes = sent.result()
    for (_, future, _), outcome in zip(batch, outcomes, strict=True):
        if future.done():
            continue
        if isinstance(outcome, _Failed):
            future.set_exception(outcome.error)
        else:
            future.set_result(outcome)


class Reply:
    """A system's reply to one item, not read yet (``read_reply``)."""

    __slots__ = ("abandoned", "ended", "item", "measured_ms", "started", "value")

    def __init__(
        self,
        item: WorkItem,
        value: Any,
        started: float,
        ended: float,
        abandoned: list[str],
        measured_ms: float | None = None,
    ) -> None:
        self.item, self.value = item, value
        self.started, self.ended = started, ended  # perf_counter when asked, when answered
        self.abandoned = abandoned  # calls the query abandoned (``abandoned_calls``)
        self.measured_ms = measured_ms  # a dry run's answer: the latency it took

    @property
    def latency_ms(self) -> float:
        """The query's latency in ms (``_elapsed_ms`` at the reply; worked out when read)."""
        if self.measured_ms is not None:
            return self.measured_ms
        return round((self.ended - self.started) * 1000, 3)


def _reply(item: WorkItem, raw: Any, started: float, ended: float, abandoned: list[str]) -> Reply:
    if isinstance(raw, Measured):  # a dry run's answer
        return Reply(item, raw.value, started, ended, abandoned, raw.latency_ms)
    return Reply(item, raw, started, ended, abandoned)


async def ask(item: WorkItem, config: BenchmarkRunConfig) -> Reply | EvaluationCaseResult:
    """Ask one item's query (within the query timeout); a failed query becomes the case error."""
    case, mode = item.case, item.mode
    started = time.perf_counter()
    abandoned: list[str] = []
    timeout = config.query_timeout
    try:
        with abandoned_calls() as abandoned:
            if timeout is None:  # one coroutine less per query
                raw = await item.answer(case, mode)
            else:
                what = f"query {case.case_id!r} ({mode})"
                raw = await with_timeout(item.answer(case, mode), timeout, what)
    except Exception as exc:  # noqa: BLE001 - isolation: the run goes on
        return _failed(item, exc, started, abandoned)
    return _reply(item, raw, started, time.perf_counter(), abandoned)


def read_reply(reply: Reply) -> QueryResponse | EvaluationCaseResult:
    """The reply as a redacted ``QueryResponse`` (the one policy, before any byte is
    written), or the case error when it cannot be read."""
    value = reply.value
    try:
        response = (
            value.read() if isinstance(value, Unread) else as_response(value, reply.item.mode)
        )
        return redacted_response(response)
    except Exception as exc:  # noqa: BLE001 - isolation: the run goes on
        return _failed(reply.item, exc, reply.started, reply.abandoned)


def _failed(
    item: WorkItem, exc: Exception, started: float, abandoned: list[str]
) -> EvaluationCaseResult:
    if (mismatch := loop_mismatch(exc)) is not None:
        raise mismatch from exc  # every case would fail alike: stop, say what works
    return EvaluationCaseResult(
        case_id=item.case.case_id,
        query=item.case.query,
        query_mode=item.mode,
        error=EvaluationError.from_exception(
            exc, **({"abandoned_worker": True} if abandoned else {})
        ),
        latency_ms=_elapsed_ms(started),
        metadata=item.metadata,
    )


async def answer_item(
    item: WorkItem, scorer: CaseScorer, config: BenchmarkRunConfig
) -> EvaluationCaseResult | Answered:
    """Answer one item and run its per-case evaluators; a failed query becomes the case error."""
    reply = await ask(item, config)
    if not isinstance(reply, Reply):
        return reply
    response = read_reply(reply)
    if not isinstance(response, QueryResponse):
        return response
    scores = await scorer.score_per_case(item.case, response)
    return Answered(item=item, response=response, latency_ms=reply.latency_ms, scores=scores)


def as_response(value: Any, mode: str) -> QueryResponse:
    """Our QueryResponse from ours, a dict, or a record with ``to_dict()`` (heta-framework)."""
    if isinstance(value, QueryResponse):
        return value
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if isinstance(value, dict):
        return QueryResponse.from_dict({"mode": mode, **value})
    raise TypeError(f"query returned {type(value).__name__}, expected a QueryResponse")


def judged_items(case: BenchmarkCase) -> list[Judged]:
    """The documents the case's evidence names (what deep ranks are computed for), each with
    the evidence text it should hold: the item's own ``text``, and the case's answers at the
    offsets the benchmark gives (SQuAD's ``answer_starts``), for the chunk-boundary check."""
    items = []
    for item in case.expected.evidence:
        if item.reference_id is None:
            continue
        passages = [Passage(item.text)] if item.text else []
        starts = item.metadata.get("answer_starts")
        if isinstance(starts, list):
            for start in dict.fromkeys(s for s in starts if isinstance(s, int)):
                passages += [Passage(answer, start) for answer in case.expected.answers]
        items.append(Judged(str(item.reference_id), tuple(passages)))
    return items


def case_metadata(case: BenchmarkCase, **extra: Any) -> dict[str, Any]:
    """Contract 2: the expected data (and labels) travel with every case result."""
    metadata: dict[str, Any] = {"expected": case.expected.to_dict(), **extra}
    if case.labels:
        metadata["labels"] = dict(case.labels)
    return metadata


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
