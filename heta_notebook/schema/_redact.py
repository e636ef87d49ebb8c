"""The one redaction policy applied where a system's reply enters a report: the same split of
data and talk as the stored forms (``_records._redacted_case``), so a report in memory shows
exactly what its saved copy holds.

What a system said about itself (metadata, sources, citations, traces, extra fields) has its
credentials hidden; its data (answer, result ids and texts, scores) stays as it is, except
for values the user declared secret (``redaction.declare_secrets``), hidden everywhere.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any

from heta_notebook._util.redaction import (
    clean_values,
    declared_secrets,
    hide_declared,
    is_clean,
)
from heta_notebook.schema._records import (
    _RESPONSE_DATA,
    _RESULT_DATA,
    QueryResponse,
    QueryResult,
    _redacted_outside,
)


def redacted_response(response: QueryResponse) -> QueryResponse:
    """``response`` with credentials hidden as its stored copy hides them (itself when clean)."""
    if getattr(response.results, "built", None) is False:
        # the embedded KB's lazy results (corpus chunks, our own source fields): checking them
        # would build a record per result; their columns are filtered as they are written
        return _redacted_lazy(response)
    if not declared_secrets() and _clean(response):
        return response  # what the pass below would find: nothing to hide, without the copies
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


def _clean(response: QueryResponse) -> bool:
    """Whether ``redact`` would leave the dumped response as it is (no declared secrets):
    a check without copies or a dump of the results. Their fields outside the data are
    read as they are, column by column, and checked at once (:func:`_columns_clean`);
    anything it cannot tell at a glance (an extra field, another type) takes the full pass."""
    if not _outside_clean(response):
        return False
    results = response.results
    if not results:
        return True
    if set(map(type, results)) != {QueryResult} or any(map(_EXTRA, results)):
        return False
    fields = list(map(_FIELDS, results))
    return _columns_clean({name: list(map(itemgetter(name), fields)) for name in _RESULT_OUTSIDE})


def unchanged_by_redaction(
    response: QueryResponse, columns: Mapping[str, Collection[Any]] | None
) -> bool:
    """Whether :func:`redacted_response` returns ``response`` itself, read from its results'
    ``columns`` (kind, source, metadata: every distinct value of each field at least once)
    instead of its records: the check of a producer of array results
    (``evaluators._record_hits``), whose results must all be plain ``QueryResult`` records
    without extra fields. False may be a false alarm (the producer then keeps the records
    path). ``columns`` None: the producer found every value of those fields checked clean
    before (``_record_hits._Checked``)."""
    if declared_secrets() or not _outside_clean(response):
        return False
    return columns is None or _columns_clean(columns)


def _outside_clean(response: QueryResponse) -> bool:
    """Whether the response's own fields outside its data (citations, trace, metadata,
    extra fields) are left as they are by ``redact``."""
    fields = response.__dict__
    said = fields["citations"] or fields["trace"] or fields["metadata"]
    if not said and not response.__pydantic_extra__:
        return True  # nothing but mode, answer and results: all data
    outside = response.model_dump(mode="json", exclude={"results"})
    return all(is_clean(v) for k, v in outside.items() if k not in _RESPONSE_DATA)


def _columns_clean(columns: Mapping[str, Collection[Any]]) -> bool:
    """Whether ``redact`` leaves the results' fields outside the data as they are, given as
    one column per field: the distinct keys of dict columns and all values checked at once."""
    keys: list[Any] = []
    values: list[Any] = []
    for name in _RESULT_OUTSIDE:
        column = columns[name]
        if set(map(type, column)) == {dict}:
            keys += set(chain.from_iterable(column))
            values += chain.from_iterable(map(dict.values, column))
        else:
            values += column
    return clean_values(keys, values)


_FIELDS = attrgetter("__dict__")
_EXTRA = attrgetter("__pydantic_extra__")
_RESULT_OUTSIDE = tuple(name for name in QueryResult.model_fields if name not in _RESULT_DATA)


def _result(result: dict[str, Any]) -> dict[str, Any]:
    out = _redacted_outside(result, _RESULT_DATA)
    if declared_secrets() and isinstance(result.get("text"), str):
        out["text"] = hide_declared(result["text"])
    return out


__all__ = ["redacted_response", "unchanged_by_redaction"]
