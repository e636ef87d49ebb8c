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

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from heta_notebook._util.paths import atomic_write_text
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
    from heta_notebook.evaluators._retrieval import ranked_by_rule

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


def read_trec_run(path: PathArg) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{query id: {document id: score}}`` (errors name the line)."""
    run: dict[str, dict[str, float]] = {}
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"no TREC run file at {file}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise ValueError(
                f"{file}:{number}: a TREC run line has 6 fields 'qid Q0 doc rank score tag', "
                f"got {len(parts)}: {line.strip()[:80]!r}"
            )
        qid, _, doc, _, score, _ = parts
        try:
            value = float(score)
        except ValueError:
            raise ValueError(f"{file}:{number}: score {score!r} is not a number") from None
        if not math.isfinite(value):
            raise ValueError(f"{file}:{number}: score {score!r} is not finite")
        if doc in run.setdefault(qid, {}):
            raise ValueError(f"{file}:{number}: document {doc!r} listed twice for query {qid!r}")
        run[qid][doc] = value
    if not run:
        raise ValueError(f"{file}: the TREC run file has no lines")
    return run


def report_from_trec(
    path: PathArg,
    benchmark: Any,
    *,
    label: str | None = None,
    mode: str = "trec_run",
    evaluators: Sequence[Any] | None = None,
) -> EvaluationReport:
    """Score an outside system's TREC run on ``benchmark`` and return it as a report.

    Documents are ranked as trec_eval ranks them (score descending, ties by document id
    descending); a benchmark case absent from the run gets an empty ranking (scores 0, as
    BEIR counts it). ``evaluators`` defaults to the benchmark's (else the BEIR metrics).
    """
    from heta_notebook.benchmarks._loader import LoadedBenchmark
    from heta_notebook.benchmarks._protocol import load_benchmark_sync
    from heta_notebook.evaluators._kernels import trec_ranking
    from heta_notebook.evaluators._retrieval import beir_default_metrics, evaluate_batch_columns

    run = read_trec_run(path)
    loaded = benchmark if isinstance(benchmark, LoadedBenchmark) else load_benchmark_sync(benchmark)
    cases = list(loaded.cases)
    unknown = sorted(set(run) - {c.case_id for c in cases})
    if unknown:
        raise ValueError(
            f"{path}: {len(unknown)} query id(s) of the run are not cases of {loaded.manifest.key} "
            f"(e.g. {', '.join(map(repr, unknown[:3]))}); is it the right benchmark?"
        )
    responses = [_response(trec_ranking(run.get(c.case_id, {})), run, c, mode) for c in cases]
    chosen = list(evaluators or loaded.evaluators or beir_default_metrics())
    columns = evaluate_batch_columns(chosen, cases, responses)
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
        report_id=f"trec-{_safe_id(name)}",
        benchmark=loaded.manifest,
        knowledge_base_name=_safe_id(name),
        recipe_manifest={"name": name, "trec_run": str(path)},
        query_modes=(mode,),
        score_summary=_summary(results, mode),
        case_results=results,
        started_at=now,
        finished_at=now,
        metadata={"label": name, "source": "trec_run"},
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
    "read_trec_run",
    "report_from_trec",
    "write_trec_qrels",
    "write_trec_run",
]
