"""A plain function's bare document ids become lazy columns (``IdHits``), no record per result:
the records they stand for, the metrics, the miss classes and every stored table are those of
the records path (the same ranking returned as ``QueryResult``s); anything not plainly a
benchmark document id takes the records path."""

from __future__ import annotations

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
from heta_notebook.evaluators._id_hits import id_results
from heta_notebook.evaluators._matching import document_scores, reference_keys
from heta_notebook.reports._lazy_results import LazyResults
from heta_notebook.reports._tables import _record_hit_fields
from heta_notebook.systems._adapt import stamp_documents
from heta_notebook.systems._check import id_coverage
from tests._report_helpers import table_paths
from tests._systems_helpers import ranked_ids

DOCS = frozenset({"d1", "d2", "d3", "d4"})


def _slow(ids: list[str]) -> QueryResponse:
    """The records path: a ``QueryResult`` per id, stamped."""
    return stamp_documents(
        QueryResponse(mode="m", results=tuple(QueryResult(id=i) for i in ids)), DOCS
    )


def test_bare_ids_stand_for_the_stamped_records_field_for_field() -> None:
    ids = ["d3", "d1#2", "d1", "d4#0", "d3"]
    lazy = id_results(ids, DOCS)
    assert isinstance(lazy, LazyResults) and not lazy.built
    slow = _slow(ids).results
    hits = lazy.columns
    assert hits.document_scores() == document_scores(slow)  # type: ignore[attr-defined]
    keys = hits.reference_keys()  # type: ignore[attr-defined]
    assert keys == [(r.id, *reference_keys(r)) for r in slow]
    columns = hits.hit_columns()  # type: ignore[attr-defined]
    record_ids, texts, scores, _, sources, _, _ = _record_hit_fields(list(slow))
    assert columns.ids == list(record_ids) and columns.texts == list(texts)
    assert columns.sources == sources.to_pylist() and scores.null_count == len(ids)
    assert columns.metadata == [None] * len(ids) and columns.kind == "chunk"
    assert not lazy.built  # none of that built a record
    built = lazy.records()
    assert built == slow
    for mine, theirs in zip(built, slow, strict=True):
        assert mine.model_dump() == theirs.model_dump()
        assert mine.__pydantic_fields_set__ == theirs.__pydantic_fields_set__
        assert mine.__pydantic_extra__ == theirs.__pydantic_extra__


@pytest.mark.parametrize(
    "ids",
    [
        ["d1", "x9"],  # an id naming no benchmark document
        ["d1", " d2"],  # an id that validation would strip
        ["d1", ("d2", 1.0)],  # a scored pair
        ["d1", {"id": "d2"}],  # a dict (unhashable)
        [],
    ],
)
def test_anything_else_takes_the_records_path(ids: list) -> None:
    assert id_results(ids, DOCS) is None
    assert id_results(["d1"], frozenset()) is None


def test_a_declared_secret_in_a_document_id_takes_the_records_path(monkeypatch) -> None:
    documents = frozenset({"doc-hunter2-1"})
    assert id_results(["doc-hunter2-1"], documents) is not None
    monkeypatch.setattr(redaction, "_declared", ("hunter2",))
    assert id_results(["doc-hunter2-1"], documents) is None  # redaction would change its source


def _ranked_records(text: str) -> list[QueryResult]:
    return [QueryResult(id=d) for d in ranked_ids(text)]


def _run(system, store: ReportStore, name: str):
    config = BenchmarkRunConfig(report_id=name, top_k=10, checkpoint_every=7)
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipe=as_system(system, name="search"),
        limit=40,
        progress=False,
        config=config,
        store=store,
    ).report


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple:
    store = ReportStore(tmp_path_factory.mktemp("store"))
    return store, _run(ranked_ids, store, "ids"), _run(_ranked_records, store, "records")


@pytest.mark.filterwarnings("ignore::heta_notebook.DepthWarning")  # shallow on purpose
def test_a_run_of_ids_builds_no_record_and_equals_the_records_run(runs) -> None:
    store, ids, records = runs
    lazy = [r.response.results for r in ids.case_results]
    assert all(isinstance(r, LazyResults) for r in lazy)
    assert not any(r.built for r in lazy)
    assert ids.score_summary == records.score_summary
    for mine, theirs in zip(ids.case_results, records.case_results, strict=True):
        assert mine.scores == theirs.scores
        assert mine.response == theirs.response  # builds the records: every field equal
        assert mine.response.model_fields_set == theirs.response.model_fields_set
    assert ids.metadata["id_coverage"] == records.metadata["id_coverage"]
    mine, theirs = ids.misses("evidence"), records.misses("evidence")
    assert len(mine) and mine.drop(columns="recipe_key", errors="ignore").equals(
        theirs.drop(columns="recipe_key", errors="ignore")
    )


def test_a_run_of_ids_stores_the_tables_of_the_records_run(runs) -> None:
    store, ids, records = runs
    for table in ("results", "scores", "texts"):
        mine = pq.read_table(table_paths(store.report_dir(ids.knowledge_base_name, "ids"))[table])
        theirs = pq.read_table(
            table_paths(store.report_dir(records.knowledge_base_name, "records"))[table]
        )
        assert mine.equals(theirs), table


def test_the_id_coverage_reads_the_columns_as_the_records() -> None:
    lazy = QueryResponse.model_construct(mode="m", results=id_results(["d1", "d2#1"], DOCS))
    assert id_coverage([lazy], DOCS) == id_coverage([_slow(["d1", "d2#1"])], DOCS)
