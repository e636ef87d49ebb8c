"""The one door for a system under test: whatever the user passes becomes one query protocol.

``as_system(obj)`` returns recipes and the embedded ``KnowledgeBase`` unchanged and wraps
everything else in a :class:`System`, whose ``await query(text, mode=, top_k=, options=)``
always returns a ``QueryResponse``:

- an object with ``query`` (sync or async; ``query_modes`` and ``manifest()`` optional);
- a plain function, sync or async: ``fn(text)`` or ``fn(text, *, mode, top_k)`` (sync ones
  run in a worker thread, under the runner's concurrency limit);
- LangChain retrievers/runnables and LlamaIndex retrievers/query engines (``_frameworks``);
- an :class:`~heta_notebook.systems.HttpSystem`.

Returned values are read by ``_normalize``; results whose id (or ``doc#n`` chunk id) names a
benchmark document are stamped with ``source.benchmark_document_id`` so every metric maps
them the same way (:func:`stamp_documents`). Bare ids, and records that already name a
benchmark document that way, are held as columns instead (``evaluators._id_hits``,
``evaluators._record_hits``): the records they stand for are the stamped ones.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Sequence
from types import CoroutineType
from typing import Any

from heta_notebook._util.loop import in_daemon_thread
from heta_notebook._util.redaction import config_secrets, declare_secrets, redact_config
from heta_notebook.evaluators._id_hits import id_results
from heta_notebook.evaluators._matching import _only_document_id, document_ids, id_document
from heta_notebook.evaluators._record_hits import (
    id_documents,
    record_results,
    with_fields,
    with_source,
)
from heta_notebook.schema._records import QueryResponse, QueryResult
from heta_notebook.systems._normalize import (
    NO_RESULTS,
    DocumentId,
    describe_value,
    normalize_response,
)

DEFAULT_MODE = "default"
_CALL_KEYWORDS = ("mode", "top_k", "options")
_ID_LISTS = (list, tuple)


def _RESPONSE_DEFAULTS() -> dict[str, Any]:  # noqa: N802 - reads as the constant it builds
    """A ``QueryResponse``'s other fields at their defaults (given, model_construct skips
    its per-field default lookup; the fields set stay ``mode`` and ``results``)."""
    return {"answer": None, "citations": (), "trace": (), "metadata": {}}


class Unread:
    """A system's reply not read yet: ``read()`` gives its ``QueryResponse`` (``System.ask``)."""

    __slots__ = ("mode", "system", "value")

    def __init__(self, system: System, value: Any, mode: str) -> None:
        self.system, self.value, self.mode = system, value, mode

    def read(self) -> QueryResponse:
        """The reply as ``System.query`` returns it (a shape it cannot read raises)."""
        return self.system.read(self.value, self.mode)


class System:
    """A user's system behind the runner's protocol: ``await query(text, mode=, top_k=)``."""

    def __init__(
        self,
        call: Callable[..., Any],
        *,
        name: str,
        query_modes: Sequence[str] = (DEFAULT_MODE,),
        manifest: dict[str, Any] | None = None,
        document_id: DocumentId = None,
        id_key: str | None = None,
        benchmark_documents: Collection[str] = (),
    ) -> None:
        self._call, self.name = call, name
        self.query_modes = tuple(query_modes) or (DEFAULT_MODE,)
        # a system that names no modes answers any mode it is asked (its default: "default")
        self.any_mode = self.query_modes == (DEFAULT_MODE,)
        # its configuration (its own manifest() included) stored under the one policy for a
        # system's configuration, as HttpSystem's; the secrets in it hidden wherever echoed
        self._manifest = redact_config(manifest or {"name": name})
        declare_secrets(*config_secrets(manifest or {}))
        self.document_id, self.id_key = document_id, id_key
        self.benchmark_documents = frozenset(benchmark_documents)
        self._keywords = accepted_keywords(call)
        self._in_thread = not is_async_callable(call)
        self.wrapped: Any = getattr(call, "__self__", call)  # what the user passed

    async def query(
        self, text: str, *, mode: str | None = None, top_k: int = 10, options: Any = None
    ) -> QueryResponse:
        """Ask the system; its reply read as a ``QueryResponse`` (results stamped with documents)."""
        return (await self.ask(text, mode=mode, top_k=top_k, options=options)).read()

    async def ask(
        self, text: str, *, mode: str | None = None, top_k: int = 10, options: Any = None
    ) -> Unread:
        """``query`` without reading the reply yet: ``.read()`` gives what ``query`` returns.

        The runner reads a reply after its worker has asked the next query, so replies
        arriving together restart their queries together (``runner._pool``)."""
        mode = mode or self.query_modes[0]
        keywords = self._keywords
        kwargs: dict[str, Any] = {}
        if "mode" in keywords:
            kwargs["mode"] = mode
        if "top_k" in keywords:
            kwargs["top_k"] = top_k
        if "options" in keywords:
            kwargs["options"] = dict(options or {})
        if self._in_thread:
            # its own daemon thread: a call past the run's query_timeout is abandoned (and
            # counted), holding no pool worker and no shutdown
            value = await in_daemon_thread(self._call, text, **kwargs)
        else:
            value = self._call(text, **kwargs)
        if type(value) is CoroutineType or inspect.isawaitable(value):
            value = await value
        return Unread(self, value, mode)

    def read(self, value: Any, mode: str) -> QueryResponse:
        """The system's reply ``value`` to a query in ``mode`` as a ``QueryResponse``."""
        if self.benchmark_documents and self.document_id is None and type(value) in _ID_LISTS:
            ids = id_results(value, self.benchmark_documents)  # bare document ids: as columns
            if ids is not None:  # the stamped records it stands for, built only when read
                return QueryResponse.model_construct(
                    {"mode", "results"},
                    mode=mode,
                    results=ids,  # type: ignore[arg-type]  # a lazy tuple of QueryResult
                    **_RESPONSE_DEFAULTS(),
                )
        response = normalize_response(
            value,
            mode,
            system=f"system {self.name!r}",
            document_id=self.document_id,
            id_key=self.id_key,
        )
        if self.benchmark_documents:  # records naming benchmark documents: read as columns
            records = record_results(response, self.benchmark_documents)
            if records is not None:  # the records themselves, checked in one pass each
                return with_fields(response, results=records)
        return stamp_documents(_noting_emptiness(response, value), self.benchmark_documents)

    def bound(self, benchmark_documents: Collection[str]) -> System:
        """A copy that maps result ids onto these benchmark document ids."""
        copy = object.__new__(System)
        copy.__dict__.update(self.__dict__, benchmark_documents=frozenset(benchmark_documents))
        return copy

    def manifest(self) -> dict[str, Any]:
        """What the report records about the system (its ``recipe_manifest``)."""
        mapping = self.document_id if isinstance(self.document_id, str) else None
        extra = {"document_id": mapping} if mapping else {}
        return {"name": self.name, "query_modes": list(self.query_modes), **self._manifest, **extra}

    def __repr__(self) -> str:
        return f"System({self.name!r}, query_modes={self.query_modes})"


def as_system(
    obj: Any,
    *,
    name: str | None = None,
    document_id: DocumentId = None,
    id_key: str | None = None,
    benchmark_documents: Collection[str] = (),
) -> Any:
    """``obj`` as something the runner can query: a recipe or the embedded KB unchanged,
    anything else (a function ``fn(text)`` / ``fn(text, *, mode, top_k)``, an object with
    ``query``, a LangChain or LlamaIndex object, an ``HttpSystem``) wrapped as a
    :class:`System`; one ``TypeError`` otherwise.

    ``document_id`` maps results to benchmark documents (a result/metadata/source field name,
    or a callable ``(QueryResult) -> id``); ``id_key`` names the metadata key holding a
    LangChain document's id; ``name`` labels it in reports.
    """
    if isinstance(obj, System):
        return obj.bound(benchmark_documents) if benchmark_documents else obj
    if hasattr(obj, "build_knowledge_base") or _is_embedded_kb(obj):
        return obj
    from heta_notebook.systems._frameworks import framework_call

    options: dict[str, Any] = {"document_id": document_id, "id_key": id_key}
    framework = framework_call(obj)
    if framework is not None:
        call, kind = framework
        label = name or system_name(obj)
        manifest = {"name": label, "kind": kind, "type": qualified_name(obj)}
        system = System(call, name=label, manifest=manifest, **options)
        system.wrapped = obj
        return system.bound(benchmark_documents)
    if hasattr(obj, "query") and callable(obj.query):
        return _object_system(obj, name, options).bound(benchmark_documents)
    if callable(obj):
        label = name or system_name(obj)
        manifest = {"name": label, "kind": "function", "function": qualified_name(obj)}
        return System(obj, name=label, manifest=manifest, **options).bound(benchmark_documents)
    raise TypeError(
        f"cannot evaluate an object of type {type(obj).__qualname__}: pass a Recipe, a built knowledge base, "
        "an object with query(text), a function fn(text) or fn(text, *, mode, top_k) (sync or "
        "async), a LangChain retriever/runnable, a LlamaIndex retriever/query engine, or an "
        "HttpSystem"
    )


def _object_system(obj: Any, name: str | None, options: dict[str, Any]) -> System:
    label = name or system_name(obj)
    modes = tuple(getattr(obj, "query_modes", ()) or ()) or (DEFAULT_MODE,)
    manifest: dict[str, Any] = {"name": label, "kind": "object", "type": qualified_name(obj)}
    value = own_manifest(obj)
    if value is not None:
        manifest = {**manifest, **value} if isinstance(value, dict) else {**manifest, "own": value}
    return System(obj.query, name=label, query_modes=modes, manifest=manifest, **options)


def _noting_emptiness(response: QueryResponse, value: Any) -> QueryResponse:
    """``response`` with ``metadata["no_results"]`` saying what the reply held (a dict's keys, a
    list's length), when it holds neither a result nor an answer: the dry run's evidence for a
    shape that finds nothing."""
    if response.results or response.abstained or response.answer is not None:
        return response
    if NO_RESULTS in response.metadata:
        return response
    metadata = {**response.metadata, NO_RESULTS: describe_value(value)}
    return response.model_copy(update={"metadata": metadata})


def unwrapped(obj: Any) -> Any:
    """What the user passed, for a :class:`System` (``obj`` itself otherwise)."""
    return obj.wrapped if isinstance(obj, System) else obj


def own_manifest(obj: Any) -> Any:
    """``obj.manifest()`` (or attribute) as JSON-friendly data; None when it has none."""
    value = getattr(obj, "manifest", None)
    if value is None:
        return None
    value = value() if callable(value) else value
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    return value if isinstance(value, (dict, list)) else {"value": str(value)}


def stamp_documents(response: QueryResponse, benchmark_documents: Collection[str]) -> QueryResponse:
    """Results that name no benchmark document through source/metadata keys, but whose id
    (or ``doc#n`` chunk id) does, get ``source.benchmark_document_id``: the one matching rule."""
    if not benchmark_documents or not response.results:
        return response
    named = id_documents(benchmark_documents)
    stamped = []
    changed = False
    for result in response.results:
        fields = result.__dict__
        if fields["source"] or fields["metadata"]:  # it may name a document by its keys
            named_doc = _only_document_id(result)  # the usual one: benchmark_document_id
            known = named_doc is not None and named_doc in benchmark_documents
            new = result if known else _stamped(result, benchmark_documents)
        else:  # a bare id (the usual plain-function result): looked up once per distinct id
            rid = fields["id"]
            doc = (
                named[rid]
                if rid in named
                else named.setdefault(rid, id_document(rid, benchmark_documents))
            )
            new = result if doc is None else with_source(result, {"benchmark_document_id": doc})
        changed |= new is not result
        stamped.append(new)
    if not changed:
        return response
    return response.model_copy(update={"results": tuple(stamped)})


def _stamped(result: QueryResult, known: Collection[str]) -> QueryResult:
    if any(doc in known for doc in document_ids(result)):
        return result
    doc = id_document(result.id, known)
    if doc is None:
        return result
    return result.model_copy(update={"source": {**result.source, "benchmark_document_id": doc}})


def accepted_keywords(call: Callable[..., Any]) -> frozenset[str]:
    """Which of ``mode``/``top_k``/``options`` ``call`` takes (all of them with ``**kwargs``)."""
    try:
        params = inspect.signature(call).parameters.values()
    except (TypeError, ValueError):
        return frozenset()
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return frozenset(_CALL_KEYWORDS)
    return frozenset(p.name for p in params if p.name in _CALL_KEYWORDS)


def is_async_callable(call: Any) -> bool:
    """Whether calling ``call`` gives a coroutine (async def, or an async ``__call__``)."""
    return inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(
        getattr(call, "__call__", None)  # noqa: B004 - the bound __call__ of an instance
    )


def system_name(obj: Any) -> str:
    """A short name for legends: ``obj.name``, a function's name, else the type's name."""
    name = getattr(obj, "name", None)
    if isinstance(name, str) and name.strip():
        return name.strip()
    name = getattr(obj, "__name__", None)
    if isinstance(name, str) and name.isidentifier():
        return name
    return type(obj).__name__


def qualified_name(obj: Any) -> str:
    """``module.qualname`` of a function or of an object's type."""
    target = obj if hasattr(obj, "__qualname__") else type(obj)
    module = getattr(target, "__module__", "") or ""
    return f"{module}.{target.__qualname__}" if module else target.__qualname__


def _is_embedded_kb(obj: Any) -> bool:
    from heta_notebook.kb._knowledge_base import KnowledgeBase

    return isinstance(obj, KnowledgeBase)


__all__ = [
    "DEFAULT_MODE",
    "System",
    "Unread",
    "accepted_keywords",
    "as_system",
    "is_async_callable",
    "qualified_name",
    "stamp_documents",
    "system_name",
]
