"""RecordsBenchmark: lists of dicts, DataFrames, HoneyHive datapoints, and bad rows."""

from __future__ import annotations

import pandas as pd
import pytest

from heta_notebook.benchmarks._io import BenchmarkFormatError
from heta_notebook.benchmarks._records import RecordsBenchmark
from heta_notebook.schema import BenchmarkDocument

DOCS = [
    {"document_id": "d1", "text": "Paris is in France."},
    {"id": "d2", "text": "Rome is in Italy."},
]


def test_honeyhive_datapoints_keep_inputs_and_ground_truth():
    datapoint = {
        "inputs": {"question": "Capital of France?", "user": "ana"},
        "ground_truth": {"answer": "Paris", "evidence": ["d1", "Paris is the capital"]},
    }
    _, documents, cases = RecordsBenchmark([datapoint], documents=DOCS).load()
    case = cases[0]
    assert case.case_id == "case_1" and case.query == "Capital of France?"
    assert case.expected.answers == ("Paris",)
    evidence = case.expected.evidence
    assert evidence[0].reference_id == "d1"  # a known document id
    assert evidence[1].text == "Paris is the capital" and evidence[1].reference_id is None
    assert case.metadata["inputs"] == datapoint["inputs"]
    assert case.metadata["ground_truth"] == datapoint["ground_truth"]
    assert [d.document_id for d in documents] == ["d1", "d2"]


@pytest.mark.parametrize("key", ["query", "question", "input"])
def test_query_keys(key):
    _, _, cases = RecordsBenchmark([{"inputs": {key: "q?"}, "ground_truth": {}}]).load()
    assert cases[0].query == "q?"


def test_flat_rows_answers_and_reference_ids():
    rows = [
        {
            "id": 7,
            "question": "where?",
            "answers": ["here", "there"],
            "reference_ids": ["d2"],
            "labels": {"kind": "geo"},
        },
        {"case_id": "x", "query": "what?", "answer": 42},
    ]
    _, _, cases = RecordsBenchmark(rows, documents=DOCS).load()
    assert cases[0].case_id == "7" and cases[0].expected.answers == ("here", "there")
    assert cases[0].expected.evidence[0].reference_id == "d2" and cases[0].labels == {"kind": "geo"}
    assert "inputs" not in cases[0].metadata
    assert cases[1].expected.answers == ("42",)


def test_heta_case_rows_pass_through():
    row = {
        "case_id": "h1",
        "query": "q",
        "expected": {"answers": ["a"], "evidence": [{"reference_id": "d1"}]},
    }
    _, _, cases = RecordsBenchmark([row]).load()
    assert cases[0].expected.evidence[0].reference_id == "d1"


def test_dataframe_with_missing_cells():
    frame = pd.DataFrame(
        [
            {"question": "one?", "answer": "1", "contexts": ["ctx a", "ctx b"]},
            {"question": "two?", "answer": None, "contexts": None},
        ]
    )
    _, documents, cases = RecordsBenchmark(frame).load()
    assert [c.query for c in cases] == ["one?", "two?"]
    assert cases[1].expected.answers == () and cases[1].expected.evidence == ()
    # without documents=, distinct contexts become the corpus and the evidence points at them
    assert [d.read_text() for d in documents] == ["ctx a", "ctx b"]
    assert [e.reference_id for e in cases[0].expected.evidence] == [
        d.document_id for d in documents
    ]


def test_documents_from_dataframe_and_records():
    docs = pd.DataFrame(DOCS)
    _, documents, _ = RecordsBenchmark([{"query": "q"}], documents=docs).load()
    assert [d.document_id for d in documents] == ["d1", "d2"]
    ready = [BenchmarkDocument(document_id="z", text="zz")]
    assert RecordsBenchmark([{"query": "q"}], documents=ready).load().documents == ready


def expect_error(records, *fragments, line=None, **kw):
    with pytest.raises(BenchmarkFormatError) as info:
        RecordsBenchmark(records, **kw).load()
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    assert info.value.line == line
    assert info.value.file.startswith("<records>")


def test_missing_query_names_the_row():
    expect_error([{"query": "ok"}, {"inputs": {"prompt": "?"}}], "<records>:2", "no query", line=2)


def test_duplicate_case_ids():
    rows = [{"id": "a", "query": "1"}, {"id": "b", "query": "2"}, {"id": "a", "query": "3"}]
    expect_error(rows, "duplicate case_id 'a'", "line 1", line=3)


def test_duplicate_document_ids():
    docs = [*DOCS, {"document_id": "d1", "text": "again"}]
    expect_error([{"query": "q"}], "duplicate document_id 'd1'", line=3, documents=docs)


def test_bad_shapes():
    expect_error(["just a string"], "must be a dict", line=1)
    expect_error([{"inputs": ["q?"]}], "'inputs' must be a dict", line=1)
    expect_error([{"query": "q", "evidence": [3.5]}], "strings or dicts", line=1)
    with pytest.raises(TypeError, match="list of dicts"):
        RecordsBenchmark({"query": "q"})


def test_string_inputs_and_ground_truth_and_flattened_columns():
    frame = pd.DataFrame([{"inputs.question": "flat?", "ground_truth.answer": "yes"}])
    _, _, cases = RecordsBenchmark(frame).load()
    assert cases[0].query == "flat?" and cases[0].expected.answers == ("yes",)
    assert cases[0].metadata["inputs"] == {"question": "flat?"}
    _, _, cases = RecordsBenchmark([{"inputs": "plain?", "ground_truth": "sure"}]).load()
    assert cases[0].query == "plain?" and cases[0].expected.answers == ("sure",)
    assert cases[0].metadata["ground_truth"] == "sure"  # kept as given
