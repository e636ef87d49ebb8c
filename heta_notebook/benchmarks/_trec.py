"""TREC files out and in: a report's ranking as a run file, a benchmark's qrels as a qrels file,
and an outside system's run file read back into a scored report.

Run lines are ``qid Q0 doc rank score tag``; qrels lines ``qid 0 doc relevance``. A run file
holds each case's documents (chunks mapped to documents, each at its best rank) in the order
the report's metrics rank them under its tie rule (``ties="trec_eval"``, the default of the
``beir_*`` metrics: score descending, ties by document id descending; or ``"as_returned"``).
The scores written are *rank-consistent* (``n, n-1, ..., 1``), so trec_eval and pytrec_eval
see exactly that order and reproduce the report's per-case numbers, ties included.
Reading a run applies trec_eval's rule: score descending, ties by document id descending.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from heta_notebook._util.paths import atomic_write_text
from heta_notebook.benchmarks._trec_read import read_trec_qrels, read_trec_run
from heta_notebook.schema._records import (
    BenchmarkCase,
    EvaluationCaseResult,
    EvaluationReport,
    QueryResponse,
    QueryResult,
)

PathArg = str | os.PathLike[str]
_SPACE = re.compile(r"\s")


def write_trec_run(
    report: EvaluationReport,
    path: PathArg,
    mode: str | None = None,
    run_tag: str | None = None,
    ties: str = "trec_eval",
) -> Path:
    """Write one query mode of ``report`` as a TREC run file whose order trec_eval keeps
    (the order the report's ``beir_*`` metrics rank under the tie rule ``ties``)."""
    mode = _one_mode(report, mode)
    tag = _token(run_tag or f"{report.label}.{mode}", "run_tag", path)
    from heta_notebook.evaluators._matching import document_scores
    from heta_notebook.evaluators._tie_rules import ranked_by_rule

    lines = []
    for result in report.case_results:
        if result.query_mode != mode or result.response is None:
            continue
        qid = _token(result.case_id, "case_id", path)
        ranked = ranked_by_rule(*document_scores(result.response.results), ties)[0]  # type: ignore[arg-type]
        for rank, doc in enumerate(ranked, start=1):
            doc = _token(doc, f"document id (case {result.case_id!r})", path)
            lines.append(f"{qid} Q0 {doc} {rank} {len(ranked) - rank + 1} {tag}\n")
    target = Path(path)
    atomic_write_text(target, "".join(lines))
    return target


def write_trec_qrels(source: Any, path: PathArg) -> Path:
    """Write the qrels of a benchmark (or loaded benchmark, cases, or report) as a TREC file."""
    lines = []
    for case_id, qrels in qrels_by_case(source).items():
        qid = _token(case_id, "case_id", path)
        for doc, grade in qrels.items():
            lines.append(f"{qid} 0 {_token(doc, 'document id', path)} {grade}\n")
    target = Path(path)
    atomic_write_text(target, "".join(lines))
    return target


def qrels_by_case(source: Any) -> dict[str, dict[str, int]]:
    """``{case id: {document id: grade}}`` from a benchmark, its cases, or a report."""
    from heta_notebook.evaluators._matching import qrels_of

    if isinstance(source, EvaluationReport):
        out: dict[str, dict[str, int]] = {}
        for result in source.case_results:
            expected = (result.metadata or {}).get("expected") or {}
            if result.case_id not in out and expected.get("evidence"):
                case = BenchmarkCase(case_id=result.case_id, query=result.query, expected=expected)
                out[result.case_id] = qrels_of(case.expected.evidence)
        return {k: v for k, v in out.items() if v}
    return {c.case_id: q for c in _cases(source) if (q := qrels_of(c.expected.evidence))}


def report_from_trec(
    path: PathArg,
    benchmark: Any = None,
    *,
    qrels: Any = None,
    queries: Any = None,
    name: str | None = None,
    split: str = "test",
    version: str = "1",
    other_queries: str = "error",
    label: str | None = None,
    mode: str = "trec_run",
    evaluators: Sequence[Any] | None = None,
) -> EvaluationReport:
    """Score an outside system's TREC run and return it as a report: on ``benchmark``, or on
    ``qrels`` alone (a TREC or BEIR qrels file, or ``{qid: {doc: grade}}``; no corpus needed).

    With ``qrels``, ``queries`` (``{qid: text}`` or a BEIR ``queries.jsonl``) only names the
    cases; the report's benchmark is ``benchmark``'s manifest when given (so it pairs with the
    library's reports on it), else ``name:version:split``. Documents are ranked as trec_eval
    ranks them; a judged query absent from the run gets an empty ranking (scores 0).
    ``other_queries``: a run query with no case here is an error (``"error"``, e.g. a run
    spanning two splits) or left out (``"ignore"``; ``reports_from_trec`` splits a run).
    """
    from heta_notebook.evaluators._kernels import trec_ranking
    from heta_notebook.evaluators._retrieval import beir_default_metrics, evaluate_batch_columns

    if other_queries not in ("error", "ignore"):
        raise ValueError(f"other_queries must be 'error' or 'ignore' (got {other_queries!r})")
    run = read_trec_run(path)
    manifest, cases, default_evaluators = _benchmark_cases(
        benchmark, qrels, queries, name, split, version
    )
    unknown = sorted(set(run) - {c.case_id for c in cases})
    if unknown and other_queries == "error":
        raise ValueError(
            f"{path}: {len(unknown)} of the run's {len(run)} query id(s) are not cases of "
            f"{manifest.key} (e.g. {', '.join(map(repr, unknown[:3]))}); a run spanning "
            "several splits: pass other_queries='ignore' to score this split only, or "
            "reports_from_trec(run, {split: qrels, ...}) for one report per split"
        )
    responses = [_response(trec_ranking(run.get(c.case_id, {})), run, c, mode) for c in cases]
    chosen = list(evaluators or default_evaluators or beir_default_metrics())
    columns = [list(c) for c in evaluate_batch_columns(chosen, cases, responses)]  # built once
    results = tuple(
        EvaluationCaseResult(
            case_id=case.case_id,
            query=case.query,
            query_mode=mode,
            scores=tuple(column[i] for column in columns),
            response=response,
            metadata={"expected": case.expected.to_dict()},
        )
        for i, (case, response) in enumerate(zip(cases, responses, strict=True))
    )
    now = datetime.now(timezone.utc).isoformat()
    name = label or Path(path).stem
    return EvaluationReport(
        report_id=f"trec-{_safe_id(name)}-{_safe_id(manifest.split)}",
        benchmark=manifest,
        knowledge_base_name=_safe_id(name),
        recipe_manifest={"name": name, "trec_run": str(path)},
        query_modes=(mode,),
        score_summary=_summary(results, mode),
        case_results=results,
        started_at=now,
        finished_at=now,
        metadata={"label": name, "source": "trec_run", "missing": "drop"},
    )


def reports_from_trec(
    path: PathArg, qrels: Mapping[str, Any], **options: Any
) -> dict[str, EvaluationReport]:
    """One report per split of a run spanning several: ``{split: qrels file or mapping}``;
    a run query judged in none of them is an error. Options as :func:`report_from_trec`."""
    run = read_trec_run(path)
    read = {split: _qrels_of(q) for split, q in qrels.items()}
    judged = {qid for q in read.values() for qid in q}
    orphans = sorted(set(run) - judged)
    if orphans:
        raise ValueError(
            f"{path}: {len(orphans)} query id(s) of the run are in none of the splits "
            f"{', '.join(read)} (e.g. {', '.join(map(repr, orphans[:3]))})"
        )
    return {
        split: report_from_trec(path, qrels=q, split=split, other_queries="ignore", **options)
        for split, q in read.items()
    }


def _qrels_of(source: Any) -> dict[str, dict[str, int]]:
    if isinstance(source, Mapping):
        return {str(q): {str(d): int(g) for d, g in docs.items()} for q, docs in source.items()}
    return read_trec_qrels(source)


def _benchmark_cases(
    benchmark: Any, qrels: Any, queries: Any, name: str | None, split: str, version: str
) -> tuple[Any, list[BenchmarkCase], tuple[Any, ...]]:
    """(manifest, cases, evaluators) from a benchmark, or from qrels (+ its manifest)."""
    from heta_notebook.benchmarks._loader import LoadedBenchmark
    from heta_notebook.benchmarks._protocol import load_benchmark_sync
    from heta_notebook.schema._records import BenchmarkManifest

    if qrels is None:
        if benchmark is None:
            raise TypeError("report_from_trec() needs a benchmark or qrels=")
        loaded = (
            benchmark if isinstance(benchmark, LoadedBenchmark) else load_benchmark_sync(benchmark)
        )
        return loaded.manifest, list(loaded.cases), tuple(loaded.evaluators)
    if isinstance(benchmark, BenchmarkManifest):
        manifest = benchmark
    elif isinstance(benchmark, EvaluationReport):
        manifest = benchmark.benchmark
    elif benchmark is not None:
        loaded = (
            benchmark if isinstance(benchmark, LoadedBenchmark) else load_benchmark_sync(benchmark)
        )
        manifest = loaded.manifest
    else:
        manifest = BenchmarkManifest(name=name or _qrels_name(qrels), version=version, split=split)
    texts = _query_texts(queries)
    cases = [_qrels_case(qid, docs, texts.get(qid)) for qid, docs in _qrels_of(qrels).items()]
    return manifest, cases, ()


def _qrels_name(qrels: Any) -> str:
    if isinstance(qrels, Mapping):
        return "qrels"
    file = Path(qrels)
    return file.parent.parent.name if file.parent.name == "qrels" else file.stem


def _query_texts(queries: Any) -> dict[str, str]:
    if queries is None:
        return {}
    if isinstance(queries, Mapping):
        return {str(k): str(v) for k, v in queries.items()}
    from heta_notebook.benchmarks._beir import read_queries

    return {qid: row["text"] for qid, row in read_queries(Path(queries)).items()}


def _qrels_case(qid: str, docs: Mapping[str, int], query: str | None) -> BenchmarkCase:
    """A case judged by qrels alone: each grade > 0 is evidence (as the BEIR loader does)."""
    from heta_notebook.schema._records import BenchmarkEvidence, BenchmarkExpected

    evidence = tuple(
        BenchmarkEvidence(reference_id=doc, metadata={"relevance": grade, "beir_document_id": doc})
        for doc, grade in docs.items()
        if grade > 0
    )
    meta = {"positive_qrels": len(evidence), "judged": len(docs)}
    return BenchmarkCase(
        case_id=qid,
        query=query or qid,
        expected=BenchmarkExpected(evidence=evidence, metadata=meta),
    )


def _response(
    ranked: list[str], run: Mapping[str, Mapping[str, float]], case: BenchmarkCase, mode: str
) -> QueryResponse:
    scores = run.get(case.case_id, {})
    results = tuple(
        QueryResult(
            id=doc, score=scores[doc], kind="document", source={"benchmark_document_id": doc}
        )
        for doc in ranked
    )
    return QueryResponse(mode=mode, results=results)


def _summary(results: Iterable[EvaluationCaseResult], mode: str) -> dict[str, float]:
    """``{"mode.score": mean}`` over scored values (the runner's ``score_summary`` keys)."""
    totals: dict[str, list[float]] = {}
    for result in results:
        for score in result.scores:
            if score.numeric is not None:
                totals.setdefault(f"{mode}.{score.name}", []).append(score.numeric)
    return {k: sum(v) / len(v) for k, v in totals.items()}


def _cases(source: Any) -> list[BenchmarkCase]:
    from heta_notebook.benchmarks._loader import LoadedBenchmark
    from heta_notebook.benchmarks._protocol import load_benchmark_sync

    if isinstance(source, LoadedBenchmark):
        return list(source.cases)
    if isinstance(source, (list, tuple)) and all(isinstance(c, BenchmarkCase) for c in source):
        return list(source)
    return list(load_benchmark_sync(source).cases)


def _one_mode(report: EvaluationReport, mode: str | None) -> str:
    modes = list(report.query_modes) or sorted({r.query_mode for r in report.case_results})
    if mode is None and len(modes) == 1:
        return modes[0]
    if mode in modes:
        return mode
    problem = "a TREC run holds one: pass mode=" if mode is None else f"no mode {mode!r}; pass"
    raise ValueError(
        f"report {report.report_id!r} has modes {', '.join(modes)}; {problem} one of them"
    )


def _token(value: str, what: str, path: PathArg) -> str:
    text = str(value)
    if not text or _SPACE.search(text):
        raise ValueError(f"{path}: {what} {text!r} cannot be written in a TREC file (whitespace)")
    return text


def _safe_id(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "run"


__all__ = [
    "qrels_by_case",
    "read_trec_qrels",
    "read_trec_run",
    "report_from_trec",
    "reports_from_trec",
    "write_trec_qrels",
    "write_trec_run",
]
