"""Record-by-record conversion between heta-framework's dataclasses and our pydantic records.

heta-framework's records are frozen dataclasses with the same field names as ours, so most
conversions go through a JSON-friendly dict. The few places where the two differ:

- heta's ``BenchmarkDocument`` has no ``text`` field (text travels as UTF-8 ``data``);
- heta's ``QueryResult.text`` and ``QueryResponse.answer`` must not be empty and are stripped;
- heta's ``QueryResponse.insights`` has no field of ours: it is kept in ``metadata["insights"]``;
- heta's skipped scores carry ``metadata.reason``; ours also set ``metadata.skip_reason``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from heta_notebook._util.jsondata import json_copy
from heta_notebook.integrations.heta._common import require_heta
from heta_notebook.schema._records import (
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkManifest,
    EvaluationScore,
    QueryResponse,
)

EMPTY_TEXT = "(empty)"  # heta-framework refuses an empty QueryResult.text


# --------------------------------------------------------------------------- benchmark inputs


def manifest_from_heta(manifest: Any) -> BenchmarkManifest:
    """Our BenchmarkManifest from heta-framework's."""
    return BenchmarkManifest.from_dict(json_copy(manifest.to_dict()))


def manifest_to_heta(manifest: BenchmarkManifest) -> Any:
    """heta-framework's BenchmarkManifest from ours (unknown fields go to metadata)."""
    heta = require_heta("converting a benchmark manifest")
    data = manifest.to_dict()
    known = {f: data.pop(f) for f in MANIFEST_FIELDS if f in data}
    known["metadata"] = {**known.get("metadata", {}), **data}
    return heta.BenchmarkManifest(**known)


MANIFEST_FIELDS = (  # heta's BenchmarkManifest fields (the rest goes to metadata)
    "name",
    "version",
    "split",
    "task_type",
    "build_scope",
    "homepage",
    "license",
    "citation",
    "metadata",
)


def document_from_heta(document: Any) -> BenchmarkDocument:
    """Our BenchmarkDocument from heta-framework's (bytes stay bytes, paths stay paths)."""
    return BenchmarkDocument(
        document_id=document.document_id,
        name=document.name,
        media_type=document.media_type,
        data=document.data,
        path=document.path,
        source_uri=document.source_uri,
        metadata=json_copy(document.metadata),
    )


def case_from_heta(case: Any) -> BenchmarkCase:
    """Our BenchmarkCase from heta-framework's."""
    return BenchmarkCase.from_dict(json_copy(case.to_dict()))


def case_to_heta(case: BenchmarkCase) -> Any:
    """heta-framework's BenchmarkCase from ours."""
    heta = require_heta("converting a benchmark case")
    expected = case.expected
    return heta.BenchmarkCase(
        case_id=case.case_id,
        query=case.query,
        expected=heta.BenchmarkExpected(
            answers=tuple(expected.answers),
            evidence=tuple(
                heta.BenchmarkEvidence(
                    reference_id=item.reference_id,
                    locator=dict(item.locator),
                    text=item.text,
                    metadata=dict(item.metadata),
                )
                for item in expected.evidence
            ),
            value=expected.value,
            metadata=dict(expected.metadata),
        ),
        labels=dict(case.labels),
        metadata=dict(case.metadata),
    )


# --------------------------------------------------------------------------- query responses


def response_from_heta(response: Any) -> QueryResponse:
    """Our QueryResponse from heta-framework's (``insights`` kept in metadata)."""
    metadata = json_copy(response.metadata)
    insights = getattr(response, "insights", ())
    if insights:
        metadata["insights"] = [
            {"text": item.text, "evidence_ids": list(item.evidence_ids)} for item in insights
        ]
    return QueryResponse.from_dict(
        {
            "mode": response.mode,
            "results": [
                _fields(r, "id", "text", "score", "kind", "source", "metadata")
                for r in response.results
            ],
            "answer": response.answer,
            "citations": [
                _fields(c, "id", "result_id", "source", "text", "metadata")
                for c in response.citations
            ],
            "trace": [_fields(t, "stage", "message", "metadata") for t in response.trace],
            "metadata": metadata,
        }
    )


def response_to_heta(response: QueryResponse) -> Any:
    """heta-framework's QueryResponse from ours (empty texts become a placeholder)."""
    require_heta("converting a query response")
    from heta_framework.kb.search import (
        QueryCitation,
        QueryInsight,
        QueryResult,
        QueryTraceEvent,
    )
    from heta_framework.kb.search import QueryResponse as HetaQueryResponse

    metadata = dict(response.metadata)
    insights = tuple(
        QueryInsight(text=i["text"], evidence_ids=tuple(i["evidence_ids"]))
        for i in metadata.pop("insights", None) or ()
        if isinstance(i, Mapping)
    )
    return HetaQueryResponse(
        mode=response.mode,
        results=tuple(
            QueryResult(
                id=r.id,
                text=r.text if r.text.strip() else EMPTY_TEXT,
                score=r.score,
                kind=r.kind,
                source=dict(r.source),
                metadata=dict(r.metadata),
            )
            for r in response.results
        ),
        answer=response.answer if response.answer and response.answer.strip() else None,
        citations=tuple(
            QueryCitation(
                id=c.id,
                result_id=c.result_id,
                source=dict(c.source),
                text=c.text,
                metadata=dict(c.metadata),
            )
            for c in response.citations
        ),
        trace=tuple(
            QueryTraceEvent(stage=t.stage, message=t.message, metadata=dict(t.metadata))
            for t in response.trace
        ),
        metadata=metadata,
        insights=insights,
    )


def _fields(obj: Any, *names: str) -> dict[str, Any]:
    return {name: json_copy(getattr(obj, name)) for name in names}


# --------------------------------------------------------------------------- scores


def score_from_heta(score: Any) -> EvaluationScore:
    """Our EvaluationScore from heta-framework's, following our skipped/error conventions."""
    metadata = json_copy(score.metadata)
    value = score.value
    if isinstance(value, float) and not math.isfinite(value):
        # heta-framework lets NaN/inf through; we record it as "nothing to score".
        metadata = {**metadata, "skipped": True, "original_value": str(value)}
        metadata.setdefault("skip_reason", f"heta-framework evaluator returned {value}")
        value = 0.0
    elif isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if metadata.get("skipped") and "skip_reason" not in metadata:
        metadata["skip_reason"] = str(metadata.get("reason") or "skipped by heta-framework")
    return EvaluationScore(name=score.name, value=value, passed=score.passed, metadata=metadata)


def score_to_heta(score: EvaluationScore) -> Any:
    """heta-framework's EvaluationScore from ours (metadata, incl. skipped/error, kept)."""
    heta = require_heta("converting a score")
    return heta.EvaluationScore(
        name=score.name, value=score.value, passed=score.passed, metadata=dict(score.metadata)
    )


__all__ = [
    "case_from_heta",
    "case_to_heta",
    "document_from_heta",
    "manifest_from_heta",
    "manifest_to_heta",
    "response_from_heta",
    "response_to_heta",
    "score_from_heta",
    "score_to_heta",
]
