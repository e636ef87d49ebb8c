"""LangChain and LlamaIndex objects as systems: recognised by type, called asynchronously.

Neither package is imported here (both are optional extras: ``pip install
heta-notebook[langchain]`` / ``[llamaindex]``); an object is recognised by the module its type
comes from and the async method it offers:

- LangChain retrievers and runnables: ``await obj.ainvoke(text)``; ``Document``s become
  results (id from ``Document.id``, or the metadata key given as ``id_key=``), a chat
  message becomes the answer;
- LlamaIndex query engines: ``await obj.aquery(text)`` (answer + ``source_nodes``);
  retrievers: ``await obj.aretrieve(text)`` (``NodeWithScore``s; node id, ``ref_doc_id``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any


def framework_call(obj: Any) -> tuple[Callable[..., Awaitable[Any]], str] | None:
    """``(async call(text), kind)`` for a LangChain or LlamaIndex object, else None."""
    module = type(obj).__module__ or ""
    if module.startswith("langchain") and callable(getattr(obj, "ainvoke", None)):
        return _langchain(obj), "langchain"
    if module.startswith("llama_index"):
        if callable(getattr(obj, "aquery", None)):
            return _llamaindex(obj.aquery), "llamaindex-query-engine"
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


def _is_message(value: Any) -> bool:
    module = type(value).__module__ or ""
    return module.startswith("langchain") and hasattr(value, "content") and hasattr(value, "type")


__all__ = ["framework_call"]
