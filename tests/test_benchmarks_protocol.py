"""The benchmark protocol records, load_benchmark and its sync wrapper (also inside a running loop)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from heta_notebook.benchmarks._protocol import (
    BenchmarkProtocol,
    BenchmarkResource,
    BenchmarkRunUnit,
    BenchmarkWorkspace,
    load_benchmark,
    load_benchmark_sync,
)
from heta_notebook.benchmarks._records import RecordsBenchmark
from tests._kb_helpers import write_beir

ROWS = [{"id": "1", "query": "alpha", "reference_ids": ["d1"]}]
DOCS = [{"document_id": "d1", "text": "alpha beta"}]


def test_records_match_heta_fields():
    heta_types = pytest.importorskip("heta_framework.evaluation.types")
    resource = BenchmarkResource(name="r", uri="file:///x", kind="archive", size_bytes=3)
    heta_resource = heta_types.BenchmarkResource(
        name="r", uri="file:///x", kind="archive", size_bytes=3
    )
    assert resource.to_dict() == heta_resource.to_dict()
    unit = BenchmarkRunUnit(unit_id="u", document_ids=[1, "2"])
    assert unit.document_ids == ("1", "2") and not unit.is_corpus_level
    with pytest.raises(ValidationError, match="kind"):
        BenchmarkResource(name="r", uri="u", kind="zip")
    with pytest.raises(ValidationError, match="unit_id"):
        BenchmarkRunUnit(unit_id=" ")


async def test_load_benchmark_collects_lists():
    benchmark = RecordsBenchmark(ROWS, documents=DOCS, manifest="tiny", evaluators=())
    assert isinstance(benchmark, BenchmarkProtocol)
    manifest, documents, cases = await load_benchmark(benchmark)
    assert manifest.name == "tiny" and len(documents) == 1 and cases[0].case_id == "1"


async def test_sync_wrapper_works_inside_a_running_loop():
    benchmark = RecordsBenchmark(ROWS, documents=DOCS)
    loaded = load_benchmark_sync(benchmark)  # we are inside pytest-asyncio's loop here
    assert loaded.cases[0].query == "alpha"
    assert asyncio.get_running_loop().is_running()


def test_load_benchmark_adapts_heta_framework_benchmarks(tmp_path):
    heta_beir = pytest.importorskip("heta_framework.evaluation.benchmarks.beir")
    folder = write_beir(
        tmp_path / "mini",
        [{"_id": "a", "text": "lift"}],
        [{"_id": "1", "text": "lift?"}],
        ["1\ta\t1"],
    )
    benchmark = heta_beir.BeirBenchmark(dataset="mini", data_root=folder, download=False)
    workspace = BenchmarkWorkspace(root_dir=tmp_path, cache_dir=tmp_path / "cache")
    manifest, documents, cases = load_benchmark_sync(benchmark, workspace)
    assert manifest.name == "beir_mini" and documents[0].document_id == "a"
    assert cases[0].expected.evidence[0].reference_id == "a"
