"""A team's own retriever classes, subclassing LangChain's or LlamaIndex's bases and defined
here (not in a ``langchain*``/``llama_index*`` module), are recognised by their bases and score
exactly like the plain function they wrap, case by case."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from heta_notebook import (
    BeirBenchmark,
    BeirRetrievalMetric,
    EvidenceRecallAtK,
    as_system,
    run_benchmark,
)
from tests._systems_helpers import LazyModule, per_case_scores, rankings

lc_retrievers = LazyModule("langchain_core.retrievers")
lc_documents = LazyModule("langchain_core.documents")
lc_runnables = LazyModule("langchain_core.runnables")
li_retrievers = LazyModule("llama_index.core.retrievers")
li_engine = LazyModule("llama_index.core.base.base_query_engine")
li_schema = LazyModule("llama_index.core.schema")
li_response = LazyModule("llama_index.core.base.response.schema")

EVALUATORS = [
    BeirRetrievalMetric("ndcg", 10),
    BeirRetrievalMetric("recall", 10),
    EvidenceRecallAtK(10),
]
N_CASES = 8


def search(text: str) -> list[tuple[str, float]]:
    """The team's own search: BM25's ``(document id, score)`` pairs for ``text``."""
    return rankings()[text]


def _run(system: Any) -> Any:
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipe=system,
        evaluators=EVALUATORS,
        progress=False,
        limit=N_CASES,
    ).report


@pytest.fixture(scope="module")
def reference() -> dict:
    return per_case_scores(_run(search))


@functools.cache
def own_classes() -> dict[str, type]:
    """The team's classes, made on first use (defined in this module all the same): LangChain
    and LlamaIndex are imported by the tests that run, not while every worker collects."""

    class MyLangChainRetriever(lc_retrievers.BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Any]:
            return [
                lc_documents.Document(
                    page_content=f"document {doc}", id=doc, metadata={"score": score}
                )
                for doc, score in search(query)
            ]

    class MyRunnable(lc_runnables.Runnable):
        def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            return {"context": MyLangChainRetriever().invoke(input), "answer": f"about {input[:8]}"}

    class MyLlamaRetriever(li_retrievers.BaseRetriever):
        def _retrieve(self, query_bundle: Any) -> list[Any]:
            return [
                li_schema.NodeWithScore(
                    node=li_schema.TextNode(id_=doc, text=f"doc {doc}"), score=score
                )
                for doc, score in search(query_bundle.query_str)
            ]

    class MyQueryEngine(li_engine.BaseQueryEngine):
        def __init__(self) -> None:
            super().__init__(callback_manager=None)

        def _get_prompt_modules(self) -> dict[str, Any]:
            return {}

        def _query(self, query_bundle: Any) -> Any:
            nodes = MyLlamaRetriever().retrieve(query_bundle)
            return li_response.Response(response=f"{len(nodes)} nodes", source_nodes=nodes)

        async def _aquery(self, query_bundle: Any) -> Any:
            return self._query(query_bundle)

    return {
        cls.__name__: cls
        for cls in (MyLangChainRetriever, MyRunnable, MyLlamaRetriever, MyQueryEngine)
    }


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        ("MyLangChainRetriever", "langchain"),
        ("MyRunnable", "langchain"),
        ("MyLlamaRetriever", "llamaindex-retriever"),
        ("MyQueryEngine", "llamaindex-query-engine"),
    ],
)
def test_an_own_subclass_scores_like_the_function_it_wraps(make, kind, reference) -> None:
    obj = own_classes()[make]()
    assert type(obj).__module__ == __name__  # defined here, recognised by its bases
    assert as_system(obj).manifest()["kind"] == kind
    report = _run(obj)
    assert report.recipe_manifest["kind"] == kind
    assert per_case_scores(report) == reference
    assert report.metadata["id_coverage"]["share"] == 1.0


def test_a_class_with_no_framework_base_is_still_refused() -> None:
    class Mine:
        pass

    with pytest.raises(TypeError, match="cannot evaluate an object of type"):
        as_system(Mine())
