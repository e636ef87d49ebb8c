"""RayExecutor: a benchmark run's recipes and case shards as Ray tasks (``heta-notebook[ray]``).

``run_benchmark(..., executor=RayExecutor())`` plans exactly as a local run does, then:

1. **Build tasks**, one per (recipe, run unit): the KB is built (or loaded from the build
   cache) in the shared ``workspace``; the task returns the query modes it offers and the
   manifests. The driver then fixes the report id and fingerprint as ``run_recipe`` does.
   A user's system (not the embedded KB) is then checked as in a local run, before any shard
   is dispatched: a **dry-run task** asks its first queries on a worker
   (``systems._check.dry_run``) and the driver judges the id coverage (one error, or a
   warning and ``report.metadata["id_coverage"]``). Unlike a local run, the shards ask those
   few queries again (their answers stay on the worker).
2. **Shard tasks**: the (case, mode) items still to do, in benchmark order × mode order, cut
   into shards of ``shard_size``. A shard loads its recipe's KB (once per worker process,
   from the build cache), answers and scores its items with the local pool, appends each
   finished result to its own checkpoint (one writer per file) and returns its results.
   At most ``max_in_flight`` shards are submitted at a time, so the driver never holds the
   whole plan as Ray objects.
3. **The driver** updates the progress bar as shards come back, and assembles, saves and
   returns the same report as a local run (same order, same statistics).

Fault tolerance: a worker that dies mid-shard is replaced and the shard retried by Ray
(``max_retries``); the retry skips what the shard's checkpoint already holds. A crashed
or stopped driver leaves the shard checkpoints in the report's folder
(``{report}/shards/...``); ``resume=True`` (or the same ``report_id``) reads them and runs
only the rest, on Ray or locally. Once the report is saved, the shard checkpoints are
removed. The driver holds the report id's checkpoint as a local run does: a second driver
gets ``ReportLockedError``, and resuming with other settings ``CheckpointMismatchError``
even when only shard checkpoints survived.

Every worker must reach the store and the workspace: on one machine any folder does; on
a cluster use a shared path or an fsspec URL for the store and a shared ``workspace``.
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from heta_notebook._util.loop import cancelled_with
from heta_notebook._util.warn import user_stacklevel
from heta_notebook.runner._executors import RecipeRun
from heta_notebook.runner._plan import (
    CaseGroup,
    RunSpec,
    _ordered_results,
    _pairs,
    _report,
    _resume_hint,
    _total,
    finished_results,
    headline_of,
    open_run,
)
from heta_notebook.runner._pool import CheckpointSink, Execution, WorkItem, case_metadata, execute
from heta_notebook.runner._progress import RunProgress
from heta_notebook.runner._statistics import ScoreColumns, utc_now

if TYPE_CHECKING:  # pragma: no cover
    from heta_notebook.reports._run import RunHandle
    from heta_notebook.reports._store import ReportStore
    from heta_notebook.runner._result import BenchmarkRunResult
    from heta_notebook.schema._records import BenchmarkCase, EvaluationCaseResult


class RayExecutor:
    """Carry out recipe runs as Ray tasks: KB builds, then case shards, on any Ray cluster.

    ``address=None`` joins the Ray instance already initialised in this process, else
    starts a local one (``ray.init(address=None, **init_options)``); ``"auto"`` or
    ``"ray://host:10001"`` join a cluster. ``shard_size=None`` picks about four shards per
    CPU (16-1000 items each). ``max_retries`` is Ray's retry count for a shard whose
    worker dies.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        shard_size: int | None = None,
        max_in_flight: int | None = None,
        max_retries: int = 3,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        if shard_size is not None and shard_size < 1:
            raise ValueError(f"shard_size must be a positive integer, got {shard_size}")
        if max_in_flight is not None and max_in_flight < 1:
            raise ValueError(f"max_in_flight must be a positive integer, got {max_in_flight}")
        self.address, self.shard_size, self.max_in_flight = address, shard_size, max_in_flight
        self.max_retries, self.init_options = max_retries, dict(init_options or {})

    def __repr__(self) -> str:
        return f"RayExecutor(address={self.address!r}, shard_size={self.shard_size})"

    async def run(self, runs: Sequence[RecipeRun]) -> list[BenchmarkRunResult]:
        """Every recipe at once on the cluster; one result per run, in order (partial if stopped)."""
        ray = _connect(self.address, self.init_options)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        window = self.max_in_flight or 2 * cpus
        tasks = [asyncio.ensure_future(_RecipeOnRay(job, self, window, cpus).run()) for job in runs]
        stop: BaseException | None = None
        try:
            await asyncio.wait(tasks)
        except (asyncio.CancelledError, KeyboardInterrupt) as exc:  # partial reports saved
            stop = exc
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks)
        results = []
        for task in tasks:
            if task.cancelled():  # stopped before its shards began: nothing to report
                break
            results.append(task.result())
        if isinstance(stop, asyncio.CancelledError):
            # every recipe ran at once: one stopped before its shards began has no result,
            # the others keep theirs (None in its place), and the cancel is said here
            raise cancelled_with([None if t.cancelled() else t.result() for t in tasks])
        return results


def _connect(address: str | None, init_options: dict[str, Any]) -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on environment
        raise ImportError("RayExecutor needs Ray: pip install 'heta-notebook[ray]'") from exc
    if not ray.is_initialized():
        ray.init(address=address, **init_options)
    return ray


@dataclass(frozen=True)
class _Context:
    """What every task of one recipe needs (put in the object store once per recipe)."""

    recipe: Any
    workspace: Any
    benchmark: Any  # manifest
    config: Any
    evaluators: tuple[Any, ...]
    documents: dict[str, Any]  # unit KB name -> ObjectRef of its documents (resolved lazily)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)  # this recipe run's


@dataclass(frozen=True)
class _Shard:
    """Items of one shard: (index, case, mode, group metadata), and its checkpoint's id."""

    unit_kb: str
    items: list[tuple[int, BenchmarkCase, str, dict[str, Any]]]
    checkpoint: ReportStore | None
    checkpoint_id: str


@dataclass
class _BuiltKB:
    """Stand-in on the driver for a KB built on a worker: its modes and manifest."""

    query_modes: tuple[str, ...]
    manifest_data: Any = field(default_factory=dict)

    def manifest(self) -> Any:
        return self.manifest_data


class _RecipeOnRay:
    """One recipe's run on Ray: build tasks, then shards, then the report (driver side)."""

    def __init__(self, job: RecipeRun, executor: RayExecutor, window: int, cpus: int):
        self.job, self.executor, self.window, self.cpus = job, executor, window, cpus
        self.results: dict[int, EvaluationCaseResult] = {}
        self.interrupted: str | None = None

    async def run(self) -> BenchmarkRunResult:
        """Build, plan, run the shards, and assemble the report (partial when stopped)."""
        import ray

        from heta_notebook.runner._benchmark import _seen_before, recipe_result, recipe_spec

        started_at, clock = utc_now(), time.perf_counter()
        job = self.job
        units = [(u, *job.loaded.unit_inputs(u)) for u in job.loaded.units]
        multi = len(units) > 1
        names = [f"{job.kb_name}-{u.unit_id}" if multi else job.kb_name for u, _, _ in units]
        context = _Context(
            recipe=job.recipe,
            workspace=job.workspace,
            benchmark=job.loaded.manifest,
            config=job.config,
            evaluators=job.evaluators,
            documents={
                name: ray.put(docs) for name, (_, docs, _) in zip(names, units, strict=True)
            },
        )
        context_ref = ray.put(context)
        builds = [
            _build_task.options(max_retries=self.executor.max_retries).remote(
                context_ref, name, job.rebuild, job.label
            )
            for name in names
        ]
        built = [await _wait(ref) for ref in builds]
        groups = [
            CaseGroup(cases=cases, answer=_never, metadata=_unit_metadata(name, u, multi))
            for name, (u, _, cases) in zip(names, units, strict=True)
        ]
        kbs = [_BuiltKB(tuple(modes), manifest) for modes, manifest, _ in built]
        spec = recipe_spec(job, groups, kbs, recipe_manifest=built[0][2])
        spec.metadata["executor"] = "ray"
        if not _seen_before(job, spec):  # a resumed run was checked when it first ran
            coverage = await _checked_on_worker(context_ref, names[0], units[0], spec)
            if coverage is not None:
                spec.metadata["id_coverage"] = coverage
        report = await self._execute(spec, context_ref, names, started_at, clock)
        return recipe_result(job, spec, report)

    async def _execute(
        self, spec: RunSpec, context_ref: Any, names: list[str], started_at: str, clock: float
    ) -> Any:
        """Run the pending shards and save the report, holding the report id's checkpoint
        (its lock and the run's fingerprint) as a local run does."""
        persist = spec.store is not None and spec.config.persist_report
        if persist:
            with open_run(spec) as run:
                report = await self._execute_held(spec, run, context_ref, names, started_at, clock)
                if not report.is_partial and run.saved:
                    run.discard()  # the complete report holds every row
        else:
            report = await self._execute_held(spec, None, context_ref, names, started_at, clock)
        if report.is_partial:
            warnings.warn(
                _resume_hint(spec, report, persist), RuntimeWarning, stacklevel=user_stacklevel()
            )
        return report

    async def _execute_held(
        self,
        spec: RunSpec,
        run: RunHandle | None,
        context_ref: Any,
        names: list[str],
        started_at: str,
        clock: float,
    ) -> Any:
        finished = finished_results(run) if run is not None else {}  # with the shards' results
        resumed = len(finished)
        pending = [
            (index, name, case, mode, group.metadata)
            for (index, group, case, mode), name in _with_unit(spec, names)
            if (case.case_id, mode) not in finished
        ]
        progress = RunProgress(
            total=_total(spec),
            initial=_total(spec) - len(pending),
            desc=spec.label,
            enabled=spec.progress,
            headline=headline_of(spec.evaluators),
            modes=spec.query_modes,
        )
        failure: BaseException | None = None
        try:
            await self._run_shards(spec, run, context_ref, pending, progress)
        except (asyncio.CancelledError, KeyboardInterrupt) as exc:
            self.interrupted = type(exc).__name__
        except BaseException as exc:  # noqa: BLE001 - the finished cases are kept, then raised
            failure = exc
        finally:
            progress.close()
        if run is not None:  # what cancelled or failed shards finished before they stopped
            for result in run.shard_results():
                finished.setdefault((result.case_id, result.query_mode), result)
        if failure is not None:
            raise failure
        report = self._report(spec, run, finished, resumed, started_at, clock)
        if run is not None:
            spec.report_path = run.save(report)
            run.drop_shards()  # the saved report holds them now
        return report

    async def _run_shards(
        self,
        spec: RunSpec,
        run: RunHandle | None,
        context_ref: Any,
        pending: list[tuple[int, str, BenchmarkCase, str, dict[str, Any]]],
        progress: RunProgress,
    ) -> None:
        shards = run.shards() if run is not None else None
        size = self.executor.shard_size or _auto_shard_size(len(pending), self.cpus)
        token = uuid.uuid4().hex[:8]  # this driver's shards never reuse an earlier one's ids
        in_flight: dict[asyncio.Future[Any], Any] = {}
        try:
            for number, start in enumerate(range(0, len(pending), size)):
                chunk = pending[start : start + size]
                while len(in_flight) >= self.window:
                    await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                    self._collect(in_flight, progress)
                shard = _Shard(
                    unit_kb=chunk[0][1],
                    items=[(index, case, mode, meta) for index, _, case, mode, meta in chunk],
                    checkpoint=shards,
                    checkpoint_id=run.shard_id(token, number) if run is not None else "",
                )
                ref = _shard_task.options(max_retries=self.executor.max_retries).remote(
                    context_ref, shard
                )
                in_flight[asyncio.wrap_future(ref.future())] = ref
            while in_flight:
                await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                self._collect(in_flight, progress)
        except BaseException:
            import ray

            for ref in in_flight.values():  # stop the running shards: they flush checkpoints
                ray.cancel(ref)
            if in_flight:
                await asyncio.wait(in_flight, timeout=10)
            for future in [f for f in in_flight if f.done() and not f.cancelled()]:
                if future.exception() is not None:  # cancelled: its checkpoint has the rest
                    del in_flight[future]
            self._collect(in_flight, progress)  # shards that finished meanwhile
            raise

    def _collect(self, in_flight: dict[asyncio.Future[Any], Any], progress: RunProgress) -> None:
        """Take in every finished shard's results (raises the first shard failure)."""
        for future in [f for f in in_flight if f.done()]:
            del in_flight[future]
            for index, result in future.result():
                if index not in self.results:
                    self.results[index] = result
                    progress.update(result)

    def _report(
        self,
        spec: RunSpec,
        run: RunHandle | None,
        finished: dict[tuple[str, str], EvaluationCaseResult],
        resumed: int,
        started_at: str,
        clock: float,
    ) -> Any:
        columns = ScoreColumns()
        for index, result in self.results.items():
            columns.add(index, result)
        execution = Execution(results=self.results, interrupted=self.interrupted)
        results = _ordered_results(spec, finished, execution, columns)
        seconds = time.perf_counter() - clock
        return _report(spec, run, results, columns, execution, started_at, seconds, resumed)


async def _checked_on_worker(
    context_ref: Any, unit_kb: str, unit: tuple[Any, Any, Any], spec: RunSpec
) -> dict[str, Any] | None:
    """The pre-run check of a user's system (as ``run_recipe`` does it locally): its first
    queries asked on a worker, the coverage judged here (one error, or a warning)."""
    from heta_notebook.systems._check import ESCALATION, check_coverage

    _, documents, cases = unit
    n = spec.config.preflight_queries
    if n <= 0 or not cases:
        return None
    ref = _dry_run_task.options(max_retries=0).remote(
        context_ref, unit_kb, list(cases[: n * ESCALATION]), tuple(spec.query_modes)
    )
    outcome = await _wait(ref)
    if outcome is None:  # the embedded KB, or no results to judge
        return None
    if isinstance(outcome, BaseException):
        raise outcome
    coverage, system, kind = outcome
    check_coverage(coverage, {d.document_id for d in documents}, system, kind=kind)
    return coverage.to_dict()


async def _wait(ref: Any) -> Any:
    return await asyncio.wrap_future(ref.future())


async def _never(case: Any, mode: str) -> Any:  # pragma: no cover - the driver queries nothing
    raise RuntimeError("the driver of a Ray run does not query knowledge bases")


def _unit_metadata(name: str, unit: Any, multi: bool) -> dict[str, Any]:
    return {"knowledge_base_name": name, "benchmark_run_unit": unit.unit_id} if multi else {}


def _with_unit(spec: RunSpec, names: list[str]) -> Any:
    """``_pairs(spec)`` with the unit KB name each item is answered by."""
    by_group = {id(group): name for group, name in zip(spec.groups, names, strict=True)}
    for pair in _pairs(spec):
        yield pair, by_group[id(pair[1])]


def _auto_shard_size(pending: int, cpus: int) -> int:
    return max(16, min(1000, math.ceil(pending / (4 * cpus)) if pending else 16))


# -- the worker side ----------------------------------------------------------------------

_KBS: OrderedDict[tuple[str, str, str, str], Any] = OrderedDict()  # per worker process
_KEEP_KBS = 4


async def _knowledge_base(context: _Context, unit_kb: str, rebuild: bool = False) -> Any:
    """This process's copy of a unit's KB: built, or loaded from the shared build cache."""
    import ray

    from heta_notebook.runner._benchmark import _knowledge_base as build
    from heta_notebook.runner._inputs import json_manifest

    # a recipe's build is known by its manifest; a user's system (a function, an object) is
    # not, so it is known by the run that shipped it (two functions never share a cache entry)
    recipe = context.recipe
    own = context.token if not hasattr(recipe, "build_knowledge_base") else ""
    key = (unit_kb, str(context.workspace), repr(json_manifest(recipe)), own)
    if key in _KBS and not rebuild:
        _KBS.move_to_end(key)
        return _KBS[key]
    documents = ray.get(context.documents[unit_kb])
    kb = await build(
        context.recipe, documents, unit_kb, context.workspace, rebuild, context.benchmark
    )
    _KBS[key] = kb
    while len(_KBS) > _KEEP_KBS:
        _KBS.popitem(last=False)
    return kb


def _build(context: _Context, unit_kb: str, rebuild: bool, label: str) -> tuple[Any, Any, Any]:
    """Build one unit's KB into the workspace; return its modes, manifest and recipe manifest."""
    from heta_notebook.runner._benchmark import _recipe_manifest
    from heta_notebook.runner._inputs import json_manifest

    async def go() -> tuple[Any, Any, Any]:
        kb = await _knowledge_base(context, unit_kb, rebuild)
        modes = tuple(getattr(kb, "query_modes", ()) or ())
        return modes, json_manifest(kb), _recipe_manifest(context.recipe, kb, label)

    return asyncio.run(go())


def _dry_run(
    context: _Context, unit_kb: str, cases: list[BenchmarkCase], modes: tuple[str, ...]
) -> Any:
    """A user's system's dry run on this worker: ``(IdCoverage, its label)``, the error that
    stops the run (returned, so the driver raises it as it is), or None (nothing to judge)."""
    from heta_notebook.runner._benchmark import _answerer
    from heta_notebook.systems._adapt import System
    from heta_notebook.systems._check import dry_run

    async def go() -> Any:
        kb = await _knowledge_base(context, unit_kb)
        if not isinstance(kb, System):
            return None
        label, config = f"system {kb.name!r}", context.config
        try:
            _, coverage, _ = await dry_run(
                _answerer(kb, config),
                cases,
                modes,
                kb.benchmark_documents,
                system=label,
                n=config.preflight_queries,
                timeout=config.query_timeout,
            )
        except (TypeError, RuntimeError, ValueError) as exc:  # shape; all failing; nothing found
            return exc
        return None if coverage is None else (coverage, label, kb.manifest().get("kind"))

    return asyncio.run(go())


def _run_shard(context: _Context, shard: _Shard) -> list[tuple[int, EvaluationCaseResult]]:
    """Answer and score one shard's items (skipping its checkpointed ones); return them all."""
    from heta_notebook.runner._benchmark import _answerer

    async def go() -> list[tuple[int, EvaluationCaseResult]]:
        store, sid = shard.checkpoint, shard.checkpoint_id
        if store is None:
            return await answer_shard(None)
        from heta_notebook.reports._run import SHARD_KB

        with store.run(SHARD_KB, sid) as run:  # one task writes one shard id
            return await answer_shard(run)

    async def answer_shard(run: RunHandle | None) -> list[tuple[int, EvaluationCaseResult]]:
        done = {(r.case_id, r.query_mode): r for r in run.read()} if run is not None else {}
        kb = await _knowledge_base(context, shard.unit_kb)
        answer = _answerer(kb, context.config)
        items = [
            WorkItem(
                index=i, case=case, mode=mode, answer=answer, metadata=case_metadata(case, **m)
            )
            for i, case, mode, m in shard.items
            if (case.case_id, mode) not in done
        ]
        sink = CheckpointSink(run, context.config) if run is not None else None
        execution = await execute(
            items,
            evaluators=context.evaluators,
            config=context.config,
            sink=sink,
            progress=RunProgress(total=len(items), enabled=False),
        )
        by_pair = {(r.case_id, r.query_mode): r for r in execution.results.values()}
        by_pair.update(done)
        return [
            (i, by_pair[(case.case_id, mode)])
            for i, case, mode, _ in shard.items
            if (case.case_id, mode) in by_pair
        ]

    return asyncio.run(go())


def _remote(function: Any) -> Any:
    """``function`` as a Ray task, made on first use (importing this module needs no Ray)."""
    holder: dict[str, Any] = {}

    class _Lazy:
        def options(self, **options: Any) -> Any:
            if "task" not in holder:
                import ray

                holder["task"] = ray.remote(num_cpus=1)(function)
            return holder["task"].options(**options)

    return _Lazy()


_build_task = _remote(_build)
_shard_task = _remote(_run_shard)
_dry_run_task = _remote(_dry_run)

__all__ = ["RayExecutor"]
