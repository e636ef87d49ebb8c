"""LangChain and LlamaIndex objects as systems: recognised by type, called asynchronously.

Neither package is imported here (both are optional extras: ``pip install
heta-notebook[langchain]`` / ``[llamaindex]``); an object is recognised by its bases (any class
in its type's MRO coming from a ``langchain*`` / ``llama_index*`` module, so a user's own
``class Mine(BaseRetriever)`` defined anywhere counts) and the async method it offers:

- LangChain retrievers and runnables: ``await obj.ainvoke(text)``; ``Document``s become
  results (id from ``Document.id``, or the metadata key given as ``id_key=``), a chat
  message becomes the answer;
- LlamaIndex query engines: ``await obj.aquery(text)`` (answer + ``source_nodes``);
  retrievers: ``await obj.aretrieve(text)`` (``NodeWithScore``s; node id, ``ref_doc_id``).

**Abstaining.** A LlamaIndex query engine that has nothing to answer from (no node survived
retrieval and postprocessing, or the LLM returned no text) answers ``"Empty Response"`` (or
its synthesizer's own ``empty_response`` text): that answer is recorded as an
abstention (``Abstain``) keeping the source nodes, not scored as an answer. A LangChain
runnable abstains as any system does: it returns ``Abstain(reason)`` (e.g. from a
``RunnableLambda``), puts one in the answer slot (``RunnableParallel(context=retriever,
answer=reader)`` with a reader returning ``Abstain``), or returns ``{"abstain": True,
"reason": ..., "context": documents}``. An answer of ``None`` is no answer (retrieval
only), not an abstention: abstaining is said, never guessed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from heta_notebook.schema._abstain import Abstain

LLAMAINDEX_EMPTY_RESPONSE = "Empty Response"  # llama-index-core's synthesizer default


def framework_call(obj: Any) -> tuple[Callable[..., Awaitable[Any]], str] | None:
    """``(async call(text), kind)`` for a LangChain or LlamaIndex object, else None."""
    if _from_package(obj, "langchain") and callable(getattr(obj, "ainvoke", None)):
        return _langchain(obj), "langchain"
    if _from_package(obj, "llama_index"):
        if callable(getattr(obj, "aquery", None)):
            return _llamaindex_engine(obj), "llamaindex-query-engine"
        if callable(getattr(obj, "aretrieve", None)):
            return _llamaindex(obj.aretrieve), "llamaindex-retriever"
    return None


def _langchain(obj: Any) -> Callable[..., Awaitable[Any]]:
    async def call(text: str) -> Any:
        value = await obj.ainvoke(text)
        if _is_message(value):  # a chat model or chain ending in a message: its text
            return str(value.content)
        return value

    return call


def _llamaindex(method: Callable[[str], Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def call(text: str) -> Any:
        return await method(text)

    return call


def _llamaindex_engine(engine: Any) -> Callable[..., Awaitable[Any]]:
    """A query engine's ``aquery``, its empty-response answer read as an abstention."""
    empty = empty_response_texts(engine)

    async def call(text: str) -> Any:
        response = await engine.aquery(text)
        return llamaindex_abstention(response, empty) or response

    return call


def empty_response_texts(engine: Any) -> frozenset[str]:
    """What ``engine`` answers when it has nothing: llama-index-core's ``"Empty Response"``
    (its refine synthesizers always say that when the LLM returns no text) and the
    synthesizer's own ``empty_response`` (said when no node reaches it; kept on
    ``engine._response_synthesizer._empty_response``)."""
    synthesizer = getattr(engine, "_response_synthesizer", None)
    own = getattr(synthesizer, "_empty_response", None)
    extra = {own.strip()} if isinstance(own, str) and own.strip() else set()
    return frozenset({LLAMAINDEX_EMPTY_RESPONSE, *extra})


def llamaindex_abstention(
    response: Any, empty: frozenset[str] = frozenset({LLAMAINDEX_EMPTY_RESPONSE})
) -> Abstain | None:
    """``Abstain`` (keeping the source nodes) when a LlamaIndex response is one of the
    engine's empty answers; None for a real answer."""
    answer = getattr(response, "response", None)
    if not isinstance(answer, str) or answer.strip() not in empty:
        return None
    nodes = list(getattr(response, "source_nodes", None) or ())
    why = "no source node to answer from" if not nodes else "the LLM returned no text"
    return Abstain(f"LlamaIndex answered {answer.strip()!r}: {why}", results=nodes)


def _from_package(obj: Any, package: str) -> bool:
    """Whether ``obj``'s type or one of its bases comes from ``package`` (by module name; the
    package itself is never imported here)."""
    return any((cls.__module__ or "").startswith(package) for cls in type(obj).__mro__)


def _is_message(value: Any) -> bool:
    return (
        _from_package(value, "langchain") and hasattr(value, "content") and hasattr(value, "type")
    )


__all__ = [
    "LLAMAINDEX_EMPTY_RESPONSE",
    "empty_response_texts",
    "framework_call",
    "llamaindex_abstention",
]
