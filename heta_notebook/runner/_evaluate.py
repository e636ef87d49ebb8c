"""``evaluate(function=, dataset=, evaluators=)``: HoneyHive-style experiments on any callable.

Each datapoint ``{"inputs": {...}, "ground_truth": {...}}`` becomes a ``BenchmarkCase`` whose
metadata keeps both dicts as given; the function's outputs become a ``QueryResponse`` whose
``metadata["outputs"]`` keeps them as returned (a string becomes ``{"answer": ...}``), so
decorated evaluators see the original dicts. Execution, isolation, progress,
checkpoints and statistics are the runner's (``_plan``, ``_pool``); the result is an
``EvaluationReport`` with one query mode: the function's name or ``label``.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from heta_notebook._util.jsondata import json_safe
from heta_notebook._util.loop import sync_form
from heta_notebook.benchmarks._generation_manifest import run_identity
from heta_notebook.benchmarks._loader import load_benchmark
from heta_notebook.reports._store import ReportStore
from heta_notebook.runner._config import BenchmarkRunConfig, coerce_config
from heta_notebook.runner._inputs import active_evaluators, as_store
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
from heta_notebook.runner._subset import CaseSubset
from heta_notebook.schema._records import (
    BenchmarkCase,
    BenchmarkManifest,
    EvaluationReport,
    QueryResponse,
    QueryResult,
)
from heta_notebook.systems._adapt import as_system, qualified_name, stamp_documents
from heta_notebook.systems._check import preflight
from heta_notebook.systems._normalize import normalize_response

__all__ = ["aevaluate", "evaluate"]


async def aevaluate(
    function: Callable[..., Any],
    dataset: Any,
    evaluators: Sequence[Any] = (),
    *,
    name: str | None = None,
    label: str | None = None,
    max_concurrency: int | None = None,
    store: ReportStore | str | os.PathLike[str] | None = None,
    report_id: str | None = None,
    resume: bool = False,
    progress: bool = True,
    config: BenchmarkRunConfig | dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    run_in_thread: bool = True,
    api_key: str | None = None,  # noqa: ARG001 - HoneyHive compatibility; never stored
    project: str | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int | None = None,
    case_ids: Sequence[str] | None = None,
    labels: dict[str, Any] | None = None,
) -> EvaluationReport:
    """Run ``function`` on every datapoint, score with ``evaluators``, return the report.

    ``dataset``: datapoints ``{"inputs", "ground_truth"}``, a DataFrame, or a benchmark.
    ``function(inputs)``, ``function(inputs, ground_truth)`` or ``function(datapoint)``, sync
    (run in a thread unless ``run_in_thread=False``) or async; it may return an answer
    string, a dict (``answer``, ``results``/``contexts``, ``citations``), a list of results
    or ``(answer, results)``. ``function`` may also be any system ``run_benchmark`` takes
    (an object with ``query``, a LangChain/LlamaIndex object, an ``HttpSystem``): it is
    asked ``query(case text)``. ``limit``/``sample`` (``seed``)/``case_ids``/``labels`` run
    a subset (part of the fingerprint). ``label`` names the query mode (default: the
    function's name); ``name`` the dataset. With a ``store``, cases are checkpointed and
    the report saved. ``await aevaluate(...)`` is this async form and ``evaluate(...)`` the
    sync one. HoneyHive's ``api_key``/``project`` are accepted; the key is never stored.
    """
    mode = label or _function_label(function)
    manifest, cases, documents = await _dataset_cases(dataset, name)
    active = coerce_config(config, max_concurrent_queries=max_concurrency, report_id=report_id)
    subset = CaseSubset.of(
        limit=limit, sample=sample, seed=active.seed if seed is None else seed,
        case_ids=case_ids, labels=labels,
    )  # fmt: skip
    cases = subset.select(cases) if subset.active else cases
    report_store = as_store(store)
    chosen = active_evaluators(_as_evaluator(ev) for ev in evaluators)
    active = deep_enough(active, chosen)
    identity = fingerprint(
        dataset=manifest.key,
        mode=mode,
        function=qualified_name(function),
        evaluators=[str(ev.name) for ev in chosen],
        config=active.fingerprint_fields(),
        **({"subset": subset.describe()} if subset.active else {}),
        **run_identity(manifest),  # a generated benchmark: its manifest's hash
    )
    extra: dict[str, Any] = {"function": qualified_name(function), "fingerprint": identity}
    if subset.active:
        extra["subset"] = subset.describe()
    if project:
        extra["project"] = project
    spec = RunSpec(
        report_id=resolve_report_id(active, report_store, mode, identity, resume),
        knowledge_base_name=mode,
        benchmark=manifest,
        query_modes=(mode,),
        groups=[
            CaseGroup(cases=cases, answer=_answerer(function, run_in_thread, documents, active))
        ],
        evaluators=chosen,
        config=active.model_copy(update={"metadata": {**active.metadata, **(metadata or {})}}),
        label=mode,
        store=report_store,
        progress=progress,
        recipe_manifest={"name": mode, "function": qualified_name(function)},
        metadata=extra,
    )
    if documents and not (report_store and spec.report_id in report_store.report_ids(mode)):
        (group,) = spec.groups  # a benchmark with a corpus: check ids before the run
        answer, coverage = await preflight(
            group.answer,
            group.cases,
            (mode,),
            frozenset(documents),
            system=f"function {mode!r}",
            n=active.preflight_queries,
            timeout=active.query_timeout,
            concurrency=active.max_concurrent_queries,
        )
        spec.groups = [CaseGroup(cases=group.cases, answer=answer, metadata=group.metadata)]
        if coverage is not None:
            spec.metadata["id_coverage"] = coverage.to_dict()
    warn_depth(chosen, active.top_k)
    report = await run_spec(spec)
    return propagate_cancel(report, [report])


evaluate = sync_form(
    aevaluate,
    "evaluate",
    "Run ``function`` on every datapoint, score with ``evaluators``, return the report "
    "(``aevaluate`` without ``await``: same arguments; works in scripts and notebook cells).\n\n"
    + inspect.cleandoc(aevaluate.__doc__ or ""),
)


# --------------------------------------------------------------------------- the dataset


async def _dataset_cases(
    dataset: Any, name: str | None
) -> tuple[BenchmarkManifest, list[BenchmarkCase], tuple[str, ...]]:
    """Cases (and a benchmark's document ids) from a benchmark, a DataFrame or datapoints."""
    if hasattr(dataset, "cases") and hasattr(dataset, "manifest"):
        loaded = await load_benchmark(dataset)
        return loaded.manifest, list(loaded.cases), tuple(d.document_id for d in loaded.documents)
    from heta_notebook.benchmarks._records import case_from_record

    if hasattr(dataset, "to_dict") and hasattr(dataset, "columns"):  # a pandas DataFrame
        rows = dataset.to_dict(orient="records")
    elif isinstance(dataset, (str, bytes, dict)):
        raise TypeError("dataset must be a list of datapoints, a DataFrame or a benchmark")
    else:
        rows = list(dataset)
    if not rows:
        raise ValueError("the dataset has no datapoints")
    cases = [_case(row, number, case_from_record) for number, row in enumerate(rows, start=1)]
    manifest = BenchmarkManifest(name=name or "dataset", task_type="experiment")
    return manifest, cases, ()


def _case(row: Any, number: int, case_from_record: Callable[..., BenchmarkCase]) -> BenchmarkCase:
    """A datapoint as a case, keeping its ``inputs``/``ground_truth`` exactly as given.

    Inputs without a text query field get their JSON as the query text; a ground truth that
    is not a dict is read as the answer (text) or the expected value (anything else).
    """
    if not (isinstance(row, dict) and ("inputs" in row or "ground_truth" in row)):
        return case_from_record(row, number)
    inputs, truth = json_safe(row.get("inputs")), json_safe(row.get("ground_truth"))
    case = case_from_record(
        {
            **row,
            "inputs": _parseable_inputs(inputs, number),
            "ground_truth": _parseable_truth(truth),
        },
        number,
    )
    metadata = {
        **case.metadata,
        "inputs": inputs if inputs is not None else {},
        "ground_truth": truth,
    }
    return case.model_copy(update={"metadata": metadata})


def _parseable_inputs(inputs: Any, number: int) -> dict[str, Any]:
    if not isinstance(inputs, dict):
        text = inputs if isinstance(inputs, str) else json.dumps(inputs, ensure_ascii=False)
        return {"query": text.strip() or f"datapoint {number}"}
    for key in ("query", "question", "input"):
        if isinstance(inputs.get(key), str) and inputs[key].strip():
            return {**inputs, "query": inputs[key]}
    text = json.dumps(inputs, ensure_ascii=False, sort_keys=True)[:500]
    return {**inputs, "query": text if inputs else f"datapoint {number}"}


def _parseable_truth(truth: Any) -> dict[str, Any]:
    if truth is None or isinstance(truth, dict):
        return truth or {}
    return {"answer": truth} if isinstance(truth, str) else {"value": truth}


# --------------------------------------------------------------------------- calling the function


def _answerer(
    function: Callable[..., Any],
    run_in_thread: bool,
    documents: tuple[str, ...] = (),
    config: BenchmarkRunConfig | None = None,
) -> Callable[[BenchmarkCase, str], Awaitable[QueryResponse]]:
    """An ``answer(case, mode)`` that calls ``function`` the way its signature asks (a
    system that is not a plain function is asked through ``systems.as_system``)."""
    if not _is_plain_callable(function):
        system = as_system(function, benchmark_documents=documents)
        top_k = config.top_k if config is not None else 10

        async def ask(case: BenchmarkCase, mode: str) -> QueryResponse:
            response = await system.query(case.query, top_k=top_k)
            return response.model_copy(update={"mode": mode})

        return ask
    style = _call_style(function)
    is_async = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
        type(function).__call__
    )

    async def answer(case: BenchmarkCase, mode: str) -> QueryResponse:
        args = _arguments(case, style)
        if is_async:
            value = await function(*args)
        elif run_in_thread:
            from heta_notebook._util.loop import in_daemon_thread

            value = await in_daemon_thread(function, *args)  # a hung call is abandoned
        else:
            value = function(*args)
        if inspect.isawaitable(value):
            value = await value
        return stamp_documents(response_from_outputs(value, mode), documents)

    return answer


def _is_plain_callable(function: Any) -> bool:
    """A function (or callable object) called HoneyHive's way, not a system with ``query``
    or a LangChain/LlamaIndex object."""
    from heta_notebook.systems._adapt import System
    from heta_notebook.systems._frameworks import framework_call

    if isinstance(function, System) or framework_call(function) is not None:
        return False
    return callable(function) and not callable(getattr(function, "query", None))


def _call_style(function: Callable[..., Any]) -> str:
    """``datapoint`` (one dict with both), ``inputs`` or ``inputs_ground_truth``."""
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return "inputs"
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return "inputs_ground_truth"
    if positional and positional[0].name == "datapoint":
        return "datapoint"
    if len(positional) >= 2 and (
        positional[1].name in ("ground_truth", "ground_truths", "expected")
        or positional[1].default is inspect.Parameter.empty
    ):
        return "inputs_ground_truth"
    return "inputs"


def _arguments(case: BenchmarkCase, style: str) -> tuple[Any, ...]:
    inputs = case.metadata.get("inputs", {"query": case.query, **case.labels})
    ground_truth = case.metadata.get("ground_truth", {})
    if style == "datapoint":
        return ({"inputs": inputs, "ground_truth": ground_truth},)
    if style == "inputs_ground_truth":
        return (inputs, ground_truth)
    return (inputs,)


def response_from_outputs(value: Any, mode: str) -> QueryResponse:
    """A ``QueryResponse`` keeping ``outputs`` as returned (a str becomes ``{"answer": str}``).

    ``answer`` is ``outputs["answer"]``; ``outputs["results"]`` (dicts) or ``["contexts"]``
    (texts) become ranked results so retrieval evaluators work too.
    """
    if isinstance(value, QueryResponse):
        return value
    if not isinstance(value, (str, dict)):  # results, (answer, results), records...
        response = normalize_response(value, mode, system="the function")
        return response.model_copy(
            update={"metadata": {**response.metadata, "outputs": json_safe(value)}}
        )
    outputs = {"answer": value} if isinstance(value, str) else json_safe(value)
    answer = outputs.get("answer") if isinstance(outputs, dict) else None
    return QueryResponse(
        mode=mode,
        answer=None if answer is None else str(answer),
        results=_results(outputs),
        metadata={"outputs": outputs},
    )


def _results(outputs: Any) -> tuple[QueryResult, ...]:
    """``outputs["results"]`` (ids, dicts, pairs...) or ``["contexts"]`` (texts) as results,
    read by the one normaliser (``systems._normalize``)."""
    if not isinstance(outputs, dict) or not any(k in outputs for k in ("results", "contexts")):
        return ()
    return normalize_response(outputs, "read", system="the function").results


# --------------------------------------------------------------------------- helpers


def _function_label(function: Any) -> str:
    """The function's name as the query mode (``function`` for lambdas and odd callables)."""
    name = getattr(function, "__name__", None) or type(function).__name__
    return name if name.isidentifier() else "function"


def _as_evaluator(candidate: Any) -> Any:
    """Plain functions are accepted as evaluators, as in HoneyHive (wrapped like ``@evaluator``)."""
    if hasattr(candidate, "evaluate") or not callable(candidate):
        return candidate
    from heta_notebook.evaluators._decorators import aevaluator, evaluator

    wrap = aevaluator if inspect.iscoroutinefunction(candidate) else evaluator
    return wrap(candidate)
