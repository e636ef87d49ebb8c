"""Reports both ways: ours → ``heta_framework.evaluation.EvaluationReport`` → ours, losslessly.

Both libraries write the same ``report.json`` layout (schema_version "1"), so a report from
heta-framework loads with ``EvaluationReport.load``. Going the other way, a few things of
ours have no place in heta-framework's dataclasses: unknown fields from newer writers, and
texts heta-framework normalises (it strips result texts and answers and refuses empty ones).
Those are kept in the record's ``metadata["_heta_notebook"]`` and put back by
:func:`from_heta_report`, so ours → theirs → ``to_dict()`` → ours gives the same report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heta_notebook.integrations.heta._common import require_heta
from heta_notebook.integrations.heta._records import EMPTY_TEXT, MANIFEST_FIELDS
from heta_notebook.reports._heta_json import STASH_KEY, from_heta_report
from heta_notebook.schema._records import EvaluationReport

_FIELDS = {
    "report": (
        "schema_version",
        "report_id",
        "report_key",
        "benchmark",
        "knowledge_base_name",
        "knowledge_base_manifest",
        "recipe_manifest",
        "query_modes",
        "score_summary",
        "case_results",
        "started_at",
        "finished_at",
        "metadata",
    ),
    "manifest": MANIFEST_FIELDS,
    "case": (
        "case_id",
        "query",
        "query_mode",
        "scores",
        "response",
        "latency_ms",
        "error",
        "metadata",
    ),
    "score": ("name", "value", "passed", "metadata"),
    "error": ("message", "error_type", "retryable", "metadata"),
    "response": ("mode", "results", "answer", "citations", "trace", "metadata"),
    "result": ("id", "text", "score", "kind", "source", "metadata"),
    "citation": ("id", "result_id", "source", "text", "metadata"),
    "trace": ("stage", "message", "metadata"),
}


# --------------------------------------------------------------------------- ours → theirs


def to_heta_report(report: EvaluationReport | Mapping[str, Any]) -> Any:
    """heta-framework's ``EvaluationReport`` holding everything in ``report`` (no loss)."""
    heta = require_heta("to_heta_report")
    ours = report if isinstance(report, EvaluationReport) else EvaluationReport.load(report)
    data = ours.to_dict()
    known = _split(data, "report")
    return heta.EvaluationReport(
        **{k: v for k, v in known.items() if k not in ("benchmark", "case_results")},
        benchmark=_manifest(heta, data["benchmark"]),
        case_results=tuple(_case_result(heta, c) for c in data["case_results"]),
    )


def _split(data: Mapping[str, Any], kind: str, **originals: Any) -> dict[str, Any]:
    """The fields heta knows; unknown ones and ``originals`` go to ``metadata[STASH_KEY]``."""
    names = _FIELDS[kind]
    known = {k: v for k, v in data.items() if k in names}
    stash: dict[str, Any] = {}
    extra = {k: v for k, v in data.items() if k not in names}
    if extra:
        stash["extra"] = extra
    if originals:
        stash["original"] = originals
    metadata = dict(known.get("metadata") or {})
    if stash:
        metadata[STASH_KEY] = stash
    known["metadata"] = metadata
    return known


def _manifest(heta: Any, data: Mapping[str, Any]) -> Any:
    known = _split(data, "manifest")
    return heta.BenchmarkManifest(**known)


def _case_result(heta: Any, data: Mapping[str, Any]) -> Any:
    known = _split(data, "case")
    response, error = known.get("response"), known.get("error")
    known["scores"] = tuple(heta.EvaluationScore(**_split(s, "score")) for s in known["scores"])
    known["response"] = _response(data=response) if response is not None else None
    known["error"] = heta.EvaluationError(**_split(error, "error")) if error else None
    return heta.EvaluationCaseResult(**known)


def _response(data: Mapping[str, Any]) -> Any:
    from heta_framework.kb.search import QueryCitation, QueryResult, QueryTraceEvent
    from heta_framework.kb.search import QueryResponse as HetaQueryResponse

    answer = data.get("answer")
    heta_answer = (answer.strip() or None) if answer is not None else None
    changed = {"answer": answer} if answer != heta_answer else {}
    known = _split(data, "response", **changed)
    known["answer"] = heta_answer
    known["results"] = tuple(QueryResult(**_result(r)) for r in known["results"])
    known["citations"] = tuple(QueryCitation(**_split(c, "citation")) for c in known["citations"])
    known["trace"] = tuple(QueryTraceEvent(**_split(t, "trace")) for t in known["trace"])
    return HetaQueryResponse(**known)


def _result(data: Mapping[str, Any]) -> dict[str, Any]:
    text = data.get("text", "")
    changed = {"text": text} if text != text.strip() or not text.strip() else {}
    known = _split(data, "result", **changed)
    known["text"] = text.strip() or EMPTY_TEXT
    return known


# --------------------------------------------------------------------------- theirs → ours


__all__ = ["STASH_KEY", "from_heta_report", "to_heta_report"]
