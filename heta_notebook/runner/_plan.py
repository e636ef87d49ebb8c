"""One run from start to report, shared by ``BenchmarkRunner`` and ``evaluate()``.

Plan the (case, mode) items in benchmark order × mode order, skip the ones a checkpoint
already holds, execute the rest in the bounded pool, then assemble, persist and return the
report. An interrupted run persists a partial report (``metadata["partial"] = True``) under
the same report id, so running again with that id (or ``resume=True``) finishes it.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TypeVar

from heta_notebook._util.loop import cancelled_with
from heta_notebook._util.redaction import redact
from heta_notebook._util.warn import user_stacklevel
from heta_notebook.evaluators._protocol import settings_of
from heta_notebook.runner._config import BenchmarkRunConfig
from heta_notebook.runner._inputs import json_manifest
from heta_notebook.runner._pool import (
    Answer,
    CaseMetadata,
    CheckpointSink,
    Execution,
    WorkItem,
    execute,
    frozen_results,
)
from heta_notebook.runner._progress import RunProgress
from heta_notebook.runner._statistics import ScoreColumns, environment, result_tallies, utc_now
from heta_notebook.schema._headline import headline_score
from heta_notebook.schema._records import (
    METADATA_REDACTED,
    BenchmarkCase,
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationReport,
)

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from heta_notebook.reports._run import RunHandle

T = TypeVar("T")


@dataclass(frozen=True)
class CaseGroup:
    """Cases answered by one backend (one KB, or one function), with result metadata."""

    cases: Sequence[BenchmarkCase]
    answer: Answer
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunSpec:
    """Everything one run needs; the report's identity and manifests included."""

    report_id: str
    knowledge_base_name: str
    benchmark: BenchmarkManifest
    query_modes: tuple[str, ...]
    groups: Sequence[CaseGroup]
    evaluators: Sequence[Any]
    config: BenchmarkRunConfig
    label: str
    store: Any = None
    progress: bool = True
    knowledge_base_manifest: dict[str, Any] | list[dict[str, Any]] = field(default_factory=dict)
    recipe_manifest: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    report_path: Path | None = None  # where its run handle saved the report

    def __post_init__(self) -> None:  # the one policy, before the header is written or shown
        self.knowledge_base_manifest = redact(self.knowledge_base_manifest)
        self.recipe_manifest = redact(self.recipe_manifest)
        self.metadata = redact(self.metadata)


async def run_spec(spec: RunSpec) -> EvaluationReport:
    """Execute ``spec`` (resuming from its checkpoint) and return the persisted report.

    With a store, the run holds the report id's checkpoint (its lock and fingerprint) from
    reading what is done to saving the report, so two processes never mix one report.
    """
    _note_depth(spec)
    persist = spec.store is not None and spec.config.persist_report
    if persist:
        with open_run(spec) as run:
            report = await _run_spec(spec, run)
    else:
        report = await _run_spec(spec, None)
    if report.is_partial:
        warnings.warn(
            _resume_hint(spec, report, persist), RuntimeWarning, stacklevel=user_stacklevel()
        )
    return report


def _note_depth(spec: RunSpec) -> None:
    """Record the scores whose k is deeper than the results a query asks for (the card and
    the CLI say so): ``beir_recall@100`` on ``top_k=10`` equals recall@10."""
    from heta_notebook.schema._status import KEY, deeper_scores

    deeper = deeper_scores(spec.evaluators, spec.config.top_k)
    if deeper:
        spec.metadata[KEY] = deeper


def deep_enough(config: BenchmarkRunConfig, evaluators: Sequence[Any]) -> BenchmarkRunConfig:
    """``config``, asking each query for as many results as its deepest score cuts at when the
    user did not choose ``top_k`` (``beir_recall@100`` then ranks 100 results, as BEIR's does)."""
    if "top_k" in config.model_fields_set:
        return config
    cuts = [getattr(ev, "k", None) for ev in evaluators]
    deepest = max((k for k in cuts if isinstance(k, int) and not isinstance(k, bool)), default=0)
    return config.model_copy(update={"top_k": deepest}) if deepest > config.top_k else config


def headline_of(evaluators: Sequence[Any]) -> str | None:
    """The score the progress bar and the live card follow (the card's headline rule)."""
    return headline_score([str(ev.name) for ev in evaluators])


def warn_depth(evaluators: Sequence[Any], top_k: int) -> None:
    """One ``DepthWarning`` per run call (not per recipe) when scores cut deeper than
    ``top_k``."""
    from heta_notebook.schema._status import KEY, DepthWarning, deeper_scores, depth_line

    deeper = deeper_scores(evaluators, top_k)
    if deeper:
        line = depth_line({KEY: deeper, "config": {"top_k": top_k}})
        warnings.warn(f"{line}.", DepthWarning, stacklevel=user_stacklevel())


def propagate_cancel(value: T, reports: Sequence[EvaluationReport]) -> T:
    """``value``, unless a cancel (``task.cancel()``, ``asyncio.timeout``, the stop button)
    ended a run: then, its partial report saved, a ``CancelledError`` carrying ``value``."""
    if any(r.metadata.get("interrupted") == "CancelledError" for r in reports):
        raise cancelled_with(value)
    return value


def open_run(spec: RunSpec) -> RunHandle:
    """The store's handle on this run's report id (folder, lock, fingerprint, checkpoint)."""
    return spec.store.run(
        spec.knowledge_base_name,
        spec.report_id,
        fingerprint=spec.metadata.get("fingerprint"),
        force=spec.config.force_resume,
    )


async def _run_spec(spec: RunSpec, run: RunHandle | None) -> EvaluationReport:
    started_at, clock = utc_now(), time.perf_counter()
    finished = finished_results(run) if run is not None else {}
    pending = _count_pending(spec, finished)
    progress = RunProgress(
        total=_total(spec),
        initial=_total(spec) - pending,
        desc=spec.label,
        enabled=spec.progress,
        headline=headline_of(spec.evaluators),
        modes=spec.query_modes,
    )
    sink = CheckpointSink(run, spec.config) if run is not None else None
    # filled as results arrive: the statistics only order them; a local checkpoint's columns
    # (built anyway) give them their scores instead of a second walk of every score
    columns = ScoreColumns(run.batches if run is not None else None)
    with frozen_results():  # no full GC pass over the results while the loop is needed
        try:
            execution = await execute(
                _items(spec, finished),
                evaluators=spec.evaluators,
                config=spec.config,
                sink=sink,
                progress=progress,
                on_result=columns.add,
                on_batch=columns.fold,  # each batch's columns read as it is delivered
            )
        finally:
            progress.close()
        results = _ordered_results(spec, finished, execution, columns)
        seconds = time.perf_counter() - clock
        resumed = len(finished)
        report = _report(spec, run, results, columns, execution, started_at, seconds, resumed)
    if run is not None:
        spec.report_path = run.save(report)
        run.drop_shards()  # an interrupted Ray run's shards: the saved report holds them
        if not report.is_partial and run.saved:
            run.discard()  # the complete report holds every checkpointed row
    return report


def _resume_hint(spec: RunSpec, report: EvaluationReport, persisted: bool) -> str:
    done = f"{len(report.case_results)} of {_total(spec)} case results"
    if not persisted:
        return f"run {spec.label!r} interrupted with {done} (no store: pass store= to resume)"
    return (
        f"run {spec.label!r} interrupted with {done}, saved as a partial report; "
        f"run again with resume=True or config report_id={spec.report_id!r} to finish it"
    )


def fingerprint(**identity: Any) -> str:
    """A hash of what determines a run's results (benchmark, recipe, modes...): resume must match."""
    text = json.dumps(identity, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolve_report_id(
    config: BenchmarkRunConfig,
    store: Any,
    kb_name: str,
    fingerprint: str,
    resume: bool,
) -> str:
    """The given id; with ``resume``, the latest run of the same fingerprint; else a new id."""
    if config.report_id:
        return config.report_id
    prefix = f"eval-{fingerprint[:12]}"
    if resume and store is not None:
        previous = [rid for rid in store.report_ids(kb_name) if rid.startswith(prefix)]
        if previous:
            return max(previous)
    return f"{prefix}-{datetime.now(timezone.utc).strftime('%Y%m%d-%H%M%S-%f')}"


def finished_results(run: RunHandle) -> dict[tuple[str, str], EvaluationCaseResult]:
    """What an earlier run of this report id finished: its saved (partial) report, its
    checkpoint and an interrupted Ray run's shards (a later record replaces an earlier one)."""
    finished: dict[tuple[str, str], EvaluationCaseResult] = {}
    previous = run.previous()
    if previous is not None:
        for result in previous.case_results:
            finished[(result.case_id, result.query_mode)] = result
    for result in (*run.read(), *run.shard_results()):
        finished[(result.case_id, result.query_mode)] = result
    return finished


def _pairs(spec: RunSpec) -> Iterator[tuple[int, CaseGroup, BenchmarkCase, str]]:
    index = 0
    for group in spec.groups:
        for case in group.cases:
            for mode in spec.query_modes:
                yield index, group, case, mode
                index += 1


def _total(spec: RunSpec) -> int:
    return sum(len(group.cases) for group in spec.groups) * len(spec.query_modes)


def _count_pending(spec: RunSpec, finished: dict[tuple[str, str], Any]) -> int:
    if not finished:
        return _total(spec)
    return sum(1 for _, _, case, mode in _pairs(spec) if (case.case_id, mode) not in finished)


def _items(spec: RunSpec, finished: dict[tuple[str, str], Any]) -> Iterator[WorkItem]:
    """Lazily yield the work still to do (one metadata dict per case, shared by its modes)."""
    last_case: BenchmarkCase | None = None
    metadata: CaseMetadata | None = None
    for index, group, case, mode in _pairs(spec):
        if (case.case_id, mode) in finished:
            continue
        if case is not last_case or metadata is None:  # built with its first result
            last_case, metadata = case, CaseMetadata(case, group.metadata)
        yield WorkItem(index, case, mode, group.answer, metadata)


def _ordered_results(
    spec: RunSpec,
    finished: dict[tuple[str, str], EvaluationCaseResult],
    execution: Execution,
    columns: ScoreColumns,
) -> list[EvaluationCaseResult]:
    """Results in benchmark order × mode order; resumed ones are added to ``columns`` here."""
    ordered = []
    for index, _, case, mode in _pairs(spec):
        result = execution.results.get(index)
        if result is None:
            result = finished.get((case.case_id, mode))
            if result is not None:
                columns.add(index, result)  # executed results were added on delivery
        if result is not None:
            ordered.append(result)
    return ordered


def _report(
    spec: RunSpec,
    run: RunHandle | None,
    results: list[EvaluationCaseResult],
    columns: ScoreColumns,
    execution: Execution,
    started_at: str,
    seconds: float,
    resumed: int,
) -> EvaluationReport:
    pending = columns.start_statistics(spec.config)  # its bootstrap may run beside this
    latency, counts = result_tallies(results)
    summary, stats = pending.result()
    partial = execution.interrupted is not None or len(results) < _total(spec)
    metadata = {
        **spec.config.metadata,
        **spec.metadata,
        "label": spec.label,
        "partial": partial,
        **({"interrupted": execution.interrupted} if execution.interrupted else {}),
        "n_expected_results": _total(spec),
        "n_results": len(results),
        **counts,
        "resumed": resumed,
        "score_stats": stats,
        "latency": latency,
        "evaluators": [_describe(ev) for ev in spec.evaluators],
        "config": spec.config.model_dump(mode="json"),
        "seed": spec.config.seed,
        "environment": environment(),
        "duration_s": round(seconds, 3),
    }
    fields = dict(
        report_id=spec.report_id,
        report_key=run.report_key if run is not None else None,  # None: the report is not saved
        benchmark=spec.benchmark,
        knowledge_base_name=spec.knowledge_base_name,
        knowledge_base_manifest=spec.knowledge_base_manifest,
        recipe_manifest=spec.recipe_manifest,
        query_modes=spec.query_modes,
        score_summary=summary,
        case_results=tuple(results),
        started_at=started_at,
        finished_at=utc_now(),
        metadata=_redacted(metadata),
    )
    report = EvaluationReport.model_validate(fields, context=METADATA_REDACTED)
    report.frames().prime(aggregates=columns.aggregates)  # its card and save reuse them
    return report


_OWN_NUMBERS = ("score_stats", "latency")  # numbers under the run's own mode and score names


def _redacted(metadata: dict[str, Any]) -> dict[str, Any]:
    """``redact(metadata)`` without walking the statistics (thousands of numbers, a fifth of
    a 3,600-case run's report time): only the text scores' counted values can hold text.
    The report is validated with ``METADATA_REDACTED``: its validator does not walk it again."""
    clean = redact({k: v for k, v in metadata.items() if k not in _OWN_NUMBERS})
    stats = {
        key: {**entry, "counts": redact(entry["counts"])} if "counts" in entry else entry
        for key, entry in metadata["score_stats"].items()
    }
    own = {"score_stats": stats, "latency": metadata["latency"]}
    return {k: own[k] if k in own else clean[k] for k in metadata}


def _describe(evaluator: Any) -> dict[str, Any]:
    kind = type(evaluator)
    described: dict[str, Any] = {
        "name": str(evaluator.name),
        "type": f"{kind.__module__}.{kind.__qualname__}",
        "settings": settings_of(evaluator).model_dump(mode="json"),
    }
    if callable(getattr(evaluator, "manifest", None)):  # e.g. a judge's model and prompt version
        described["manifest"] = json_manifest(evaluator)
    return described
