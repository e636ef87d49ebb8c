"""The benchmark front door: a benchmark × recipe(s) × query modes → EvaluationReport(s).

``await BenchmarkRunner().run(...)`` in Jupyter (top-level await), ``run_benchmark(...)``
anywhere (a script or a notebook cell). Each recipe becomes one ``RecipeRun`` that an
executor carries out (``executors.LocalExecutor`` by default): build the KB, plan the
(case, mode) items, run them in the bounded pool, score, checkpoint, report. An
interrupted run returns a partial report and resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path
from typing import Any

from heta_notebook._util.loop import cancelled_with, run_sync, sync_form, unknown_keywords
from heta_notebook.benchmarks._generation_manifest import run_identity
from heta_notebook.benchmarks._loader import LoadedBenchmark, adapt_heta, load_benchmark
from heta_notebook.benchmarks._texts import remember_documents
from heta_notebook.reports._store import ReportStore
from heta_notebook.runner._answer_default import answer_where_expected
from heta_notebook.runner._config import BenchmarkRunConfig, coerce_config
from heta_notebook.runner._executors import Executor, LocalExecutor, RecipeRun
from heta_notebook.runner._inputs import (
    active_evaluators,
    as_store,
    is_knowledge_base,
    json_manifest,
    label_of,
    named_recipes,
    workspace_for,
)
from heta_notebook.runner._plan import (
    CaseGroup,
    RunSpec,
    deep_enough,
    fingerprint,
    propagate_cancel,
    resolve_report_id,
    run_spec,
    warn_depth,
)
from heta_notebook.runner._pool import ThreadedQueries, frozen_results
from heta_notebook.runner._result import BenchmarkRunResult, RunCollection
from heta_notebook.runner._subset import CaseSubset
from heta_notebook.systems._adapt import System, as_system, unwrapped
from heta_notebook.systems._check import preflight

__all__ = [
    "BenchmarkRunConfig",
    "BenchmarkRunResult",
    "BenchmarkRunner",
    "RunCollection",
    "run_benchmark",
    "run_sync",
]


class BenchmarkRunner:
    """Build a KB from each recipe, query every case in every mode, score, report."""

    async def run(
        self,
        *,
        benchmark: Any,
        recipe: Any = None,
        recipes: Mapping[str, Any] | Sequence[Any] | None = None,
        knowledge_base_name: str | None = None,
        query_modes: Sequence[str] | str | None = None,
        evaluators: Sequence[Any] | None = None,
        config: BenchmarkRunConfig | Mapping[str, Any] | None = None,
        store: ReportStore | str | os.PathLike[str] | None = None,
        resume: bool = False,
        rebuild: bool = False,
        progress: bool = True,
        workspace: str | os.PathLike[str] | None = None,
        executor: Executor | None = None,
        limit: int | None = None,
        sample: int | None = None,
        seed: int | None = None,
        case_ids: Sequence[str] | None = None,
        labels: Mapping[str, Any] | None = None,
    ) -> BenchmarkRunResult | RunCollection:
        """Evaluate ``recipe``, or each of ``recipes``, on ``benchmark``.

        A recipe (or ``recipes`` entry) may be: a ``Recipe``; a built knowledge base; any
        object with ``query(text)`` (sync or async; ``query_modes``, ``manifest()`` optional);
        a function ``fn(text)`` or ``fn(text, *, mode, top_k)``, sync or async; a LangChain
        retriever/runnable; a LlamaIndex retriever/query engine; an ``HttpSystem``. Systems
        may return a ``QueryResponse``, a list of results (``QueryResult``s, ids, ``(id,
        score)`` pairs, dicts, Documents, nodes), ``(answer, results)`` or ``{"answer",
        "results"|"contexts", "citations"}``; ``as_system(obj, document_id=...)`` maps their
        ids to the benchmark's documents. The first cases are checked before the run (shape,
        id coverage; ``report.metadata["id_coverage"]``).

        ``limit=N`` (first N), ``sample=N`` (``seed``), ``case_ids=[...]`` and ``labels={key:
        value(s)}`` run a subset (part of the fingerprint). ``evaluators=None`` uses the
        benchmark's defaults; ``query_modes=None`` every mode the KB offers. With a ``store``,
        finished cases are checkpointed and the report saved; ``resume=True`` (or a
        ``config.report_id`` seen before) skips finished cases. ``executor`` carries out the
        recipe runs (default ``LocalExecutor``). Returns a ``BenchmarkRunResult``, or a
        ``RunCollection`` when ``recipes`` is given.
        """
        if (recipe is None) == (recipes is None):
            raise ValueError("pass exactly one of recipe= or recipes=")
        active = coerce_config(config)
        report_store = as_store(store)
        work = workspace_for("kb", report_store, workspace)
        loaded = await load_benchmark(benchmark, workspace_for("benchmarks", report_store))
        subset = CaseSubset.of(
            limit=limit, sample=sample, seed=active.seed if seed is None else seed,
            case_ids=case_ids, labels=labels,
        )  # fmt: skip
        loaded = subset.apply(loaded)
        chosen = active_evaluators(evaluators if evaluators is not None else loaded.evaluators)
        active = deep_enough(active, chosen)
        warn_depth(chosen, active.top_k)
        options: dict[str, Any] = {
            "config": active,
            "store": report_store,
            "resume": resume,
            "rebuild": rebuild,
            "progress": progress,
            "workspace": work,
            "query_modes": query_modes,
            "subset": subset.describe(),
        }
        if recipe is not None:
            recipe = answer_where_expected(adapt_heta(recipe, "recipe"), loaded.cases)
            label = label_of(recipe, knowledge_base_name or loaded.manifest.name)
            kb_name = knowledge_base_name or f"{loaded.manifest.name}-{label}"
            job = RecipeRun(loaded, recipe, label, kb_name, chosen, **options)
            (result,) = await (executor or LocalExecutor()).run([job])
            return propagate_cancel(result, [result.report])
        cases = loaded.cases
        adapted = (
            {k: answer_where_expected(adapt_heta(v, "recipe"), cases) for k, v in recipes.items()}
            if isinstance(recipes, Mapping)
            else [answer_where_expected(adapt_heta(r, "recipe"), cases) for r in recipes or ()]
        )
        jobs = [
            RecipeRun(
                loaded,
                each,
                label,
                f"{knowledge_base_name or loaded.manifest.name}-{label}",
                chosen,
                **options,
            )
            for label, each in named_recipes(adapted).items()
        ]
        try:
            done = await (executor or LocalExecutor()).run(jobs)
        except asyncio.CancelledError as exc:  # an executor that says the cancel itself
            if not hasattr(exc, "partial"):
                raise
            raise cancelled_with(_collection(jobs, exc.partial)) from None
        return propagate_cancel(_collection(jobs, done), [result.report for result in done])

    def run_sync(self, **kwargs: Any) -> BenchmarkRunResult | RunCollection:
        """``run(...)`` for plain code: works in a script and inside Jupyter's running loop."""
        if not _RUN_KEYWORDS.issuperset(kwargs):
            raise TypeError(unknown_keywords("BenchmarkRunner().run_sync", kwargs, _RUN_KEYWORDS))
        return run_sync(lambda: self.run(**kwargs), await_form="await BenchmarkRunner().run(...)")


def _collection(jobs: list[RecipeRun], done: Sequence[BenchmarkRunResult | None]) -> RunCollection:
    """The results by label; a stop ends ``done`` early or leaves None for a recipe that had
    not begun (it has no result)."""
    pairs = zip(jobs, done, strict=False)
    return RunCollection({job.label: result for job, result in pairs if result is not None})


_RUN_KEYWORDS = frozenset(inspect.signature(BenchmarkRunner.run).parameters) - {"self"}

run_benchmark = sync_form(
    BenchmarkRunner().run,
    "run_benchmark",
    "``BenchmarkRunner().run(...)`` without ``await``: in a script or a notebook cell.\n\n"
    + inspect.cleandoc(BenchmarkRunner.run.__doc__ or ""),
)


async def run_recipe(job: RecipeRun) -> BenchmarkRunResult:
    """One recipe on the loaded benchmark: build its KB(s), run every (case, mode), report."""
    groups, kbs = await _build(
        job.loaded, job.recipe, job.kb_name, job.config, job.workspace, job.rebuild
    )
    spec = recipe_spec(job, groups, kbs)
    if not _seen_before(job, spec):  # a resumed run was checked when it first ran
        spec.groups, coverage = await _checked(groups, kbs, spec.query_modes, job.config)
        if coverage is not None:
            spec.metadata["id_coverage"] = coverage
    report = await run_spec(spec)
    return recipe_result(job, spec, report, tuple(unwrapped(kb) for kb in kbs))


def recipe_spec(
    job: RecipeRun,
    groups: Sequence[CaseGroup],
    kbs: Sequence[Any],
    recipe_manifest: dict[str, Any] | None = None,
) -> RunSpec:
    """The run of ``job`` over its built KB(s): modes, fingerprint, report id, manifests.

    An executor that builds elsewhere passes stand-ins for ``kbs`` (``query_modes`` and
    ``manifest()``) and the ``recipe_manifest`` computed where the KB was built.
    """
    loaded, label, kb_name, config = job.loaded, job.label, job.kb_name, job.config
    modes = _modes(job.query_modes, kbs[0])
    if recipe_manifest is None:
        recipe_manifest = _recipe_manifest(job.recipe, kbs[0], label)
    identity = fingerprint(
        benchmark=loaded.manifest.key,
        recipe=recipe_manifest,
        label=label,
        modes=modes,
        evaluators=[str(ev.name) for ev in job.evaluators],
        config=config.fingerprint_fields(),
        **({"subset": job.subset} if job.subset else {}),
        **run_identity(loaded.manifest),  # a generated benchmark: its manifest's hash
    )
    subset = {"subset": job.subset} if job.subset else {}
    return RunSpec(
        report_id=resolve_report_id(config, job.store, kb_name, identity, job.resume),
        knowledge_base_name=kb_name,
        benchmark=loaded.manifest,
        query_modes=modes,
        groups=groups,
        evaluators=job.evaluators,
        config=config,
        label=label,
        store=job.store,
        progress=job.progress,
        knowledge_base_manifest=_kb_manifest(kbs),
        recipe_manifest=recipe_manifest,
        metadata={
            "fingerprint": identity,
            "run_units": [u.unit_id for u in loaded.units],
            **subset,
        },
    )


def recipe_result(
    job: RecipeRun, spec: RunSpec, report: Any, kbs: tuple[Any, ...] = ()
) -> BenchmarkRunResult:
    """What the run of ``job`` returns: its report, KBs and where the report was saved."""
    return BenchmarkRunResult(
        report=report, knowledge_bases=kbs, report_path=spec.report_path, label=job.label
    )


async def _build(
    loaded: LoadedBenchmark,
    recipe: Any,
    kb_name: str,
    config: BenchmarkRunConfig,
    workspace: Path,
    rebuild: bool,
) -> tuple[list[CaseGroup], list[Any]]:
    """One KB per run unit (usually one for the corpus) and the cases each one answers."""
    groups, kbs = [], []
    multi = len(loaded.units) > 1
    for unit in loaded.units:
        documents, cases = loaded.unit_inputs(unit)
        unit_kb = f"{kb_name}-{unit.unit_id}" if multi else kb_name
        kb = await _knowledge_base(recipe, documents, unit_kb, workspace, rebuild, loaded.manifest)
        kbs.append(kb)
        meta = {"knowledge_base_name": unit_kb, "benchmark_run_unit": unit.unit_id} if multi else {}
        groups.append(CaseGroup(cases=cases, answer=_answerer(kb, config), metadata=meta))
    return groups, kbs


async def _knowledge_base(
    recipe: Any,
    documents: Sequence[Any],
    name: str,
    workspace: Path,
    rebuild: bool,
    manifest: Any,
) -> Any:
    """``recipe`` itself when it is already a KB or a system, else the KB it builds (or its
    cached build); anything but the embedded KB goes through the one door (``as_system``).

    Recipes that take ``benchmark=`` (heta-framework's) get the manifest, so documents land
    under the benchmark's own ``raw/benchmarks/{name}/{split}/`` keys.
    """
    ids = [d.document_id for d in documents]
    if is_knowledge_base(recipe):
        system = as_system(recipe, benchmark_documents=ids)
        if isinstance(system, System):  # its results may be bare ids: explorers show our texts
            remember_documents(manifest.key, documents)
        return system
    extra = {"benchmark": manifest} if _accepts(recipe.build_knowledge_base, "benchmark") else {}
    built = await recipe.build_knowledge_base(
        documents, knowledge_base_name=name, workspace=workspace, rebuild=rebuild, **extra
    )
    return as_system(built, benchmark_documents=ids)


def _seen_before(job: RecipeRun, spec: RunSpec) -> bool:
    """Whether the store already holds this report id (a saved or checkpointed run)."""
    return job.store is not None and spec.report_id in job.store.report_ids(job.kb_name)


async def _checked(
    groups: list[CaseGroup], kbs: list[Any], modes: Sequence[str], config: BenchmarkRunConfig
) -> tuple[list[CaseGroup], dict[str, Any] | None]:
    """Dry-run a system's first cases (kept for the run): its output shape and id coverage."""
    if not groups or not isinstance(kbs[0], System):
        return groups, None
    first, system = groups[0], kbs[0]
    with frozen_results():  # as during the run: no full GC pass while the loop is needed
        answer, coverage = await preflight(
            first.answer,
            first.cases,
            modes,
            system.benchmark_documents,
            system=f"system {system.name!r}",
            n=config.preflight_queries,
            timeout=config.query_timeout,
            kind=system.manifest().get("kind"),
            concurrency=config.max_concurrent_queries,
        )
    checked = CaseGroup(cases=first.cases, answer=answer, metadata=first.metadata)
    return [checked, *groups[1:]], None if coverage is None else coverage.to_dict()


def _accepts(function: Any, parameter: str) -> bool:
    try:
        return parameter in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _answerer(kb: Any, config: BenchmarkRunConfig) -> Any:
    options = dict(config.query_options)
    if config.trace:
        options["trace"] = True
    if _is_builtin_kb(kb):  # CPU-bound: batched into a worker thread, the loop stays free
        return ThreadedQueries(kb, top_k=config.top_k, options=options).answer

    if isinstance(kb, System) and type(kb).query is System.query:  # not a subclass's own
        # its reply is read after the worker has asked its next query (runner._pool);
        # ``System.ask``'s coroutine is returned, not wrapped in one more of ours
        top_k = config.top_k

        def ask(case: Any, mode: str) -> Awaitable[Any]:
            return kb.ask(case.query, mode=mode, top_k=top_k, options=options)

        return ask

    async def answer(case: Any, mode: str) -> Any:
        return await kb.query(case.query, mode=mode, top_k=config.top_k, options=options)

    return answer


def _is_builtin_kb(kb: Any) -> bool:
    from heta_notebook.kb._knowledge_base import KnowledgeBase

    return isinstance(kb, KnowledgeBase)


def _modes(query_modes: Sequence[str] | str | None, kb: Any) -> tuple[str, ...]:
    offered = tuple(getattr(kb, "query_modes", ()) or ())
    modes = (query_modes,) if isinstance(query_modes, str) else tuple(query_modes or offered)
    if not modes or any(not isinstance(m, str) or not m.strip() for m in modes):
        raise ValueError(f"query_modes must be non-empty strings (this KB offers {offered})")
    modes = tuple(m.strip() for m in modes)
    any_mode = getattr(kb, "any_mode", False) is True  # a system that names no modes
    unknown = [m for m in modes if offered and not any_mode and m not in offered]
    if unknown:
        raise ValueError(f"unknown query mode(s) {unknown}; this knowledge base offers {offered}")
    return modes


def _recipe_manifest(recipe: Any, kb: Any, label: str) -> dict[str, Any]:
    if is_knowledge_base(recipe):  # a KB given directly: its manifest may name its recipe
        built = json_manifest(kb)
        inner = built.get("recipe") if isinstance(built, dict) else None
        if isinstance(inner, dict):
            return dict(inner)
        if isinstance(kb, System) and isinstance(built, dict):
            return {**built, "name": label}
        return {"name": label, "type": type(kb).__name__}
    manifest = json_manifest(recipe)
    return manifest if isinstance(manifest, dict) else {"name": label, "manifest": manifest}


def _kb_manifest(kbs: Sequence[Any]) -> dict[str, Any] | list[dict[str, Any]]:
    manifests = [json_manifest(kb) for kb in kbs]
    return manifests[0] if len(manifests) == 1 else {"knowledge_bases": manifests}
