"""LangChain and LlamaIndex objects as systems, with the real packages (in-memory stores,
deterministic fake embeddings, a mock LLM; no network). Each gives the same per-case scores as
a plain function returning the same ranking, and their ids map to the benchmark's documents."""

from __future__ import annotations

import asyncio

import pytest

import heta_notebook as hn
from heta_notebook import (
    BeirBenchmark,
    BeirRetrievalMetric,
    EvidenceRecallAtK,
    IdCoverageError,
    as_system,
    run_benchmark,
)
from tests._kb_helpers import cranfield
from tests._systems_helpers import LazyModule, per_case_scores

lc_documents = LazyModule("langchain_core.documents")
lc_embeddings = LazyModule("langchain_core.embeddings")
lc_vectorstores = LazyModule("langchain_core.vectorstores")
lc_runnables = LazyModule("langchain_core.runnables")
li_core = LazyModule("llama_index.core")
li_llms = LazyModule("llama_index.core.llms")

EVALUATORS = [
    BeirRetrievalMetric("ndcg", 10),
    BeirRetrievalMetric("recall", 10),
    EvidenceRecallAtK(10),
]
N_DOCUMENTS, N_CASES = 300, 8


def _run(system):
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipe=system,
        evaluators=EVALUATORS,
        progress=False,
        limit=N_CASES,
    ).report


def _reference(ids_for) -> dict:
    """The per-case scores of a plain function returning ``ids_for(text)``."""
    return per_case_scores(_run(lambda text: ids_for(text)))


@pytest.fixture(scope="module")
def lc_store():
    store = lc_vectorstores.InMemoryVectorStore(lc_embeddings.DeterministicFakeEmbedding(size=16))
    store.add_documents(
        [
            lc_documents.Document(
                page_content=d.read_text(), id=d.document_id, metadata={"docno": d.document_id}
            )
            for d in cranfield().documents[:N_DOCUMENTS]
        ]
    )
    return store


@pytest.fixture(scope="module")
def li_index():
    documents = [
        li_core.Document(text=d.read_text() or "(empty)", id_=d.document_id)
        for d in cranfield().documents[:N_DOCUMENTS]
    ]
    return li_core.VectorStoreIndex.from_documents(
        documents, embed_model=li_core.MockEmbedding(embed_dim=8)
    )


def test_a_langchain_retriever_scores_like_its_ids(lc_store) -> None:
    retriever = lc_store.as_retriever(search_kwargs={"k": 10})
    report = _run(retriever)
    assert report.recipe_manifest["kind"] == "langchain"
    assert per_case_scores(report) == _reference(lambda t: [d.id for d in retriever.invoke(t)])
    assert report.metadata["id_coverage"]["share"] == 1.0
    first = report.case_results[0].response.results[0]
    assert first.text and first.metadata["docno"] == first.id


def test_langchain_ids_from_a_named_metadata_key() -> None:
    store = lc_vectorstores.InMemoryVectorStore(lc_embeddings.DeterministicFakeEmbedding(size=16))
    store.add_documents(  # no Document.id: the store makes up uuids
        [
            lc_documents.Document(page_content=doc.read_text(), metadata={"docno": doc.document_id})
            for doc in cranfield().documents[:N_DOCUMENTS]
        ]
    )
    retriever = store.as_retriever(search_kwargs={"k": 10})
    with pytest.raises(IdCoverageError, match="none of the"):
        _run(retriever)
    report = _run(as_system(retriever, id_key="docno"))
    expected = _reference(lambda t: [d.metadata["docno"] for d in retriever.invoke(t)])
    assert per_case_scores(report) == expected


def test_a_langchain_runnable_returning_answer_and_context(lc_store) -> None:
    retriever = lc_store.as_retriever(search_kwargs={"k": 10})
    chain = lc_runnables.RunnableParallel(
        context=retriever, answer=lc_runnables.RunnableLambda(lambda q: f"about {q[:10]}")
    )
    report = _run(chain)
    response = report.case_results[0].response
    assert response.answer.startswith("about ")
    assert per_case_scores(report) == _reference(lambda t: [d.id for d in retriever.invoke(t)])


def test_a_llamaindex_retriever_maps_nodes_to_their_documents(li_index) -> None:
    retriever = li_index.as_retriever(similarity_top_k=10)
    report = _run(retriever)
    assert report.recipe_manifest["kind"] == "llamaindex-retriever"
    # (id, score) pairs: the metrics rank by score under the trec_eval tie rule, as for the nodes
    expected = _reference(lambda t: [(n.node.ref_doc_id, n.score) for n in retriever.retrieve(t)])
    assert per_case_scores(report) == expected
    result = report.case_results[0].response.results[0]
    known = {d.document_id for d in cranfield().documents}
    assert result.source["document_id"] in known and result.id not in known  # node id: a uuid


def test_a_llamaindex_query_engine_answers_with_its_source_nodes(li_index) -> None:
    engine = li_index.as_query_engine(llm=li_llms.MockLLM(max_tokens=4), similarity_top_k=10)
    report = _run(engine)
    assert report.recipe_manifest["kind"] == "llamaindex-query-engine"
    response = report.case_results[0].response
    assert response.answer and len(response.results) == 10
    nodes = asyncio.run(
        li_index.as_retriever(similarity_top_k=10).aretrieve(cranfield().cases[0].query)
    )
    assert [r.source["document_id"] for r in response.results] == [n.node.ref_doc_id for n in nodes]


# --------------------------------------------------------------------------- abstentions

li_postprocessor = LazyModule("llama_index.core.postprocessor")
li_synthesizers = LazyModule("llama_index.core.response_synthesizers")
li_query_engine = LazyModule("llama_index.core.query_engine")


def _silent_llm():
    """A real LlamaIndex LLM (MockLLM) that completes every prompt with no text (its class
    made here: LlamaIndex is imported by the test that runs, not at collection)."""

    class _SilentLLM(li_llms.MockLLM):
        def complete(self, prompt, formatted=False, **kwargs):
            return li_llms.CompletionResponse(text="")

        async def acomplete(self, prompt, formatted=False, **kwargs):
            return li_llms.CompletionResponse(text="")

    return _SilentLLM()


def _synthesizer(llm, empty: str | None):
    synthesizer = li_synthesizers.CompactAndRefine(llm=llm)
    if empty:  # llama-index-core 0.14 takes empty_response= only in BaseSynthesizer itself
        synthesizer._empty_response = empty
    return synthesizer


def _engine(li_index, *, cutoff: float | None = None, llm=None, empty: str | None = None):
    """A query engine over ``li_index``: ``cutoff`` drops every node below it (MockEmbedding
    scores all nodes alike), ``empty`` is the synthesizer's own empty-response text."""
    llm = llm or li_llms.MockLLM(max_tokens=4)
    post = [li_postprocessor.SimilarityPostprocessor(similarity_cutoff=cutoff)] if cutoff else []
    return li_query_engine.RetrieverQueryEngine(
        retriever=li_index.as_retriever(similarity_top_k=10),
        response_synthesizer=_synthesizer(llm, empty),
        node_postprocessors=post,
    )


def test_llamaindex_empty_response_is_an_abstention(li_index) -> None:
    """llama-index-core answers "Empty Response" when no node reaches the synthesizer: an
    abstention, not an answer that SQuAD metrics would compare."""
    engine = _engine(li_index, cutoff=2.0)  # no cosine reaches 2: nothing survives
    assert str(engine.query(cranfield().cases[0].query)) == "Empty Response"  # the library's
    report = _run(engine)
    for result in report.case_results:
        assert result.response.abstained and result.response.answer is None
        assert result.response.abstain_reason == (
            "LlamaIndex answered 'Empty Response': no source node to answer from"
        )
    assert report.frames().abstentions() == {"default": N_CASES}


def test_llamaindex_empty_llm_text_abstains_and_keeps_its_nodes(li_index) -> None:
    report = _run(_engine(li_index, llm=_silent_llm()))
    response = report.case_results[0].response
    assert response.abstained and len(response.results) == 10  # what was retrieved stays
    assert response.abstain_reason.endswith("the LLM returned no text")
    answered = _run(_engine(li_index)).case_results[0].response
    assert answered.answer and not answered.abstained
    # the same ranking either way: abstaining changes no retrieval score
    assert per_case_scores(report) == per_case_scores(_run(_engine(li_index)))


def test_llamaindex_own_empty_response_text_is_read_from_the_engine(li_index) -> None:
    engine = _engine(li_index, cutoff=2.0, empty="I do not know.")
    response = _run(engine).case_results[0].response
    assert response.abstained
    assert response.abstain_reason.startswith("LlamaIndex answered 'I do not know.'")


def _reader(question: str):
    """A LangChain answer step: abstains on questions about heat, answers the rest."""
    return hn.Abstain("no context on heat") if "heat" in question else f"about {question[:10]}"


@pytest.mark.parametrize("form", ["parallel", "lambda", "dict"])
def test_a_langchain_runnable_abstains(lc_store, form) -> None:
    """A runnable abstains as any system does: an ``Abstain`` in the answer slot of a
    ``RunnableParallel``, an ``Abstain`` returned, or ``{"abstain": ..., "context": ...}``."""
    retriever = lc_store.as_retriever(search_kwargs={"k": 10})
    answer = lc_runnables.RunnableLambda(_reader)
    if form == "parallel":
        chain = lc_runnables.RunnableParallel(context=retriever, answer=answer)
    elif form == "lambda":
        chain = lc_runnables.RunnableLambda(
            lambda q: (
                hn.Abstain("no context on heat", results=retriever.invoke(q))
                if "heat" in q
                else {"answer": _reader(q), "context": retriever.invoke(q)}
            )
        )
    else:
        chain = lc_runnables.RunnableLambda(
            lambda q: (
                {"abstain": "heat" in q, "reason": "no context on heat"}
                | ({} if "heat" in q else {"answer": _reader(q)})
                | {"context": retriever.invoke(q)}
            )
        )
    report = _run(chain)
    heat = [r for r in report.case_results if "heat" in r.query]
    assert heat and len(heat) < N_CASES
    for result in report.case_results:
        response = result.response
        assert response.abstained == ("heat" in result.query)
        assert (response.answer is None) == response.abstained
        assert len(response.results) == 10  # the retrieved documents are kept either way
    assert {r.response.abstain_reason for r in heat} == {"no context on heat"}
    assert per_case_scores(report) == _reference(lambda t: [d.id for d in retriever.invoke(t)])
