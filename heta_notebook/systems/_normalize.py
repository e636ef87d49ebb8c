"""What a system returned, read as a ``QueryResponse``: the one place that knows the shapes.

Accepted (``ACCEPTED_FORMS`` says the same to users): a ``QueryResponse``; a list of results
(``QueryResult``s, id strings, ``(id, score)`` pairs, dicts, LangChain ``Document``s,
LlamaIndex ``NodeWithScore``s); ``(answer, results)``; a dict ``{"answer", "results" |
"contexts" (texts) | "context" | "source_documents", "citations", ...}``; an answer string; a
LlamaIndex response (``.response`` + ``.source_nodes``); a record with ``to_dict()``.
An **abstention** (no answer, on purpose) is ``Abstain(reason)``, ``(Abstain(reason), results)``,
a dict whose ``"answer"`` is an ``Abstain`` (a LangChain ``RunnableParallel`` whose answer step
abstained) or a dict with ``"abstain": True`` (or the reason as its value) and an optional
``"reason"``;
it becomes ``QueryResponse.abstention`` (``answer=None``, ``metadata.abstained``).
Anything else is one :class:`SystemOutputError` naming the type it got and these forms.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from heta_notebook._util.jsondata import json_safe
from heta_notebook.schema._abstain import ABSTAIN_REASON, ABSTAINED, Abstain
from heta_notebook.schema._records import (
    QueryCitation,
    QueryResponse,
    QueryResult,
)

ACCEPTED_FORMS = (
    "a QueryResponse; a list of results, each a QueryResult, an id string, an (id, score) "
    "pair, a dict with 'id' (and optional 'text', 'score', 'document_id', 'metadata'), a "
    "LangChain Document or a LlamaIndex NodeWithScore; an (answer, results) pair; a dict "
    "{'answer': ..., 'results': [...] or 'contexts': [texts], 'citations': [...]}; an answer string; "
    "a LlamaIndex response with source_nodes; to abstain, Abstain(reason), (Abstain(reason), "
    "results) or {'abstain': True, 'reason': ..., 'results': [...]}"
)
_RESULT_KEYS = ("results", "contexts", "context", "source_documents", "source_nodes")
_RESULT_FIELDS = ("id", "text", "score", "kind", "source", "metadata", "document_id")
DocumentId = str | Callable[[QueryResult], Any] | None
NO_RESULTS = "no_results"  # response metadata: what a reply held when it gave no results
MADE_UP_ID = "made_up_id"  # result source flag: the system gave no id, this one is a placeholder


class SystemOutputError(TypeError):
    """A system returned a shape the adapter cannot read (raised once, before the run)."""

    def __init__(self, system: str, got: Any, where: str = "") -> None:
        kind = type(got).__module__ + "." + type(got).__qualname__
        kind = kind.removeprefix("builtins.")
        place = f" ({where})" if where else ""
        super().__init__(
            f"{system} returned {kind}{place}, which is not a shape heta_notebook can read. "
            f"Return {ACCEPTED_FORMS}."
        )

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # pickled by its message: a Ray worker's dry run hands it to the driver
        return _output_error, (str(self),)


def _output_error(message: str) -> SystemOutputError:
    """A :class:`SystemOutputError` with ``message`` as it was (the unpickling side)."""
    error = SystemOutputError.__new__(SystemOutputError)
    TypeError.__init__(error, message)
    return error


def normalize_response(
    value: Any,
    mode: str,
    *,
    system: str = "the system",
    document_id: DocumentId = None,
    id_key: str | None = None,
) -> QueryResponse:
    """``value`` (any accepted form) as a ``QueryResponse`` in ``mode``; else one clear error.

    ``document_id`` maps each result to its benchmark document: a field name (looked up in
    the result, its metadata and source) or a callable ``(QueryResult) -> id``.
    ``id_key`` names the metadata key holding a LangChain document's id.
    """
    response = _response(value, mode, system, id_key)
    if document_id is not None:
        results = tuple(map_document(r, document_id) for r in response.results)
        response = response.model_copy(update={"results": results})
    return response


def _response(value: Any, mode: str, system: str, id_key: str | None) -> QueryResponse:
    if isinstance(value, QueryResponse):
        return value if value.mode == mode else value.model_copy(update={"mode": mode})
    if isinstance(value, Abstain):
        return _abstention(value.reason, value.results, mode, system, id_key)
    if isinstance(value, str):
        return QueryResponse(mode=mode, answer=value)
    if hasattr(value, "source_nodes") and hasattr(value, "response"):  # LlamaIndex response
        answer = None if value.response is None else str(value.response)
        value = {"answer": answer, "results": list(value.source_nodes or ())}
    elif hasattr(value, "to_dict") and not isinstance(value, Mapping):  # heta-framework record
        value = value.to_dict()
    if isinstance(value, Mapping):
        return _from_dict(value, mode, system, id_key)
    if _is_answer_pair(value):
        answer, results = value
        if isinstance(answer, Abstain):
            return _abstention(answer.reason, results, mode, system, id_key)
        return QueryResponse(
            mode=mode,
            answer=None if answer is None else str(answer),
            results=as_results(results, system, id_key),
        )
    if isinstance(value, (list, tuple)) or _is_iterable_results(value):
        return QueryResponse(mode=mode, results=as_results(list(value), system, id_key))
    raise SystemOutputError(system, value)


def _abstention(
    reason: Any, results: Any, mode: str, system: str, id_key: str | None, **metadata: Any
) -> QueryResponse:
    """An abstention with ``results`` read like any other results."""
    text = None if reason is None or isinstance(reason, bool) else str(reason).strip() or None
    found = as_results(list(results or ()), system, id_key)
    return QueryResponse.abstention(mode, text, found, **json_safe(metadata))


def _from_dict(value: Mapping[str, Any], mode: str, system: str, id_key: str | None) -> Any:
    key = next((k for k in _RESULT_KEYS if k in value), None)
    if (
        value.get("abstain")
        or value.get(ABSTAINED) is True
        or isinstance(value.get("answer"), Abstain)
    ):
        return _dict_abstention(value, key, mode, system, id_key)
    known = {"mode", "answer", "citations", "trace", "metadata", *_RESULT_KEYS}
    if key is None and not (known & set(value)):
        raise SystemOutputError(system, value, f"a dict with keys {sorted(value)[:8]}")
    results = _dict_results(value, key, system, id_key)
    answer = value.get("answer")
    extra = {k: json_safe(v) for k, v in value.items() if k not in known}
    metadata = {**dict(value.get("metadata") or {}), **extra}
    try:
        return QueryResponse(
            mode=mode,
            results=results,
            answer=None if answer is None else str(answer),
            citations=citations_for(value.get("citations") or (), results),
            trace=tuple(value.get("trace") or ()),
            metadata=json_safe(metadata),
        )
    except ValueError as exc:
        raise SystemOutputError(system, value, f"unreadable fields: {exc}") from None


def _dict_abstention(
    value: Mapping[str, Any], key: str | None, mode: str, system: str, id_key: str | None
) -> QueryResponse:
    """``{"abstain": True | reason, "reason": ...}`` or ``{"answer": Abstain(reason), ...}``
    (a LangChain ``RunnableParallel`` whose answer step abstained): the dict's results are
    kept (else the ``Abstain``'s own), its other keys become metadata."""
    answer = value.get("answer")
    if isinstance(answer, Abstain):
        reason: Any = answer.reason
        results = _dict_results(value, key, system, id_key) if key else answer.results
    else:
        flag = value.get("abstain")
        reason = value.get("reason", value.get(ABSTAIN_REASON, flag))
        results = _dict_results(value, key, system, id_key)
    skip = {"abstain", ABSTAINED, "reason", ABSTAIN_REASON, "answer", "mode", *_RESULT_KEYS}
    rest = {k: v for k, v in value.items() if k not in skip}
    meta = {**dict(rest.pop("metadata", None) or {}), **rest}
    return _abstention(reason, results, mode, system, id_key, **meta)


def _dict_results(
    value: Mapping[str, Any], key: str | None, system: str, id_key: str | None
) -> tuple[QueryResult, ...]:
    """The results under ``key``; ``contexts`` holding texts (ragas style) get made-up ids."""
    if key is None:
        return ()
    items = value.get(key) or ()
    if key == "contexts" and isinstance(items, (list, tuple)):  # texts, not ids
        items = [
            {"id": f"context-{i}", "text": t, "source": {MADE_UP_ID: True}}
            if isinstance(t, str)
            else t
            for i, t in enumerate(items)
        ]
    return as_results(items, system, id_key)


def _is_answer_pair(value: Any) -> bool:
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and (value[0] is None or isinstance(value[0], (str, Abstain)))
        and isinstance(value[1], (list, tuple))
    )


def _is_iterable_results(value: Any) -> bool:
    return hasattr(value, "__iter__") and not isinstance(value, (str, bytes, Mapping))


def as_results(
    items: Sequence[Any], system: str = "the system", id_key: str | None = None
) -> tuple[QueryResult, ...]:
    """Each item (any accepted result form) as a ``QueryResult``, in the order given."""
    if isinstance(items, (str, bytes, Mapping)) or not hasattr(items, "__iter__"):
        raise SystemOutputError(system, items, "as the results")
    return tuple(_result(item, rank, system, id_key) for rank, item in enumerate(items, 1))


def _result(item: Any, rank: int, system: str, id_key: str | None) -> QueryResult:
    if isinstance(item, QueryResult):
        return item
    if isinstance(item, str):
        return QueryResult(id=item) if item.strip() else _bad(system, item, rank)
    if isinstance(item, (tuple, list)) and len(item) == 2 and _is_score(item[1]):
        return QueryResult(id=str(item[0]), score=float(item[1]))
    if hasattr(item, "page_content"):  # a LangChain Document
        return _langchain_result(item, rank, id_key)
    if hasattr(item, "node") and hasattr(item, "score"):  # a LlamaIndex NodeWithScore
        return _llamaindex_result(item.node, item.score)
    if hasattr(item, "to_dict") and not isinstance(item, Mapping):
        item = item.to_dict()
    if isinstance(item, Mapping):
        return _dict_result(item, rank, system)
    return _bad(system, item, rank)


def _bad(system: str, item: Any, rank: int) -> QueryResult:
    raise SystemOutputError(system, item, f"as result {rank}")


def _is_score(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _dict_result(item: Mapping[str, Any], rank: int, system: str) -> QueryResult:
    text = item.get("text", item.get("content", item.get("page_content", "")))
    doc = item.get("document_id")
    rid = item.get("id") or item.get("chunk_id") or doc
    source = dict(item.get("source") or {})
    if not rid:
        rid, source[MADE_UP_ID] = f"result-{rank}", True
    if doc is not None and not source.get("document_id"):
        source["document_id"] = str(doc)
    skip = {*_RESULT_FIELDS, "content", "page_content", "chunk_id"}
    metadata = {
        **dict(item.get("metadata") or {}),
        **{k: v for k, v in item.items() if k not in skip},
    }
    try:
        return QueryResult(
            id=str(rid),
            text="" if text is None else str(text),
            score=item.get("score"),
            kind=item.get("kind") or "chunk",
            source=json_safe(source),
            metadata=json_safe(metadata),
        )
    except ValueError as exc:
        raise SystemOutputError(system, dict(item), f"result {rank}: {exc}") from None


def _langchain_result(document: Any, rank: int, id_key: str | None) -> QueryResult:
    metadata = json_safe(dict(getattr(document, "metadata", None) or {}))
    named = metadata.get(id_key) if id_key else None
    rid = named or getattr(document, "id", None)
    score = metadata.get("score")
    return QueryResult(
        id=str(rid or f"result-{rank}"),
        text=str(document.page_content),
        score=score if _is_score(score) else None,
        source={} if rid else {MADE_UP_ID: True},
        metadata=metadata,
    )


def _llamaindex_result(node: Any, score: Any) -> QueryResult:
    source = {"document_id": str(node.ref_doc_id)} if getattr(node, "ref_doc_id", None) else {}
    get_content = getattr(node, "get_content", None)
    text = get_content() if callable(get_content) else getattr(node, "text", "")
    return QueryResult(
        id=str(node.node_id),
        text=str(text),
        score=float(score) if _is_score(score) else None,
        source=source,
        metadata=json_safe(dict(getattr(node, "metadata", None) or {})),
    )


def describe_value(value: Any) -> str:
    """What a system returned, in a few words for a message: a dict's keys, a list's length."""
    if isinstance(value, Mapping):
        return f"a dict with keys {sorted(map(str, value))[:10]}"
    kind = type(value).__module__ + "." + type(value).__qualname__
    kind = kind.removeprefix("builtins.")
    try:
        return f"{kind} of length {len(value)}"
    except TypeError:
        return "None" if value is None else kind


def citations_for(items: Any, results: Sequence[QueryResult]) -> tuple[QueryCitation, ...]:
    """Citations from ``QueryCitation``s, result ids, 1-based result numbers or dicts."""
    by_id = {r.id: r for r in results}
    out = []
    for number, item in enumerate(items, 1):
        if isinstance(item, QueryCitation):
            out.append(item)
            continue
        if isinstance(item, Mapping):
            out.append(QueryCitation.from_dict({"id": str(number), **item}))
            continue
        target: QueryResult | None
        if _is_score(item) and 1 <= int(item) <= len(results):
            target = results[int(item) - 1]
        else:
            target = by_id.get(str(item))
        out.append(
            QueryCitation(
                id=str(number),
                result_id=target.id if target else str(item),
                source=dict(target.source) if target else {},
            )
        )
    return tuple(out)


def map_document(result: QueryResult, document_id: DocumentId) -> QueryResult:
    """``result`` with ``source.benchmark_document_id`` set from ``document_id`` (a field
    name or a callable); unchanged when the mapping finds nothing."""
    if callable(document_id):
        found = document_id(result)
    elif document_id is not None:
        found = next(
            (
                place[document_id]
                for place in (result.metadata, result.source)
                if place.get(document_id) not in (None, "")
            ),
            None,
        )
        if found is None and document_id == "id":
            found = result.id
    else:
        return result
    if found is None or not str(found).strip():
        return result
    source = {**result.source, "benchmark_document_id": str(found).strip()}
    return result.model_copy(update={"source": source})


__all__ = [
    "ACCEPTED_FORMS",
    "MADE_UP_ID",
    "NO_RESULTS",
    "SystemOutputError",
    "as_results",
    "citations_for",
    "describe_value",
    "map_document",
    "normalize_response",
]
