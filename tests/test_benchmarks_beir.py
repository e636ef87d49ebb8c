"""BeirBenchmark: packaged Cranfield, qrels → evidence, and every bad input."""

from __future__ import annotations

import warnings

import pytest

from heta_notebook.benchmarks._beir import BeirBenchmark, benchmark_document_id, cranfield_folder
from heta_notebook.benchmarks._io import BenchmarkFormatError, BenchmarkWarning
from heta_notebook.benchmarks._protocol import BenchmarkWorkspace
from tests._kb_helpers import cranfield, write_beir

# the mini folder leaves query 3 unjudged on purpose: its load warning is asserted where it matters
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*have no judgments in:heta_notebook.benchmarks._io.BenchmarkWarning"
)

CORPUS = [
    {"_id": "a", "title": "Wings", "text": "lift and drag", "metadata": {"year": 1950}},
    {"_id": "b", "title": "", "text": "heat transfer"},
    {"_id": "c/1", "title": "Odd id", "text": "slashes"},
]
QUERIES = [
    {"_id": "1", "text": "lift?"},
    {"_id": "2", "text": "heat?"},
    {"_id": "3", "text": "never judged"},
    {"_id": "4", "text": "judged but not relevant"},
]
QRELS = ["1\ta\t2", "1\tb\t1", "2\tb\t3", "2\tc/1\t1", "4\ta\t0"]


def load(tmp_path, corpus=CORPUS, queries=QUERIES, qrels=QRELS, **kw):
    return BeirBenchmark.from_folder(
        write_beir(tmp_path / "mini", corpus, queries, qrels), **kw
    ).load()


def test_cranfield_is_packaged_and_complete():
    manifest, documents, cases = cranfield()
    assert cranfield_folder().joinpath("README.md").is_file()
    assert manifest.key == "beir_cranfield:1:test" and manifest.task_type == "information_retrieval"
    assert len(documents) == 1400 and len(cases) == 225
    assert sum(len(c.expected.evidence) for c in cases) == 1612
    grades = {e.relevance for c in cases for e in c.expected.evidence}
    assert grades == {1, 2, 3, 4}
    first = documents[0]
    assert first.document_id == "1" and first.name == "1.txt"
    assert first.metadata["title"].startswith("experimental investigation")
    assert first.read_text().startswith(first.metadata["title"] + "\n\n")


def test_qrels_become_graded_evidence(tmp_path):
    manifest, documents, cases = load(tmp_path)
    assert manifest.name == "beir_mini" and manifest.version == "local"
    assert [c.case_id for c in cases] == ["1", "2", "4"]  # only judged queries, file order
    first = cases[0]
    assert [(e.reference_id, e.relevance) for e in first.expected.evidence] == [("a", 2), ("b", 1)]
    assert first.expected.metadata == {"beir_query_id": "1", "positive_qrels": 2, "judged": 2}
    assert first.labels == {"dataset": "mini", "split": "test"}
    assert cases[2].expected.evidence == () and cases[2].expected.metadata["judged"] == 1


def test_documents_index_title_and_text(tmp_path):
    _, documents, cases = load(tmp_path)
    a, b, odd = documents
    assert a.read_text() == "Wings\n\nlift and drag" and a.metadata["year"] == 1950
    assert b.read_text() == "heat transfer" and b.metadata["title"] == ""
    assert odd.document_id == benchmark_document_id("c/1") != "c/1"
    assert (
        odd.metadata["beir_doc_id"] == "c/1" and odd.metadata["beir_document_id"] == odd.document_id
    )
    assert cases[1].expected.evidence[1].reference_id == odd.document_id


def test_matches_heta_framework_document_ids():
    heta_beir = pytest.importorskip("heta_framework.evaluation.benchmarks.beir")
    for value in ["1", "c/1", "a b", "x" * 120, "../etc", "ü-ß"]:
        assert benchmark_document_id(value) == heta_beir._benchmark_document_id(value)


def test_unknown_ids_in_qrels_warn_with_counts_and_are_dropped(tmp_path):
    qrels = [*QRELS, "9\ta\t1", "1\tzzz\t2", "1\tyyy\t1"]
    with pytest.warns(
        BenchmarkWarning, match=r"1 naming an unknown query.*2 naming an unknown document"
    ):
        benchmark = BeirBenchmark.from_folder(write_beir(tmp_path / "m", CORPUS, QUERIES, qrels))
        _, _, cases = benchmark.load()
    assert [e.reference_id for e in cases[0].expected.evidence] == ["a", "b"]
    prepared_facts = benchmark._loaded()[2]["qrels_dropped"]
    assert prepared_facts == {"unknown_query": 1, "unknown_document": 2}


def test_clean_input_does_not_warn(tmp_path):
    judged = [q for q in QUERIES if q["_id"] != "3"]  # an unjudged query is warned about
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load(tmp_path, queries=judged)


def expect_error(tmp_path, fragments, line=None, **kw):
    with pytest.raises(BenchmarkFormatError) as info:
        load(tmp_path, **kw)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    assert info.value.line == line
    return info.value


@pytest.mark.parametrize("missing", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_missing_file(tmp_path, missing):
    folder = write_beir(tmp_path / "m", CORPUS, QUERIES, QRELS)
    (folder / missing).unlink()
    with pytest.raises(BenchmarkFormatError, match="file not found") as info:
        BeirBenchmark.from_folder(folder).load()
    assert info.value.file.endswith(missing.split("/")[-1])


def test_missing_split(tmp_path):
    folder = write_beir(tmp_path / "m", CORPUS, QUERIES, QRELS)
    with pytest.raises(BenchmarkFormatError, match=r"dev\.tsv.*file not found"):
        BeirBenchmark.from_folder(folder, split="dev").load()


def test_malformed_corpus_line(tmp_path):
    corpus = [CORPUS[0], '{"_id": "x", "text": oops}']
    expect_error(tmp_path, ["corpus.jsonl:2", "malformed JSON"], line=2, corpus=corpus)


def test_duplicate_corpus_id(tmp_path):
    corpus = [*CORPUS, {"_id": "a", "text": "again"}]
    expect_error(tmp_path, ["corpus.jsonl:4", "duplicate corpus _id 'a'"], line=4, corpus=corpus)


def test_duplicate_query_id(tmp_path):
    queries = [*QUERIES, {"_id": "2", "text": "again"}]
    expect_error(tmp_path, ["queries.jsonl:5", "duplicate query _id '2'"], line=5, queries=queries)


def test_query_without_text(tmp_path):
    expect_error(tmp_path, ["queries.jsonl:1", "'text' is missing"], line=1, queries=[{"_id": "1"}])


def test_duplicate_qrels_pair(tmp_path):
    qrels = [*QRELS, "1\ta\t1"]
    expect_error(
        tmp_path, ["test.tsv:7", "duplicate qrels row", "first on line 2"], line=7, qrels=qrels
    )


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ("1\ta", "3 tab-separated fields"),
        ("1\ta\thigh", "relevance grade 'high' is not an integer"),
        ("1\ta\t1.5", "relevance grade '1.5' is not an integer"),
        ("1\ta\t1e3", "relevance grade '1e3' is not an integer"),  # float() read 1000
        ("1\ta\t1_0", "relevance grade '1_0' is not an integer"),  # float() read 10
        ("\ta\t1", "empty"),
    ],
)
def test_bad_qrels_rows(tmp_path, row, fragment):
    expect_error(tmp_path, ["test.tsv:2", fragment], line=2, qrels=[row])


async def test_prepare_reports_facts(tmp_path):
    folder = write_beir(tmp_path / "m", CORPUS, QUERIES, QRELS)
    benchmark = BeirBenchmark.from_folder(folder, evaluators=())
    prepared = await benchmark.prepare(BenchmarkWorkspace.temporary())
    assert prepared.root_dir == folder and prepared.metadata["cases"] == 3
    assert prepared.metadata["qrels_dropped"] == {"unknown_query": 0, "unknown_document": 0}


def test_default_evaluators_are_beir_metrics():
    pytest.importorskip("heta_notebook.evaluators._retrieval")
    names = [e.name for e in BeirBenchmark.cranfield().evaluators()]
    assert "beir_ndcg@10" in names and len(names) == 25
