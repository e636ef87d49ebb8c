"""Bad input of every kind gets an error of ours naming the file and line (issue #16)."""

from __future__ import annotations

import json

import pytest

from heta_notebook import KnowledgeBase, Recipe, RecordsBenchmark
from heta_notebook.benchmarks._beir import BeirBenchmark, read_qrels
from heta_notebook.benchmarks._io import BenchmarkFormatError, BenchmarkWarning
from heta_notebook.benchmarks._jsonl import JsonlBenchmark
from heta_notebook.schema import BenchmarkDocument
from tests._kb_helpers import write_beir, write_jsonl

DOCS = [{"document_id": "d1", "text": "alpha beta"}]
CASE = {"case_id": "q1", "query": "alpha?", "expected": {"answers": ["beta"]}}
CORPUS = [{"_id": "a", "title": "Wings", "text": "lift and drag"}]
QUERIES = [{"_id": "1", "text": "lift?"}]


def jsonl(tmp_path, docs=DOCS, cases=(CASE,)) -> JsonlBenchmark:
    return JsonlBenchmark(
        write_jsonl(tmp_path / "documents.jsonl", docs),
        write_jsonl(tmp_path / "cases.jsonl", list(cases)),
        "tiny",
        evaluators=(),
    )


# -- non-UTF-8 ---------------------------------------------------------------------------


def test_latin1_cases_file_names_file_line_and_byte(tmp_path):
    bench = jsonl(tmp_path)
    good = json.dumps(CASE).encode()
    bad = json.dumps({**CASE, "case_id": "q2", "query": "caf\u00e9"}, ensure_ascii=False).encode(
        "utf-8"
    )
    bad = bad.replace("é".encode(), b"\xe9")
    bench.cases_jsonl.write_bytes(good + b"\n" + bad + b"\n")
    with pytest.raises(BenchmarkFormatError) as info:
        bench.load()
    error = info.value
    assert error.file == str(bench.cases_jsonl) and error.line == 2
    assert "not UTF-8" in str(error) and "0xe9" in str(error)
    offset = len(good) + 1 + bad.index(b"\xe9")
    assert f"byte offset {offset}" in str(error)


def test_non_utf8_qrels_names_line(tmp_path):
    folder = write_beir(tmp_path / "b", CORPUS, QUERIES, ["1\ta\t1"])
    qrels = folder / "qrels" / "test.tsv"
    qrels.write_bytes(qrels.read_bytes() + b"1\t\xff\t1\n")
    with pytest.raises(BenchmarkFormatError, match=r"test\.tsv:3: not UTF-8"):
        BeirBenchmark.from_folder(folder).load()


def test_utf8_bom_is_accepted(tmp_path):
    bench = jsonl(tmp_path)
    bench.cases_jsonl.write_bytes(b"\xef\xbb\xbf" + json.dumps(CASE).encode() + b"\n")
    assert [c.case_id for c in list(bench.load())[2]] == ["q1"]


# -- empty inputs ------------------------------------------------------------------------


def test_empty_cases_file_is_named(tmp_path):
    bench = jsonl(tmp_path, cases=())
    bench.cases_jsonl.write_text("\n\n", encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match="no cases") as info:
        bench.load()
    assert info.value.file == str(bench.cases_jsonl)


def test_empty_records_say_so():
    with pytest.raises(BenchmarkFormatError, match=r"<records>: no cases"):
        RecordsBenchmark([]).load()


def test_empty_qrels_warns_and_names_the_file(tmp_path):
    folder = write_beir(tmp_path / "b", CORPUS, QUERIES, [])
    qrels = folder / "qrels" / "test.tsv"
    with pytest.warns(BenchmarkWarning, match="no qrels rows"):
        assert read_qrels(qrels, {"1": {}}, {"a": "a"}) == (
            {},
            {"unknown_query": 0, "unknown_document": 0},
        )
    with (
        pytest.warns(BenchmarkWarning),
        pytest.raises(BenchmarkFormatError, match="no cases") as info,
    ):
        BeirBenchmark.from_folder(folder).load()
    assert info.value.file == str(qrels)


def test_all_empty_corpus_is_refused_by_the_loader(tmp_path):
    corpus = [{"_id": "a", "title": "", "text": ""}, {"_id": "b", "text": "  "}]
    folder = write_beir(tmp_path / "b", corpus, QUERIES, ["1\ta\t1"])
    with pytest.raises(BenchmarkFormatError, match="all 2 documents are empty") as info:
        BeirBenchmark.from_folder(folder).load()
    assert info.value.file == str(folder / "corpus.jsonl")
    with pytest.raises(BenchmarkFormatError, match="documents are empty"):
        jsonl(tmp_path, docs=[{"document_id": "d1", "text": ""}]).load()


def test_all_empty_corpus_is_refused_before_bm25s():
    documents = [
        BenchmarkDocument(document_id="d1", text=""),
        BenchmarkDocument(document_id="d2", text=" "),
    ]
    with pytest.raises(ValueError, match="nothing to index: the 2 document"):
        KnowledgeBase.build_sync(Recipe(name="r"), documents)
    with pytest.raises(ValueError, match="nothing to index: the 0 document"):
        KnowledgeBase.build_sync(Recipe(name="r"), [])


# -- relevance grades --------------------------------------------------------------------


def _graded(grade):
    evidence = [{"reference_id": "d1", "metadata": {"relevance": grade}}]
    return {**CASE, "expected": {"evidence": evidence}}


@pytest.mark.parametrize("grade", [2.7, "high", True, None, [2], float("nan")])
def test_non_integer_relevance_is_refused_with_its_field(tmp_path, grade):
    bench = jsonl(tmp_path, cases=[CASE, _graded(grade)])
    if isinstance(grade, float) and grade != grade:
        bench.cases_jsonl.write_text(
            json.dumps(CASE) + "\n" + json.dumps(_graded(0)).replace("0}", "NaN}") + "\n"
        )
    with pytest.raises(
        BenchmarkFormatError, match=r"expected\.evidence\[0\]\.metadata\.relevance"
    ) as info:
        bench.load()
    assert info.value.line == 2 and "integer grade" in str(info.value)


@pytest.mark.parametrize(("grade", "expected"), [(2, 2), (2.0, 2), ("3", 3), (0, 0), (-1, -1)])
def test_integral_relevance_is_kept_as_int(tmp_path, grade, expected):
    case = jsonl(tmp_path, cases=[_graded(grade)]).load().cases[0]
    assert case.expected.evidence[0].metadata["relevance"] == expected
    assert type(case.expected.evidence[0].metadata["relevance"]) is int


def test_records_relevance_is_checked_too():
    rows = [{"query": "q", "evidence": [{"reference_id": "d", "metadata": {"relevance": 2.7}}]}]
    with pytest.raises(
        BenchmarkFormatError, match=r"<records>:1: .*relevance must be an integer grade"
    ):
        RecordsBenchmark(rows).load()


# -- Windows-reserved names ----------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "CON",
        "nul",
        "Com1",
        "LPT9",
        "aux.txt",
        "report.",
        "ab:c",
        "q?",
        "x*y",
        "a|b",
    ],
)
def test_windows_reserved_names_are_refused(name):
    from heta_notebook._util.paths import UnsafeNameError, safe_name

    with pytest.raises(UnsafeNameError, match="reserved on Windows"):
        safe_name(name)


@pytest.mark.parametrize(
    "name", ["console", "com10", "nul_report", "lpt", "a.b", "beir_cranfield-whole-docs"]
)
def test_names_near_reserved_ones_stay_allowed(name):
    from heta_notebook._util.paths import safe_name

    assert safe_name(name) == name


def test_store_refuses_a_reserved_knowledge_base_name(tmp_path):
    from heta_notebook import ReportStore
    from heta_notebook._util.paths import UnsafeNameError

    with pytest.raises(UnsafeNameError, match="reserved on Windows"):
        ReportStore(tmp_path).load("NUL", "r1")


# -- found by tests/test_fuzz_loaders.py -------------------------------------------------


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"case_id": "d1", "query": "q", "metadata": "0"}, "metadata"),
        ({"case_id": "d1", "query": "q", "labels": [1]}, "labels"),
        ({"case_id": "d1", "query": "q", "answers": {"a": 1}}, "answers"),
        ({"case_id": "d1", "query": "q", "answers": 1.5, "contexts": 2.5}, "contexts items"),
    ],
)
def test_records_with_wrong_types_name_the_row(row, field):
    with pytest.raises(BenchmarkFormatError, match=rf"<records>:1: .*{field}"):
        RecordsBenchmark([row]).load()


def test_a_custom_benchmark_without_cases_is_named():
    from heta_notebook import BenchmarkManifest, load_benchmark_sync

    class Empty:
        manifest = BenchmarkManifest(name="my-bench", version="3")

        async def documents(self, prepared):
            yield BenchmarkDocument(document_id="d1", text="x")

        async def cases(self, prepared):
            return
            yield

    with pytest.raises(ValueError, match=r"'my-bench:3:test' produced no cases"):
        load_benchmark_sync(Empty())
