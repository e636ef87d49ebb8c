"""Results returned as bare ``(id, score)`` pairs show the benchmark document's text in the
explorers, marked as the benchmark's, never as the system's; a system's own text stays."""

from __future__ import annotations

import pytest

from heta_notebook import BeirBenchmark, BeirRetrievalMetric, ReportStore, run_benchmark
from heta_notebook.benchmarks._texts import BENCHMARK_TEXT
from heta_notebook.display._explorer_data import encode_details
from tests._kb_helpers import cranfield
from tests._systems_helpers import rankings


def _run(system):
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipe=system,
        evaluators=[BeirRetrievalMetric("ndcg", 10)],
        progress=False,
        limit=4,
    ).report


@pytest.fixture(scope="module")
def bare():
    return _run(lambda text: rankings()[text])


def _shown(report, row: int = 0) -> list[str]:
    payload = encode_details(report, [row])
    strings = payload["strings"]
    return [strings[r[3]] for r in payload["cases"]["results"][0]]


def test_bare_ids_show_the_benchmark_text_marked_as_such(bare) -> None:
    texts = {d.document_id: d.read_text() for d in cranfield().documents}
    result = bare.case_results[0].response.results[0]
    assert result.text == ""  # the report keeps what the system returned
    shown = _shown(bare)[0]
    assert shown.startswith(BENCHMARK_TEXT)
    doc = result.source["benchmark_document_id"]
    assert texts[doc][:200] in shown


def test_a_saved_report_read_from_its_columns_shows_them_too(bare, tmp_path) -> None:
    store = ReportStore(tmp_path)
    store.save(bare)
    loaded = store.load(bare.knowledge_base_name, bare.report_id)
    assert getattr(loaded.case_results, "columnar", None) is not None  # the columnar path
    assert _shown(loaded) == _shown(bare)


def test_a_systems_own_text_is_never_replaced() -> None:
    report = _run(
        lambda text: [{"id": d, "score": s, "text": f"own {d}"} for d, s in rankings()[text]]
    )
    assert all(t.startswith("own ") for t in _shown(report))
