"""JsonlBenchmark: heta-framework's documents.jsonl + cases.jsonl layout, and every bad input."""

from __future__ import annotations

import base64

import pytest

from heta_notebook.benchmarks._io import BenchmarkFormatError
from heta_notebook.benchmarks._jsonl import JsonlBenchmark
from heta_notebook.benchmarks._protocol import BenchmarkProtocol, BenchmarkWorkspace
from tests._kb_helpers import write_jsonl

DOCS = [
    {
        "document_id": "d1",
        "name": "d1.txt",
        "media_type": "text/plain",
        "text": "alpha beta",
        "metadata": {"lang": "en"},
    },
    {
        "document_id": "d2",
        "name": "d2.bin",
        "media_type": "text/plain",
        "data_base64": base64.b64encode(b"gamma").decode(),
    },
    {"document_id": "d3", "name": "d3.txt", "media_type": "text/plain", "path": "files/d3.txt"},
]
CASES = [
    {
        "case_id": "q1",
        "query": "alpha?",
        "expected": {
            "answers": ["beta"],
            "evidence": [
                {
                    "reference_id": "d1",
                    "locator": {"document_id": "d1"},
                    "metadata": {"relevance": 2},
                }
            ],
            "value": 3,
            "metadata": {"note": "x"},
        },
        "labels": {"topic": "greek"},
        "metadata": {"source": "test"},
    },
    {"case_id": 2, "query": "gamma", "expected": {"answers": "gamma"}},
]


def make(tmp_path, docs=DOCS, cases=CASES) -> JsonlBenchmark:
    (tmp_path / "files").mkdir(exist_ok=True)
    (tmp_path / "files" / "d3.txt").write_text("delta file", encoding="utf-8")
    return JsonlBenchmark(
        write_jsonl(tmp_path / "documents.jsonl", docs),
        write_jsonl(tmp_path / "cases.jsonl", cases),
        {"name": "tiny", "version": "2"},
        evaluators=(),
    )


def test_reads_every_field(tmp_path):
    benchmark = make(tmp_path)
    assert isinstance(benchmark, BenchmarkProtocol)
    manifest, documents, cases = benchmark.load()
    assert manifest.key == "tiny:2:test"
    assert [d.read_text() for d in documents] == ["alpha beta", "gamma", "delta file"]
    assert documents[0].metadata == {"lang": "en"} and documents[1].data == b"gamma"
    assert documents[2].path == tmp_path / "files" / "d3.txt"
    first = cases[0]
    assert first.expected.answers == ("beta",) and first.expected.value == 3
    assert first.expected.evidence[0].relevance == 2
    assert first.expected.evidence[0].locator == {"document_id": "d1"}
    assert first.labels == {"topic": "greek"} and first.metadata == {"source": "test"}
    assert cases[1].case_id == "2" and cases[1].expected.answers == ("gamma",)


async def test_protocol_methods(tmp_path):
    benchmark = make(tmp_path)
    workspace = BenchmarkWorkspace(root_dir=tmp_path, cache_dir=tmp_path / "cache")
    prepared = await benchmark.prepare(workspace)
    assert prepared.metadata["documents"] == 3 and prepared.metadata["cases"] == 2
    units = [u async for u in benchmark.run_units(prepared)]
    assert len(units) == 1 and units[0].is_corpus_level
    assert benchmark.resources() == () and benchmark.evaluators() == ()


def test_default_evaluators_are_recall_and_answer_contains(tmp_path):
    pytest.importorskip("heta_notebook.evaluators._retrieval")
    pytest.importorskip("heta_notebook.evaluators._answer")
    benchmark = JsonlBenchmark(tmp_path / "d.jsonl", tmp_path / "c.jsonl", "x")
    names = [e.name for e in benchmark.evaluators()]
    assert len(names) == 2 and any("recall" in n for n in names)


def expect_error(benchmark, *fragments, line=None):
    with pytest.raises(BenchmarkFormatError) as info:
        benchmark.load()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    if line is not None:
        assert info.value.line == line
    return info.value


def test_missing_file(tmp_path):
    benchmark = JsonlBenchmark(tmp_path / "nope.jsonl", tmp_path / "cases.jsonl", "x")
    error = expect_error(benchmark, "nope.jsonl", "not found")
    assert error.file.endswith("nope.jsonl") and error.line is None


def test_malformed_line_names_file_and_line(tmp_path):
    docs = [DOCS[0], '{"document_id": "d9", "text": ', DOCS[1]]
    error = expect_error(make(tmp_path, docs=docs), "documents.jsonl:2", "malformed JSON", line=2)
    assert error.file.endswith("documents.jsonl")


def test_non_object_line(tmp_path):
    expect_error(make(tmp_path, cases=[CASES[0], "[1, 2]"]), "cases.jsonl:2", "JSON object")


def test_duplicate_document_id(tmp_path):
    docs = [DOCS[0], DOCS[1], {**DOCS[0], "text": "again"}]
    expect_error(
        make(tmp_path, docs=docs), "documents.jsonl:3", "duplicate document_id 'd1'", "line 1"
    )


def test_duplicate_case_id(tmp_path):
    expect_error(
        make(tmp_path, cases=[CASES[0], CASES[0]]), "cases.jsonl:2", "duplicate case_id 'q1'"
    )


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ({"name": "a.txt", "text": "x"}, "'document_id' is missing"),
        ({"document_id": "a", "text": "x", "path": "files/d3.txt"}, "exactly one of"),
        ({"document_id": "a"}, "exactly one of"),
        ({"document_id": "a", "data_base64": "***"}, "not base64"),
        ({"document_id": "a", "path": "files/missing.txt"}, "not found"),
        ({"document_id": "a", "name": "dir/a.txt", "text": "x"}, "file name"),
        ({"document_id": "a", "text": "x", "metadata": [1]}, "'metadata' must be an object"),
    ],
)
def test_bad_document_rows(tmp_path, row, fragment):
    expect_error(make(tmp_path, docs=[DOCS[0], row]), "documents.jsonl:2", fragment, line=2)


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ({"query": "q"}, "'case_id' is missing"),
        ({"case_id": "a"}, "'query' is missing"),
        ({"case_id": "a", "query": "   "}, "'query' is empty"),
        ({"case_id": "a", "query": "q", "expected": []}, "'expected' must be an object"),
        ({"case_id": "a", "query": "q", "expected": {"evidence": {"x": 1}}}, "must be a list"),
        (
            {"case_id": "a", "query": "q", "expected": {"evidence": [{}]}},
            "at least one of reference_id",
        ),
    ],
)
def test_bad_case_rows(tmp_path, row, fragment):
    expect_error(make(tmp_path, cases=[CASES[0], row]), "cases.jsonl:2", fragment, line=2)


def test_blank_lines_are_skipped_and_line_numbers_stay_true(tmp_path):
    docs = [DOCS[0], "", "   ", {"document_id": "d1", "text": "dup"}]
    expect_error(make(tmp_path, docs=docs), "documents.jsonl:4", line=4)


def test_from_folder_uses_the_standard_file_names(tmp_path):
    make(tmp_path)
    benchmark = JsonlBenchmark.from_folder(tmp_path, evaluators=())
    manifest, documents, cases = benchmark.load()
    assert manifest.name == tmp_path.name and len(documents) == 3 and len(cases) == 2
