"""A system's ``QueryResult`` records naming benchmark documents (by their source, or by their
id as stamping reads it) are read once into columns (``RecordHits``): the records, the
metrics' documents and scores, the miss classes' keys, the redaction and every stored table
are those of the records path (stamping, the redaction pass, ``document_scores``, the tables
written from records); anything not plainly such a record (a secret-looking value, an
unknown document, metadata, an extra field, a declared secret) takes the records path."""

from __future__ import annotations

import asyncio

import pyarrow.parquet as pq
import pytest

from heta_notebook import (
    BeirBenchmark,
    BenchmarkRunConfig,
    QueryResponse,
    QueryResult,
    ReportStore,
    as_system,
    run_benchmark,
)
from heta_notebook._util import redaction
from heta_notebook.evaluators._matching import document_scores, reference_keys
from heta_notebook.evaluators._record_hits import record_results, with_fields
from heta_notebook.reports._lazy_results import LazyResults
from heta_notebook.reports._tables import _lazy_hit_fields, _record_hit_fields
from heta_notebook.schema._redact import redacted_response
from heta_notebook.systems import _adapt
from heta_notebook.systems._adapt import stamp_documents
from tests._report_helpers import table_paths
from tests._systems_helpers import rankings

DOCS = frozenset({"d1", "d2", "d3", "d4"})


@pytest.fixture(autouse=True)
def _no_declared_secrets(monkeypatch) -> None:
    """Secrets other tests declared for the process send every response to the records path
    (``unchanged_by_redaction``): none here, but where a test declares its own."""
    monkeypatch.setattr(redaction, "_declared", ())


def _result(rid: str, doc: object = None, score: float | None = 1.0, **fields: object):
    source = {} if doc is None else {"benchmark_document_id": doc}
    return QueryResult(id=rid, text=f"text {rid}", score=score, source=source, **fields)


PLAIN = [  # each takes the columns path
    [_result("d1#0", "d1", 3.0), _result("d2#4", "d2", 2.0), _result("d3", "d3", 1.0)],
    # a duplicate document (its best score kept), tied scores
    [_result("d1#0", "d1", 1.0), _result("d2#0", "d2", 2.0), _result("d1#1", "d1", 2.0)],
    [_result("d1#0", "d1", None), _result("d2#0", "d2", 2.0)],  # a result without a score
    [_result("a", "d4", None), _result("b", "d4", None)],  # no scores, one document twice
    [_result("x", " d2 ", 0.5)],  # a document id with spaces, as _only_document_id strips
    # records naming no document by their source: stamped with the one their id names
    [QueryResult(id="d3"), QueryResult(id="d1#2", text="t", score=2.0), QueryResult(id="d3#1")],
    [_result("d1#0", "d1", 3.0), _result("d2#0", None, 2.0), _result("d4", None, None)],
    [
        QueryResult(
            id="d1#0", kind="page", source={"benchmark_document_id": "d1", "document_id": "d1"}
        )
    ],
]
OTHER = [  # each takes the records path
    [_result("d1#0", "d1"), _result("d2#0", "d2", source_url="x")],  # an extra field
    [_result("d1#0", "d1"), _result("zz#0", "zz")],  # a document not in the benchmark
    [_result("d1#0", "d1"), _result("x9")],  # an id naming no document (left unstamped)
    [_result("d1#0", "d1"), _result("#0")],  # an id naming no document (an empty head)
    [_result("d1#0", "d1"), _result("q", "d2", metadata={"page": 3})],  # metadata
    [_result("d1#0", "d1"), QueryResult(id="d2#0", source={"benchmark_document_ids": ["d2"]})],
    [_result("d1#0", "d1"), QueryResult(id="q", source={"benchmark_document_id": "d2",
                                                        "url": "https://u:pw@host/x"})],
    [_result("d1#0", "d1"), QueryResult(id="q", source={"benchmark_document_id": "d2",
                                                        "api_key": "sk-123456"})],
    [_result("d1#0", "d1", kind="page"), _result("d2#0", "d2")],  # two kinds
    [_result("d1#0", "")],  # an empty document id
]  # fmt: skip


def _slow(results: list[QueryResult], **response: object) -> QueryResponse:
    """The records path: stamped, then redacted as the runner does."""
    stamped = stamp_documents(QueryResponse(mode="m", results=tuple(results), **response), DOCS)
    return redacted_response(stamped)


def _fast(results: list[QueryResult], **response: object) -> QueryResponse | None:
    """The columns path, as ``System.query`` takes it (None: not taken)."""
    given = QueryResponse(mode="m", results=tuple(results), **response)
    lazy = record_results(given, DOCS)
    if lazy is None:
        return None
    return redacted_response(given.model_copy(update={"results": lazy}))


def _assert_same(fast: QueryResponse, slow: QueryResponse) -> None:
    """Every field of the two responses and their results equal, and what the metrics, the
    miss classes and the stored tables read of them."""
    hits = fast.results
    assert isinstance(hits, LazyResults) and not hits.built
    judged = {"d1": 1, "d2": 0}
    assert document_scores(hits) == document_scores(slow.results, judged=judged)
    assert document_scores(hits) == document_scores(slow.results)
    columns = hits.columns  # type: ignore[attr-defined]
    assert columns.reference_keys() == [(r.id, *reference_keys(r)) for r in slow.results]
    written = _lazy_hit_fields([hits], len(hits))
    expected = _record_hit_fields(list(slow.results))
    assert written is not None
    assert list(written[0]) == list(expected[0]) and list(written[1]) == list(expected[1])
    assert written[2].equals(expected[2])  # scores: None is null
    assert written[3] == expected[3]  # one kind
    assert list(written[4]) == expected[4].to_pylist()  # sources as JSON
    assert list(written[5]) == [None] * len(hits) and expected[5] == len(hits)  # no metadata
    assert not hits.built  # none of that built a record
    assert fast == slow and fast.model_dump() == slow.model_dump()
    for mine, theirs in zip(fast.results, slow.results, strict=True):
        assert mine.model_dump() == theirs.model_dump()
        assert mine.__pydantic_fields_set__ == theirs.__pydantic_fields_set__
        assert mine.__pydantic_extra__ == theirs.__pydantic_extra__


@pytest.mark.parametrize("results", PLAIN)
def test_records_naming_documents_stand_for_the_records_path(results) -> None:
    fast = _fast(results)
    assert fast is not None
    _assert_same(fast, _slow(results))
    built = fast.results.records()  # type: ignore[attr-defined]
    for mine, given in zip(built, results, strict=True):  # a copy only where stamped
        assert (mine is given) == bool(given.source)


def test_a_response_that_says_more_keeps_it() -> None:
    said = {"answer": "A", "metadata": {"latency": 3, "engine": "bm25"}}
    fast = _fast(PLAIN[0], **said)
    assert fast is not None
    _assert_same(fast, _slow(PLAIN[0], **said))
    assert _fast(PLAIN[0], metadata={"token": "sk-123456"}) is None  # redaction would hide it


@pytest.mark.parametrize("results", OTHER)
def test_anything_else_takes_the_records_path(results) -> None:
    assert _fast(results) is None


def test_a_declared_secret_takes_the_records_path(monkeypatch) -> None:
    assert _fast(PLAIN[0]) is not None
    monkeypatch.setattr(redaction, "_declared", ("text d1",))
    assert _fast(PLAIN[0]) is None  # redaction would hide it in a result's text
    assert _slow(PLAIN[0]).results[0].text != "text d1#0"


def test_sources_checked_before_are_known_by_content_not_by_object() -> None:
    record = QueryResult(id="d2#0", score=1.0, source={"benchmark_document_id": "d2"})
    assert _fast([record]) is not None  # checked, then remembered by content
    equal = QueryResult(id="d2#1", score=0.5, source={"benchmark_document_id": "d2"})
    assert _fast([equal]) is not None  # a new record, an equal source: known
    more = {"benchmark_document_id": "d2", "url": "https://u:pw@h/"}  # the same document
    assert _fast([QueryResult(id="d2#2", source=more)]) is None  # checked again: redacted
    record.source["url"] = "https://u:pw@h/"  # the checked dict changed afterwards
    assert _fast([record]) is None
    assert _fast([QueryResult(id="d2#3", source={"benchmark_document_id": " d2"})]) is not None


def _known(source: dict) -> QueryResponse | None:
    """``source`` read by the columns path after its keys, values and names were checked;
    when taken, the same response as the records path's."""
    results = [QueryResult(id="r#0", score=1.0, source=source)]
    fast = _fast(results)
    if fast is not None:
        _assert_same(fast, _slow(results))
    return fast


def test_sources_are_known_by_their_keys_values_and_names_each_checked() -> None:
    """The memo keeps each checked key set, text value and document name: a source made of
    them passes the checks (each key and value on its own), anything new is checked again."""
    checked = [
        {"benchmark_document_id": "d1", "document_id": "d1", "title": "Wings"},
        {"benchmark_document_id": "d3", "document_id": "d3", "title": "Flow"},
    ]
    for source in checked:
        assert _known(source) is not None
    record = QueryResult(id="d1#9", score=1.0, source=dict(checked[0]))
    assert _fast([record]) is not None  # known: not checked again
    mixed = {"benchmark_document_id": "d3", "document_id": "d1", "title": "Wings"}
    assert _known(mixed) is not None  # known parts: each clean
    tainted = "https://u:pw@h/x"  # a value never seen: checked, and refused
    assert _known({**checked[0], "title": tainted}) is None
    record.source["title"] = tainted  # a known dict changed in place, its keys the same
    assert _fast([record]) is None
    record.source["title"] = "Wings"
    assert _fast([record]) is not None
    assert _known({**checked[0], "api_key": "x"}) is None  # a key never seen: a secret's
    assert _known({"benchmark_document_id": "d1", "document_id": "d1", "token": "x"}) is None
    assert _known({"benchmark_document_id": "d1", "origin": "d1", "title": "x"}) is None
    assert _known({**checked[0], "title": ["Wings"]}) is not None  # a list: checked, clean
    assert _known({**checked[0], "title": 3}) is not None  # a number: checked, clean
    assert _known({"benchmark_document_id": "d1 ", "document_id": "d1", "title": "Flow"})
    assert _known({"benchmark_document_id": "zz", "document_id": "d1", "title": "Flow"}) is None


def test_a_known_source_is_not_checked_again_and_a_new_key_set_is(monkeypatch) -> None:
    """What the redaction check is given: no column for known sources of a known kind, the
    source for one with a key set never seen (the same keys and values plus one), the kind
    for a kind never seen (and one redaction would change is refused)."""
    from heta_notebook.evaluators import _record_hits

    assert _known({"benchmark_document_id": "d4", "document_id": "d4"}) is not None
    seen: list[object] = []
    check = _record_hits.unchanged_by_redaction

    def counted(response, columns):
        seen.append(columns)
        return check(response, columns)

    monkeypatch.setattr(_record_hits, "unchanged_by_redaction", counted)
    assert _known({"benchmark_document_id": "d4", "document_id": "d4"}) is not None
    assert seen == [None]  # known sources and kind: only the response's own fields checked
    assert _known({"benchmark_document_id": "d4", "document_id": "d4", "n": "1"}) is not None
    assert len(seen[-1]["source"]) == 1  # a new key set: checked
    results = [QueryResult(id="r#0", kind="figure", source={"benchmark_document_id": "d4"})]
    assert _fast(results) is not None
    assert seen[-1] == {"kind": ("figure",), "source": [], "metadata": ()}  # a new kind
    secret = [QueryResult(id="r#0", kind="token=abc", source={"benchmark_document_id": "d4"})]
    assert _fast(secret) is None and seen[-1]["kind"] == ("token=abc",)


@pytest.mark.parametrize(
    "record, update",
    [
        (QueryResponse(mode="m", results=PLAIN[0], answer="A"), {"results": ()}),
        (QueryResponse(mode="m", results=PLAIN[0], metadata={"x": 1}, extra=2), {"results": ()}),
        (QueryResult(id="d1#0", source={"a": "b"}, note="n"), {"source": {"c": "d"}}),
        (QueryResult(id="d1#0"), {"source": {}, "score": 2.0}),
    ],
)
def test_with_fields_is_model_copy(record, update) -> None:
    """The read's copy of a response (and stamping's of a record) is ``model_copy``'s."""
    mine, theirs = with_fields(record, **update), record.model_copy(update=update)
    assert type(mine) is type(theirs)
    assert mine.__dict__ == theirs.__dict__ and mine.__dict__ is not record.__dict__
    assert mine.__pydantic_fields_set__ == theirs.__pydantic_fields_set__
    assert mine.__pydantic_extra__ == theirs.__pydantic_extra__
    assert mine.__pydantic_private__ == theirs.__pydantic_private__
    assert mine == theirs and mine.to_dict() == theirs.to_dict()
    assert mine.model_dump_json() == theirs.model_dump_json()
    if record.__pydantic_extra__:  # copied, as model_copy copies it
        assert mine.__pydantic_extra__ is not record.__pydantic_extra__
    assert record.model_copy() == record  # the original unchanged


def test_the_system_takes_the_columns_path_and_otherwise_stamps() -> None:
    replies = {"plain": PLAIN[1], "other": OTHER[1]}
    system = as_system(lambda text: replies[text], benchmark_documents=DOCS)
    plain = asyncio.run(system.query("plain"))
    assert isinstance(plain.results, LazyResults)
    assert plain == _slow(PLAIN[1]).model_copy(update={"mode": plain.mode})
    other = asyncio.run(system.query("other"))
    assert type(other.results) is tuple
    assert other.results == _slow(OTHER[1]).results


# --------------------------------------------------------------------------- whole runs


class Search:
    """A protocol object answering Cranfield's BM25 ranking as new ``QueryResult`` records
    on every call (chunks of its documents); ``every`` > 0 adds, to the queries whose length
    ``every`` divides (whatever order they come in), results the columns path leaves to the
    records path."""

    query_modes = ("bm25",)

    def __init__(self, every: int = 0) -> None:
        self.every = every

    def query(self, text: str, *, mode: str, top_k: int = 10) -> QueryResponse:
        hits = [
            QueryResult(
                id=f"{doc}#{rank % 2}",
                text=f"document {doc}",
                score=None if rank == 7 else round(score, 1),  # one unscored, ties rounded
                source={"benchmark_document_id": doc, "document_id": doc},
            )
            for rank, (doc, score) in enumerate(rankings()[text][:top_k])
        ]
        hits.append(QueryResult(id="dup", score=0.0, source=dict(hits[0].source)))  # its doc
        hits.append(QueryResult(id=f"{hits[1].source['document_id']}#7", score=0.0))  # bare
        if self.every and len(text) % self.every == 0:
            hits.insert(2, QueryResult(id="zz#0", source={"benchmark_document_id": "zz"}))
            hits.insert(4, QueryResult(id="p", source={"url": "https://u:pw@h/"}))
            hits.append(QueryResult(id="m", source={"benchmark_document_id": "1"},
                                    metadata={"page": 2}))  # fmt: skip
        return QueryResponse(mode=mode, results=tuple(hits))


def _run(system: Search, store: ReportStore, name: str):
    config = BenchmarkRunConfig(report_id=name, top_k=10, checkpoint_every=7)
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipe=as_system(system, name="search"),
        limit=40,
        progress=False,
        config=config,
        store=store,
    ).report


@pytest.fixture(scope="module", params=[0, 3], ids=["all-columns", "mixed"])
def runs(request, tmp_path_factory) -> tuple:
    store = ReportStore(tmp_path_factory.mktemp("store"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redaction, "_declared", ())
        fast = _run(Search(request.param), store, "columns")
        patch.setattr(_adapt, "record_results", lambda response, documents: None)
        slow = _run(Search(request.param), store, "records")
    return store, fast, slow, request.param


@pytest.mark.filterwarnings("ignore::heta_notebook.DepthWarning")  # top 10 on purpose
@pytest.mark.filterwarnings("ignore:only .* map to a benchmark document:UserWarning")  # mixed
def test_a_run_of_records_equals_the_records_run(runs) -> None:
    store, fast, slow, every = runs
    lazy = [isinstance(r.response.results, LazyResults) for r in fast.case_results]
    assert all(lazy) if not every else 0 < sum(lazy) < len(lazy)
    assert not any(isinstance(r.response.results, LazyResults) for r in slow.case_results)
    assert fast.score_summary == slow.score_summary
    for mine, theirs in zip(fast.case_results, slow.case_results, strict=True):
        assert mine.scores == theirs.scores
        assert mine.response == theirs.response
        assert mine.response.model_fields_set == theirs.response.model_fields_set
    assert fast.metadata["id_coverage"] == slow.metadata["id_coverage"]
    mine, theirs = fast.misses("evidence"), slow.misses("evidence")
    assert len(mine) and mine.drop(columns="recipe_key", errors="ignore").equals(
        theirs.drop(columns="recipe_key", errors="ignore")
    )


def _tables(store: ReportStore, report) -> dict[str, object]:
    """A stored report's results and scores tables, texts read back into the results (text
    ids number texts in the order the run delivered them: two records runs differ there)."""
    paths = table_paths(store.report_dir(report.knowledge_base_name, report.report_id))
    results, scores = pq.read_table(paths["results"]), pq.read_table(paths["scores"])
    texts = pq.read_table(paths["texts"]).column(0).to_pylist()
    read = [texts[i] for i in results["text"].to_pylist()]
    results = results.set_column(results.column_names.index("text"), "text", [read])
    return {"results": results, "scores": scores, "texts": sorted(texts)}


def test_a_run_of_records_stores_the_tables_of_the_records_run(runs) -> None:
    store, fast, slow, _ = runs
    mine, theirs = _tables(store, fast), _tables(store, slow)
    assert mine["texts"] == theirs["texts"]
    for table in ("results", "scores"):
        assert mine[table].equals(theirs[table]), table  # type: ignore[attr-defined]
