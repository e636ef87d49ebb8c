"""The embedded KB's array results: reports equal the record path's, records appear on demand.

The KB answers with ``LazyResults`` (row indices and scores; ``kb._hits``): the BEIR metrics
and the checkpoint read the arrays, and ``response.results`` still behaves as the tuple of
``QueryResult`` records a system returning records would give.
"""

from __future__ import annotations

import copy
import pickle
import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, Recipe, ReportStore
from heta_notebook.benchmarks._beir import BeirBenchmark
from heta_notebook.benchmarks._records import RecordsBenchmark
from heta_notebook.evaluators._matching import document_scores, match_evidence
from heta_notebook.evaluators._retrieval import beir_default_metrics
from heta_notebook.kb._answer import answer_response_sync
from heta_notebook.kb._knowledge_base import KnowledgeBase
from heta_notebook.kb._recipe import Chunking
from heta_notebook.reports._lazy_results import LazyResults
from heta_notebook.schema import BenchmarkEvidence, EvaluationScore, QueryResponse
from tests._kb_helpers import cranfield
from tests._report_helpers import table_paths

MODES = ("full_text_search", "vector_search", "hybrid_search")


class RecordsKB:
    """The same KB as a user's system would be: it returns records (a plain tuple)."""

    def __init__(self, kb: KnowledgeBase):
        self.kb, self.name, self.query_modes = kb, kb.name, kb.query_modes

    async def query(self, text: str, *, mode: str, top_k: int = 10, options=None):
        response = self.kb.query_many([text], mode=mode, top_k=top_k, options=options)[0]
        fields = {**response.__dict__, "results": tuple(response.results)}
        return QueryResponse(**fields)  # validated, as any user system's response


class Seen:
    """A user's evaluator that keeps every ``response.results`` it is given."""

    name = "seen"

    def __init__(self):
        self.results: dict[tuple[str, str], tuple] = {}

    async def evaluate(self, *, case, response):
        self.results[case.case_id, response.mode] = tuple(response.results)
        return EvaluationScore(name=self.name, value=float(len(response.results)))


def synthetic_corpus(n_docs: int = 300, n_queries: int = 60):
    """Random words; duplicated documents (exact ties), several chunks per document, titles."""
    rng = random.Random(7)
    words = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choices(words, k=rng.randint(20, 90))) for _ in range(n_docs)]
    texts[10:20] = [texts[5]] * 10  # tied documents
    documents = [
        {
            "document_id": f"doc-{i}",
            "text": t,
            "metadata": {"title": f'Tïtle "{i}"'} if i % 3 else {},
        }
        for i, t in enumerate(texts)
    ]
    records = []
    for q in range(n_queries):
        target = rng.randrange(n_docs)
        query = " ".join(rng.sample(texts[target].split(), 3))
        relevant = sorted({f"doc-{target}", f"doc-{rng.randrange(n_docs)}"})
        records.append({"case_id": f"q{q}", "query": query, "reference_ids": relevant})
    return RecordsBenchmark(records, documents=documents, manifest="synthetic")


async def run_both(
    tmp_path: Path, benchmark, documents, recipe: Recipe, top_k: int, limit: int | None = None
):
    """The same KB run twice (the first ``limit`` cases, or all): its own array results, and
    records through ``RecordsKB``."""
    kb = KnowledgeBase.build_sync(recipe, documents)
    reports, folders = [], []
    for label, system in (("arrays", kb), ("records", RecordsKB(kb))):
        seen = Seen()
        result = await BenchmarkRunner().run(
            benchmark=benchmark,
            recipe=system,
            knowledge_base_name=label,
            evaluators=[*beir_default_metrics(), seen],
            config=BenchmarkRunConfig(top_k=top_k, max_concurrent_queries=8),
            store=ReportStore(tmp_path / label),
            progress=False,
            limit=limit,
        )
        reports.append((result.report, seen))
        folders.append(Path(result.report_path).parent)
    return reports, folders


def same_cases(a, b) -> None:
    """Case by case equal (latencies aside: they are measured; and the embedded KB's deep
    ranks, which only the array side has: the record side is the KB wrapped as a user's
    system, whose results stop at top_k)."""
    assert len(a.case_results) == len(b.case_results) > 0
    for x, y in zip(a.case_results, b.case_results, strict=True):
        assert _comparable(x) == _comparable(y)
    assert a.score_summary == b.score_summary


def _comparable(result):
    response = result.response
    if response is not None and "deep_ranks" in response.metadata:
        metadata = {k: v for k, v in response.metadata.items() if k != "deep_ranks"}
        response = response.model_copy(update={"metadata": metadata})
    return result.model_copy(update={"latency_ms": 0, "response": response})


def same_tables(a: Path, b: Path) -> None:
    """The stored results tables are equal: every row, rank, id, text, score, source and
    metadata (text ids are numbered in the order texts were first checkpointed)."""
    paths = [table_paths(folder) for folder in (a, b)]
    tables = [pq.read_table(p["results"]) for p in paths]
    texts = [pq.read_table(p["texts"]).column("text") for p in paths]
    for name in tables[0].column_names:
        if name != "text":
            assert tables[0].column(name).equals(tables[1].column(name)), name
    resolved = [t.take(table.column("text")) for t, table in zip(texts, tables, strict=True)]
    assert resolved[0].equals(resolved[1])


def report_folder(folder: Path) -> Path:
    (found,) = {p.parent for p in folder.rglob("header.json")}
    return found


CRANFIELD_CASES = 75  # a third of the queries: every mode, tie and chunk rule, a third the time


@pytest.mark.parametrize("top_k", [100])  # top 10: on the synthetic corpus below
async def test_cranfield_reports_from_arrays_equal_the_record_path(tmp_path, top_k):
    manifest, documents, cases = cranfield()
    benchmark = BeirBenchmark.cranfield()
    recipe = Recipe(name="d", answer=None)
    ran = await run_both(tmp_path, benchmark, documents, recipe, top_k, limit=CRANFIELD_CASES)
    (arrays, seen_a), (records, seen_r) = ran[0]
    assert len(arrays.case_results) == 3 * CRANFIELD_CASES < 3 * len(cases)
    assert arrays.query_modes == MODES
    same_cases(arrays, records)
    for result in arrays.case_results:  # the run itself built no record
        if result.response is not None and result.response.results:
            assert isinstance(result.response.results, LazyResults)
    # a user's evaluator sees the very records the record path gives it
    assert seen_a.results == seen_r.results and len(seen_a.results) == 3 * CRANFIELD_CASES
    (one,) = seen_a.results["1", "hybrid_search"][:1]
    assert one.source["benchmark_document_id"] and one.metadata["fused_ranks"]
    assert one.text and one.score is not None and one.kind == "chunk"
    stored = [report_folder(tmp_path / label) for label in ("arrays", "records")]
    same_tables(*stored)
    loaded = [
        ReportStore(tmp_path / label).load(label, report.report_id)
        for label, report in (("arrays", arrays), ("records", records))
    ]
    same_cases(*loaded)


@pytest.mark.filterwarnings("ignore::heta_notebook.DepthWarning")  # shallow on purpose
@pytest.mark.parametrize("top_k", [10, 50])
async def test_synthetic_reports_with_ties_chunks_and_titles_equal_the_record_path(tmp_path, top_k):
    benchmark = synthetic_corpus()
    _, documents, _ = benchmark.load()
    chunking = Chunking(unit="words", size=20, overlap=5)
    recipe = Recipe(name="chunked", chunking=chunking, answer=None)
    (arrays, seen_a), (records, seen_r) = (
        await run_both(tmp_path, benchmark, documents, recipe, top_k)
    )[0]
    same_cases(arrays, records)
    assert seen_a.results == seen_r.results
    titled = [r for rs in seen_a.results.values() for r in rs if "document_title" in r.metadata]
    assert titled and titled[0].metadata["document_title"].startswith("Tïtle")
    same_tables(*(report_folder(tmp_path / label) for label in ("arrays", "records")))


def test_lazy_results_behave_as_the_tuple_of_records():
    _, documents, _ = cranfield()
    kb = KnowledgeBase.build_sync(Recipe(name="d"), documents)
    for mode in MODES:
        response = kb.query_many(["wing flutter"], mode=mode, top_k=7)[0]
        lazy = response.results
        assert isinstance(lazy, LazyResults) and not lazy.built and len(lazy) == 7
        assert document_scores(lazy) == document_scores(tuple(lazy.columns.records()))
        records = tuple(lazy)
        plain = QueryResponse(**{**response.__dict__, "results": records})
        assert lazy == records and records == lazy and lazy != list(records)
        assert response == plain and plain == response
        assert lazy[0] == records[0] and lazy[-1] == records[-1] and lazy[1:4] == records[1:4]
        assert list(lazy) == list(records) and records[0] in lazy and lazy + () == records
        assert response.model_dump_json() == plain.model_dump_json()
        assert response.model_dump() == plain.model_dump()
        assert QueryResponse.model_validate_json(response.model_dump_json()) == plain
        for copied in (pickle.loads(pickle.dumps(response)), copy.deepcopy(response)):
            assert copied == plain and type(copied.results) is tuple
        assert repr(lazy) == repr(records)
        # evidence matched by reference id reads the arrays: the records' ranks and rules
        ids = [r.source["benchmark_document_id"] for r in records[::3]]
        evidence = [BenchmarkEvidence(reference_id=d) for d in [*ids, "not-a-document"]]
        fresh = kb.query_many(["wing flutter"], mode=mode, top_k=7)[0].results
        assert match_evidence(evidence, fresh) == match_evidence(evidence, records)
        assert not fresh.built


def test_the_answer_step_reads_only_the_results_it_quotes():
    _, documents, _ = cranfield()
    kb = KnowledgeBase.build_sync(Recipe(name="d"), documents)  # extractive answers
    text = "what similarity laws must be obeyed when constructing aeroelastic models"
    (answered,) = kb.query_many([text], mode="hybrid_search", top_k=100, answer=True)
    assert isinstance(answered.results, LazyResults) and not answered.results.built
    plain = QueryResponse(**{**answered.__dict__, "results": tuple(answered.results)})
    again = answer_response_sync(kb.recipe.answer, text, plain)
    assert answered.answer == again.answer and answered.citations == again.citations


async def test_a_checkpointed_run_with_the_beir_metrics_builds_no_record(tmp_path):
    benchmark = synthetic_corpus(n_docs=120, n_queries=20)
    _, documents, _ = benchmark.load()
    kb = KnowledgeBase.build_sync(Recipe(name="d", answer=None), documents)
    result = await BenchmarkRunner().run(
        benchmark=benchmark,
        recipe=kb,
        evaluators=beir_default_metrics(),
        config=BenchmarkRunConfig(top_k=100),
        store=ReportStore(tmp_path),
        progress=False,
    )
    responses = [r.response for r in result.report.case_results]
    assert len(responses) == 60 and all(len(r.results) for r in responses)
    assert not any(r.results.built for r in responses)
    assert result.report.score_summary["hybrid_search.beir_recall@100"] > 0.5


def test_the_per_chunk_cache_is_bounded_and_refills(monkeypatch):
    from heta_notebook.kb import _hits

    monkeypatch.setattr(_hits, "KEEP_ROWS", 5)
    _, documents, _ = cranfield()
    kb = KnowledgeBase.build_sync(Recipe(name="bm25", dense=None, hybrid=None), documents)
    (response,) = kb.query_many(["boundary layer"], mode="full_text_search", top_k=20)
    columns = response.results.columns
    assert len(kb._row_facts) <= 20
    assert columns.hit_columns().ids == [r.id for r in response.results]
    assert document_scores(response.results) == document_scores(tuple(response.results))
