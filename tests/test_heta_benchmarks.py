"""heta-framework benchmarks (JsonlBenchmark, BeirBenchmark on a local folder) in our runner."""

from __future__ import annotations

import base64
import csv
import json

import pytest

from heta_notebook import BenchmarkRunner
from heta_notebook.benchmarks._protocol import BenchmarkRunUnit, BenchmarkWorkspace, load_benchmark
from heta_notebook.integrations.heta import (
    HetaBenchmarkAdapter,
    HetaEvaluatorAdapter,
    adapt_benchmark,
)
from heta_notebook.integrations.heta._benchmarks import RAW_KEY_METADATA
from heta_notebook.schema import BenchmarkCase, BenchmarkDocument, BenchmarkManifest
from tests._heta_helpers import BEIR_MINI, heta, heta_beir, heta_jsonl, heta_workspace


async def _read(adapter: HetaBenchmarkAdapter, workspace):
    prepared = await adapter.prepare(workspace)
    documents = [d async for d in adapter.documents(prepared)]
    cases = [c async for c in adapter.cases(prepared)]
    units = [u async for u in adapter.run_units(prepared)]
    return documents, cases, units


def _qrels() -> dict[str, dict[str, int]]:
    with (BEIR_MINI / "qrels" / "test.tsv").open() as handle:
        rows = list(csv.reader(handle, delimiter="\t"))[1:]
    qrels: dict[str, dict[str, int]] = {}
    for qid, did, grade in rows:
        qrels.setdefault(qid, {})[did] = int(grade)
    return qrels


async def test_beir_benchmark_from_a_local_folder_yields_our_records(tmp_path) -> None:
    adapter = adapt_benchmark(heta_beir())
    assert adapter.manifest == BenchmarkManifest.from_dict(heta_beir().manifest.to_dict())
    assert adapter.manifest.key == "beir_cranfield_mini:official:test"
    documents, cases, units = await _read(adapter, tmp_path)  # a plain folder as workspace
    assert len(documents) == 92 and all(isinstance(d, BenchmarkDocument) for d in documents)
    first = documents[0]
    assert first.data is not None and first.read_text().strip()
    assert first.metadata["beir_document_id"] == first.document_id
    assert first.metadata[RAW_KEY_METADATA] == (
        f"raw/benchmarks/beir_cranfield_mini/test/{first.document_id}/{first.name}"
    )
    qrels = _qrels()
    assert [c.case_id for c in cases] == list(qrels)
    for case in cases:
        assert isinstance(case, BenchmarkCase)
        grades = {e.reference_id: e.relevance for e in case.expected.evidence}
        assert grades == qrels[case.case_id]  # graded qrels survive as metadata.relevance
        prefix = case.expected.evidence[0].locator["source_key_prefix"]
        assert prefix.startswith("raw/benchmarks/beir_cranfield_mini/test/")
    assert units == [
        BenchmarkRunUnit(unit_id="corpus", metadata={"dataset": "cranfield_mini", "split": "test"})
    ]
    evaluators = adapter.evaluators()
    assert len(evaluators) == 25 and all(isinstance(e, HetaEvaluatorAdapter) for e in evaluators)
    assert evaluators[0].name == "beir_ndcg@1"


async def test_jsonl_benchmark_with_text_base64_and_path_documents(tmp_path) -> None:
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "c.md").write_text("# third\nfrom a file", encoding="utf-8")
    rows = [
        {"document_id": "a", "name": "a.txt", "media_type": "text/plain", "text": "first"},
        {
            "document_id": "b",
            "name": "b.bin",
            "media_type": "application/octet-stream",
            "data_base64": base64.b64encode(b"\x00\x01second").decode(),
        },
        {"document_id": "c", "name": "c.md", "media_type": "text/markdown", "path": "files/c.md"},
    ]
    cases = [
        {
            "case_id": 7,
            "query": "q",
            "expected": {"answers": ["x"], "value": {"n": 1}},
            "labels": {"l": 1},
            "metadata": {"m": 2},
        }
    ]
    (tmp_path / "documents.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (tmp_path / "cases.jsonl").write_text("\n".join(json.dumps(c) for c in cases))
    bench = heta.JsonlBenchmark(
        manifest=heta.BenchmarkManifest(name="mixed", version="2", split="dev", task_type="qa"),
        documents_jsonl=tmp_path / "documents.jsonl",
        cases_jsonl=tmp_path / "cases.jsonl",
    )
    workspace = BenchmarkWorkspace(root_dir=tmp_path / "ws", cache_dir=tmp_path / "ws" / "c")
    documents, cases_out, _ = await _read(adapt_benchmark(bench), workspace)
    by_id = {d.document_id: d for d in documents}
    assert by_id["a"].data == b"first" and by_id["a"].read_text() == "first"
    assert by_id["b"].data == b"\x00\x01second"
    assert by_id["c"].path == tmp_path / "files" / "c.md" and "third" in by_id["c"].read_text()
    case = cases_out[0]
    assert (case.case_id, case.expected.answers, case.expected.value) == ("7", ("x",), {"n": 1})
    assert (case.labels, case.metadata) == ({"l": 1}, {"m": 2})


async def test_prepare_accepts_our_workspace_heta_workspace_and_a_folder(tmp_path) -> None:
    adapter = adapt_benchmark(heta_jsonl())
    for workspace in (
        tmp_path / "plain",
        str(tmp_path / "text"),
        BenchmarkWorkspace(root_dir=tmp_path / "ours", cache_dir=tmp_path / "ours" / "cache"),
        heta_workspace(tmp_path / "theirs"),
    ):
        prepared = await adapter.prepare(workspace)
        assert isinstance(prepared, heta.PreparedBenchmark)


async def test_our_loader_adapts_heta_benchmarks_by_itself(tmp_path) -> None:
    manifest, documents, cases = await load_benchmark(heta_jsonl())
    assert manifest.name == "cranfield_mini_jsonl"
    assert len(documents) == 92 and len(cases) == 9


def test_adapt_benchmark_rejects_other_objects() -> None:
    with pytest.raises(TypeError, match="heta-framework benchmark"):
        adapt_benchmark(object())
    adapter = adapt_benchmark(heta_jsonl())
    assert adapt_benchmark(adapter) is adapter


async def test_heta_benchmarks_run_in_our_runner_with_their_default_evaluators(tmp_path) -> None:
    recipe_module = pytest.importorskip("heta_notebook.kb._recipe")
    recipe = recipe_module.Recipe(name="bm25", dense=None, hybrid=None)
    runner = BenchmarkRunner()
    beir = await runner.run(
        benchmark=heta_beir(),
        recipe=recipe,
        query_modes=("full_text_search",),
        progress=False,
        workspace=tmp_path / "ws",
    )
    report = beir.report
    assert report.benchmark.key == "beir_cranfield_mini:official:test"
    assert len(report.case_results) == 8 and all(r.error is None for r in report.case_results)
    assert len(report.score_names) == 25  # heta's beir_default_metrics(), adapted
    assert report.score_summary["full_text_search.beir_ndcg@10"] > 0.3  # BM25 finds relevant docs
    jsonl = await runner.run(
        benchmark=heta_jsonl(),
        recipe=recipe,
        query_modes="full_text_search",
        progress=False,
        workspace=tmp_path / "ws2",
    )
    names = set(jsonl.report.score_names)
    assert names == {"evidence_recall@5", "answer_contains"}
    recall = [r.score("evidence_recall@5") for r in jsonl.report.case_results]
    assert sum(s.status == "skipped" for s in recall) == 1  # the case without evidence
    assert any(s.numeric for s in recall)  # our embedded KB's results carry document ids
