"""The one redaction policy applied where a system's reply enters a report: the same split of
data and talk as the stored forms (``_records._redacted_case``), so a report in memory shows
exactly what its saved copy holds.

What a system said about itself (metadata, sources, citations, traces, extra fields) has its
credentials hidden; its data (answer, result ids and texts, scores) stays as it is, except
for values the user declared secret (``redaction.declare_secrets``), hidden everywhere.
"""

from __future__ import annotations

from typing import Any

from heta_notebook._util.redaction import declared_secrets, hide_declared
from heta_notebook.schema._records import (
    _RESPONSE_DATA,
    _RESULT_DATA,
    QueryResponse,
    _redacted_outside,
)


def redacted_response(response: QueryResponse) -> QueryResponse:
    """``response`` with credentials hidden as its stored copy hides them (itself when clean)."""
    if getattr(response.results, "built", None) is False:
        # the embedded KB's lazy results (corpus chunks, our own source fields): checking them
        # would build a record per result; their columns are filtered as they are written
        return _redacted_lazy(response)
    data = response.model_dump(mode="json")
    clean = _redacted_outside(data, _RESPONSE_DATA)
    clean["results"] = [_result(r) for r in data.get("results") or ()]
    if declared_secrets() and isinstance(data.get("answer"), str):
        clean["answer"] = hide_declared(data["answer"])
    return response if clean == data else QueryResponse.model_validate(clean)


def _redacted_lazy(response: QueryResponse) -> QueryResponse:
    """The response around lazy results redacted, the results left unbuilt."""
    fields = response.__dict__
    said = fields["answer"] or fields["citations"] or fields["trace"] or fields["metadata"]
    if not said and not response.__pydantic_extra__:
        return response  # nothing but its mode and results: nothing to hide
    data = response.model_dump(mode="json", exclude={"results"})
    clean = _redacted_outside(data, _RESPONSE_DATA)
    if declared_secrets() and isinstance(data.get("answer"), str):
        clean["answer"] = hide_declared(data["answer"])
    if clean == data:
        return response
    return response.model_copy(
        update={k: v for k, v in clean.items() if k in ("answer", "metadata")}
    )


def _result(result: dict[str, Any]) -> dict[str, Any]:
    out = _redacted_outside(result, _RESULT_DATA)
    if declared_secrets() and isinstance(result.get("text"), str):
        out["text"] = hide_declared(result["text"])
    return out


__all__ = ["redacted_response"]
