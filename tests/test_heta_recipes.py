"""A heta-framework KnowledgeRecipe evaluated by our runner (built the way heta's runner does).

Offline recipe: TextParser + SplitDocuments(encoding_name="unicode") + IndexFullText on an
InMemoryTextIndexStore and a LocalObjectStore; mode ``full_text_search``; the committed mini
Cranfield corpus (92 documents, 8 judged queries).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
from heta_notebook._util.redaction import mark
from heta_notebook.evaluators._matching import ranked_document_ids
from heta_notebook.integrations.heta import (
    HetaRecipeAdapter,
    adapt_benchmark,
    adapt_recipe,
    from_heta_report,
    redact_secrets,
)
from heta_notebook.schema import BenchmarkDocument, EvaluationScore
from tests._heta_helpers import (
    BEIR_MINI,
    comparable,
    heta,
    heta_beir,
    heta_jsonl,
    offline_recipe,
    offline_tiktoken,
    raw_fixture,
)

FTS = "full_text_search"


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    offline_tiktoken(monkeypatch)


def _heta_evaluators():
    return (*heta.beir_default_metrics(k_values=(1, 3, 5, 10)), heta.EvidenceRecallAtK(k=5))


async def _ours(benchmark, recipe, **options):
    options.setdefault("progress", False)
    return await BenchmarkRunner().run(
        benchmark=benchmark, recipe=recipe, knowledge_base_name="kb", query_modes=(FTS,), **options
    )


async def test_our_runner_reproduces_heta_runner_committed_report(tmp_path) -> None:
    """Same benchmark, recipe and evaluators as the fixture: the same score for every case."""
    result = await _ours(
        heta_beir(), offline_recipe(tmp_path / "objects"), evaluators=_heta_evaluators()
    )
    fixture = from_heta_report(raw_fixture())
    wanted = [
        (case, mode, {k: v for k, v in scores.items() if k != "answer_contains"})
        for case, mode, scores in comparable(fixture)
        if mode == FTS
    ]
    assert comparable(result.report) == wanted
    for key, value in fixture.score_summary.items():
        if key.startswith(FTS) and "answer_contains" not in key:
            assert result.report.score_summary[key] == pytest.approx(value, abs=1e-12)


async def test_heta_recipe_built_like_heta_runner_and_results_map_to_documents(tmp_path) -> None:
    recipe = offline_recipe(tmp_path / "objects")
    result = await _ours(heta_jsonl(), recipe)  # JsonlBenchmark's defaults: recall@5 + contains
    report = result.report
    assert report.knowledge_base_manifest["name"] == "kb"
    assert report.recipe_manifest["backend"] == "heta-framework"
    assert [s["type"] for s in report.recipe_manifest["steps"]] == [
        "ParseDocuments",
        "SplitDocuments",
        "IndexFullText",
    ]
    keys = sorted(
        p.relative_to(tmp_path / "objects").as_posix()
        for p in (tmp_path / "objects" / "raw").rglob("*.txt")
    )
    assert len(keys) == 92 and keys[0].startswith("raw/benchmarks/cranfield_mini_jsonl/test/")
    first = report.case_results[0]
    assert first.response.results and first.response.mode == FTS
    ranked = ranked_document_ids(first.response.results)
    assert ranked and all(r in {k.split("/")[4] for k in keys} for r in ranked)
    assert {s.name for s in first.scores} == {"evidence_recall@5", "answer_contains"}
    no_evidence = next(r for r in report.case_results if r.case_id == "no-evidence")
    assert no_evidence.score("evidence_recall@5").status == "skipped"
    assert first.metadata["expected"]["evidence"]  # expectations travel with each case


async def test_secrets_in_recipe_metadata_never_reach_reports(tmp_path) -> None:
    recipe = offline_recipe(tmp_path / "objects", api_key="sk-live-123", openai_api_key="sk-2")
    store = ReportStore(tmp_path / "store")
    result = await _ours(heta_jsonl(), recipe, store=store)
    text = store.report_path("kb", result.report.report_id).read_text()
    assert "sk-live-123" not in text and "sk-2" not in text
    assert result.report.recipe_manifest["metadata"]["api_key"] == mark("sk-live-123")
    kb_recipe = result.report.knowledge_base_manifest["recipe"]["metadata"]
    assert kb_recipe["openai_api_key"] == mark("sk-2")
    kept = {"max_tokens": 5, "token_start": 0, "document_token_counts": {"d": 3}, "key": "k"}
    secret = {
        "token": "x",
        "secret_key": "y",
        "X-Api-Key": "z",
        "aws_secret_access_key": "w",
        "nested": [{"password": "p", "api_key": None}],
    }
    redacted = redact_secrets({**kept, **secret})
    assert {k: redacted[k] for k in kept} == kept
    assert {redacted[k] for k in ("token", "secret_key", "X-Api-Key", "aws_secret_access_key")} == {
        mark(v) for v in "xyzw"
    }
    assert redacted["nested"] == [{"password": mark("p"), "api_key": None}]


class _Gate:
    """Our evaluator that counts evaluations in flight."""

    name = "gate"

    def __init__(self) -> None:
        self.active = self.peak = 0

    async def evaluate(self, *, case, response) -> EvaluationScore:
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.005)
        self.active -= 1
        return EvaluationScore(name=self.name, value=float(len(response.results)))


class _Engine:
    """A heta QueryEngine (its plug-in protocol) wrapping full-text search.

    It fails queries containing ``fail_on``, and raises KeyboardInterrupt (the notebook's stop
    button) once ``stop_after`` queries were answered.
    """

    def __init__(self, fail_on: str | None = None, stop_after: int | None = None) -> None:
        from heta_framework.kb.search.engines import FullTextSearchEngine

        self.inner = FullTextSearchEngine()
        self.mode = self.inner.mode
        self.fail_on, self.stop_after, self.calls = fail_on, stop_after, 0

    @property
    def required_assets(self):
        return self.inner.required_assets

    async def query(self, request, context):
        self.calls += 1
        if self.stop_after is not None and self.calls > self.stop_after:
            raise KeyboardInterrupt
        if self.fail_on and self.fail_on in request.text:
            raise RuntimeError(f"engine failed on {self.fail_on!r}")
        return await self.inner.query(request, context)


def _with_engine(recipe, engine: _Engine) -> HetaRecipeAdapter:
    from heta_framework.kb import QueryEngineRegistry

    return adapt_recipe(recipe, query_engines=QueryEngineRegistry([engine]))


async def test_concurrency_bound_and_same_scores_at_any_concurrency(tmp_path) -> None:
    recipe = offline_recipe(tmp_path / "objects")
    reports = {}
    for bound in (1, 4):
        gate = _Gate()
        config = BenchmarkRunConfig(max_concurrent_queries=bound)
        result = await _ours(
            heta_jsonl(), recipe, config=config, evaluators=(*_heta_evaluators(), gate)
        )
        assert 1 <= gate.peak <= bound
        reports[bound] = result.report
    assert gate.peak > 1  # cases really overlapped at bound 4
    assert comparable(reports[1]) == comparable(reports[4])


async def test_interrupt_then_resume_equals_clean_run_and_reuses_the_built_kb(tmp_path) -> None:
    engine = _Engine(stop_after=4)
    recipe = _with_engine(offline_recipe(tmp_path / "objects"), engine)
    store = ReportStore(tmp_path / "store")
    config = BenchmarkRunConfig(report_id="r1", checkpoint_every=1, max_concurrent_queries=2)
    with pytest.warns(RuntimeWarning, match="interrupted"):
        first = await _ours(heta_jsonl(), recipe, store=store, config=config)
    assert first.report.is_partial and len(first.report.case_results) <= 4
    engine.stop_after, engine.calls = None, 0
    final = await _ours(heta_jsonl(), recipe, store=store, config=config)
    assert not final.report.is_partial and len(final.report.case_results) == 9
    assert engine.calls == 9 - len(first.report.case_results)  # finished cases not re-asked
    assert final.knowledge_bases[0] is first.knowledge_bases[0]  # not rebuilt in-process
    clean = await _ours(heta_jsonl(), offline_recipe(tmp_path / "clean"))
    assert comparable(final.report) == comparable(clean.report)
    assert store.load("kb", "r1").case_results == final.report.case_results


async def test_query_and_evaluator_errors_are_isolated(tmp_path) -> None:
    class Broken:
        name = "broken"

        async def evaluate(self, *, case, response):
            if case.case_id == "2":
                raise ValueError("evaluator bug")
            return EvaluationScore(name=self.name, value=1.0)

    recipe = _with_engine(offline_recipe(tmp_path / "objects"), _Engine(fail_on="heat conduction"))
    result = await _ours(heta_jsonl(), recipe, evaluators=(heta.EvidenceRecallAtK(k=5), Broken()))
    by_id = {r.case_id: r for r in result.report.case_results}
    assert by_id["3"].error is not None and "heat conduction" in by_id["3"].error.message
    assert by_id["3"].error.error_type == "RuntimeError"
    assert by_id["2"].score("broken").status == "error"
    assert by_id["2"].score("evidence_recall@5").status == "scored"
    assert all(r.error is None for cid, r in by_id.items() if cid != "3")


async def test_progress_bar_counts_every_case(tmp_path, capsys) -> None:
    await _ours(heta_jsonl(), offline_recipe(tmp_path / "objects"), progress=True)
    err = capsys.readouterr().err
    assert "9/9" in err


async def test_fresh_process_rebuilds_over_an_existing_object_store(tmp_path) -> None:
    """A new recipe object (new in-memory index) over the same ObjectStore: old KB replaced."""
    objects = tmp_path / "objects"
    first = await _ours(heta_jsonl(), offline_recipe(objects))
    again = await _ours(heta_jsonl(), offline_recipe(objects), rebuild=False)
    assert comparable(again.report) == comparable(first.report)
    assert again.report.case_results[0].response.results  # the new index is not empty


async def test_corpus_change_removes_stale_raw_documents_and_rebuilds(tmp_path) -> None:
    adapter = adapt_recipe(offline_recipe(tmp_path / "objects"))
    docs = [
        BenchmarkDocument(document_id=f"d{i}", name=f"d{i}.txt", text=t)
        for i, t in enumerate(["wing lift slipstream", "heat transfer slabs", "shock waves"])
    ]
    kb = await adapter.build_knowledge_base(docs, knowledge_base_name="small", workspace=tmp_path)
    assert (
        await adapter.build_knowledge_base(docs, knowledge_base_name="small", workspace=tmp_path)
        is kb
    )
    smaller = await adapter.build_knowledge_base(
        docs[:2], knowledge_base_name="small", workspace=tmp_path
    )
    assert smaller is not kb
    raw = sorted(p.name for p in (tmp_path / "objects" / "raw").rglob("*.txt"))
    assert raw == ["d0.txt", "d1.txt"]
    response = await smaller.query("shock waves", mode=FTS, top_k=5)
    assert "d2" not in ranked_document_ids(response.results)
    with pytest.raises(LookupError, match="full_text_search"):
        await smaller.query("x", mode="vector_search")


def test_adapt_recipe_rejects_non_recipes_and_names_the_recipe(tmp_path) -> None:
    with pytest.raises(TypeError, match="KnowledgeRecipe"):
        adapt_recipe(heta.EvidenceRecallAtK())
    recipe = offline_recipe(tmp_path)
    assert adapt_recipe(recipe).name == "heta-bm25-offline"
    unnamed = dataclasses.replace(recipe, metadata={})
    assert adapt_recipe(unnamed).name == "heta:parse_documents+split_documents+index_full_text"
    assert isinstance(adapt_recipe(adapt_recipe(recipe)), HetaRecipeAdapter)


async def test_heta_recipe_and_embedded_kb_compare_on_the_same_benchmark(tmp_path) -> None:
    recipe_module = pytest.importorskip("heta_notebook.kb._recipe")
    compare_module = pytest.importorskip("heta_notebook.analysis._compare")
    evaluators = _heta_evaluators()
    heta_run = await _ours(heta_beir(), offline_recipe(tmp_path / "objects"), evaluators=evaluators)
    embedded = recipe_module.Recipe(name="embedded-bm25", dense=None, hybrid=None)
    ours_run = await _ours(heta_beir(), embedded, evaluators=evaluators)
    comparison = compare_module.compare(
        {"heta": heta_run.report, "embedded": ours_run.report}, baseline="heta"
    )
    deltas = comparison.deltas("beir_ndcg@10")
    assert len(deltas) == 8
    json.dumps(comparison.summary().to_dict(), default=str)  # a plain table


async def test_our_beir_benchmark_with_a_heta_recipe_scores_like_pytrec_eval(tmp_path) -> None:
    """Our benchmark, heta's KB: chunks map back to BEIR ids through the raw key we wrote."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from heta_notebook.benchmarks._beir import BeirBenchmark
    from heta_notebook.benchmarks._protocol import load_benchmark

    benchmark = BeirBenchmark.from_folder(BEIR_MINI)
    result = await _ours(benchmark, offline_recipe(tmp_path / "objects"))
    raw = sorted(
        p.relative_to(tmp_path / "objects").as_posix()
        for p in (tmp_path / "objects" / "raw").rglob("*.*")
    )
    assert len(raw) == 92 and all(k.startswith("raw/benchmarks/") for k in raw)  # no manifest
    assert {k.split("/")[4] for k in raw} == {
        d.document_id for d in (await load_benchmark(benchmark)).documents
    }
    qrels = {
        c.case_id: {e.reference_id: e.relevance for e in c.expected.evidence}
        for c in benchmark_cases(result)
    }
    run = {}
    for r in result.report.case_results:
        ranked = ranked_document_ids(r.response.results)
        run[r.case_id] = {doc: float(len(ranked) - i) for i, doc in enumerate(ranked)}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    for r in result.report.case_results:
        assert r.score("beir_ndcg@10").value == pytest.approx(oracle[r.case_id]["ndcg_cut_10"])


def benchmark_cases(result) -> list:
    """The cases of a run, rebuilt from the expectations stored with each case result."""
    from heta_notebook.schema import BenchmarkCase, BenchmarkExpected

    return [
        BenchmarkCase(
            case_id=r.case_id,
            query=r.query,
            expected=BenchmarkExpected.from_dict(r.metadata["expected"]),
        )
        for r in result.report.case_results
    ]


async def test_a_knowledge_base_built_with_heta_api_is_queried_as_is(tmp_path) -> None:
    from heta_framework.kb import KnowledgeBase

    adapter = adapt_benchmark(heta_jsonl())
    prepared = await adapter.prepare(tmp_path)
    recipe = offline_recipe(tmp_path / "objects")
    store = recipe.stores.objects
    async for document in adapter.documents(prepared):  # what heta's runner writes
        await store.put(document.metadata["heta_raw_key"], document.read_text().encode())
    kb = await KnowledgeBase.create(recipe=recipe, name="prebuilt")
    result = await _ours(heta_jsonl(), kb)
    assert result.report.knowledge_base_manifest["name"] == "prebuilt"
    assert len(result.report.case_results) == 9
    assert all(r.error is None and r.response.results for r in result.report.case_results)


async def test_a_foreign_kb_of_the_same_name_is_replaced_only_with_rebuild(tmp_path) -> None:
    from heta_framework.kb import KnowledgeBase

    recipe = offline_recipe(tmp_path / "objects")
    await recipe.stores.objects.put("raw/notes/n.txt", b"someone else's knowledge base")
    await KnowledgeBase.create(recipe=recipe, name="kb")  # built with heta's API, not ours
    with pytest.raises(FileExistsError, match="rebuild=True"):
        await _ours(heta_jsonl(), recipe)
    result = await _ours(heta_jsonl(), recipe, rebuild=True)
    assert result.report.knowledge_base_manifest["metadata"]["built_by"] == "heta_notebook"
    again = await _ours(heta_jsonl(), offline_recipe(tmp_path / "objects"))  # ours: replaced
    assert len(again.report.case_results) == 9
