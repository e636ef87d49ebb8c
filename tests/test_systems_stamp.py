"""stamp_documents: bare result ids are mapped to benchmark documents once per distinct id
(not once per result), and give exactly the records the one matching rule gives."""

from __future__ import annotations

from heta_notebook.schema import QueryResponse, QueryResult
from heta_notebook.systems import _adapt
from heta_notebook.systems._adapt import stamp_documents


def test_bare_ids_are_stamped_as_the_rule_says_looked_up_once_per_id(monkeypatch):
    documents = frozenset({"d1", "d2", "d3"})
    calls: list[str] = []
    lookup = _adapt.id_document

    def counted(rid, known):
        calls.append(rid)
        return lookup(rid, known)

    monkeypatch.setattr(_adapt, "id_document", counted)
    ids = ["d1", "d2#0", "x9", "d3#4", "d1"]
    responses = [
        QueryResponse(mode="m", results=tuple(QueryResult(id=i, score=s) for i in ids))
        for s in (1.0, 2.0, 3.0)
    ]
    stamped = [stamp_documents(r, documents) for r in responses]
    assert sorted(calls) == sorted(set(ids))  # five results x three queries: four lookups
    for response in stamped:
        sources = [r.source for r in response.results]
        assert sources == [
            {"benchmark_document_id": "d1"},
            {"benchmark_document_id": "d2"},
            {},
            {"benchmark_document_id": "d3"},
            {"benchmark_document_id": "d1"},
        ]
    expected = [
        r.model_copy(update={"source": {"benchmark_document_id": "d2"}})
        for r in responses[0].results[1:2]
    ]
    assert list(stamped[0].results[1:2]) == expected  # equal records, every field
    assert stamped[0].results[2] is responses[0].results[2]  # unmapped: the same record
    assert stamped[0].results[1].model_dump() == expected[0].model_dump()


def test_results_with_keys_keep_the_full_rule():
    documents = frozenset({"d1"})
    named = QueryResult(id="chunk-7", source={"document_id": "d1"})
    response = QueryResponse(mode="m", results=(named,))
    assert stamp_documents(response, documents) is response  # already names d1
