"""A batch-scored case holds its row of the batch's score columns (``LazyScores``): a run
builds no score record, and its report (records, JSON, statistics, stored tables) equals the
report of the same run whose cases hold their records (the eager path, forced here)."""

from __future__ import annotations

import gc

import pyarrow.parquet as pq
import pytest

from heta_notebook import (
    BenchmarkRunConfig,
    QueryResponse,
    QueryResult,
    ReportStore,
    as_system,
    run_benchmark,
)
from heta_notebook._util import redaction
from heta_notebook.evaluators import EvaluatorSettings
from heta_notebook.evaluators._retrieval import (
    BeirRetrievalMetric,
    EvidenceRecallAtK,
    beir_default_metrics,
)
from heta_notebook.reports._tables import record_tables
from heta_notebook.runner import _pool
from heta_notebook.schema import BenchmarkCase
from heta_notebook.schema._construct import LazyScores
from heta_notebook.schema._status import ERROR, status_code
from tests._kb_helpers import cranfield
from tests._report_helpers import table_paths
from tests._runner_helpers import ListBenchmark
from tests._systems_helpers import rankings

THRESHOLD = EvaluatorSettings(threshold=0.3)
EVALUATORS = (
    *beir_default_metrics(),  # trec_eval's ties: rescored under the others where tied
    *beir_default_metrics(k_values=(2, 20), convention="heta"),  # a second batch group
    BeirRetrievalMetric("ndcg", 7, ties="expected", settings=THRESHOLD),  # verdicts
    EvidenceRecallAtK(k=5),  # a batch-capable evaluator whose column holds records
)


class Tied:
    """Cranfield's BM25 ranking as new records on every call, scores rounded (mode ``a``:
    to whole numbers, many ties; ``b``: to one decimal)."""

    query_modes = ("a", "b")

    def query(self, text: str, *, mode: str, top_k: int = 10) -> QueryResponse:
        digits = 0 if mode == "a" else 1
        return QueryResponse(
            mode=mode,
            results=tuple(
                QueryResult(
                    id=f"{doc}#0", score=round(score, digits), source={"benchmark_document_id": doc}
                )
                for doc, score in rankings()[text][:top_k]
            ),
        )


def _cases() -> list[BenchmarkCase]:
    """Cranfield's first 60 cases; every 7th judges nothing relevant, every 11th has no
    qrels (both skipped by the BEIR metrics)."""
    cases = cranfield().cases[:60]
    for i in range(0, 60, 7):
        evidence = tuple(
            e.model_copy(update={"metadata": {"relevance": 0}}) for e in cases[i].expected.evidence
        )
        cases[i] = cases[i].model_copy(
            update={"expected": cases[i].expected.model_copy(update={"evidence": evidence})}
        )
    for i in range(3, 60, 11):
        cases[i] = cases[i].model_copy(
            update={"expected": cases[i].expected.model_copy(update={"evidence": ()})}
        )
    return cases


def _run(store: ReportStore | None, name: str):
    config = BenchmarkRunConfig(
        report_id=name, top_k=10, checkpoint_every=7, persist_report=store is not None
    )
    return run_benchmark(
        benchmark=ListBenchmark(_cases(), cranfield().documents),
        recipe=as_system(Tied(), name="tied"),
        evaluators=EVALUATORS,
        progress=False,
        config=config,
        store=store,
    ).report


@pytest.fixture(scope="module", params=[False, True], ids=["in-memory", "stored"])
def runs(request, tmp_path_factory) -> tuple:
    store = ReportStore(tmp_path_factory.mktemp("store")) if request.param else None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(redaction, "_declared", ())
        lazy = _run(store, "lazy")
        built = [r.scores.built for r in lazy.case_results if isinstance(r.scores, LazyScores)]
        patch.setattr(_pool, "LazyScores", lambda columns, row: LazyScores(columns, row).records())
        eager = _run(store, "eager")
    return store, lazy, eager, built


def _without_times(metadata: dict) -> dict:
    """A report's metadata but its timings and its report id (the two runs differ there)."""
    kept = {k: v for k, v in metadata.items() if "latency" not in k and not k.endswith("_s")}
    kept["config"] = {k: v for k, v in kept["config"].items() if k != "report_id"}
    return kept


@pytest.mark.filterwarnings("ignore::heta_notebook.DepthWarning")  # top 10 on purpose
@pytest.mark.filterwarnings("ignore:only .* map to a benchmark document:UserWarning")
def test_a_run_builds_no_score_record_and_reports_the_records_run(runs) -> None:
    _, lazy, eager, built = runs
    assert len(built) == len(lazy.case_results) and not any(built)  # nothing read them
    assert not any(isinstance(r.scores, LazyScores) for r in eager.case_results)
    assert lazy.score_summary == eager.score_summary
    assert _without_times(lazy.metadata) == _without_times(eager.metadata)
    tied = skipped = passed = 0
    for mine, theirs in zip(lazy.case_results, eager.case_results, strict=True):
        assert mine.scores == theirs.scores and len(mine.scores) == len(EVALUATORS)
        same = {"latency_ms": 1.0}  # timings differ between two runs
        assert (
            mine.model_copy(update=same).model_dump_json()
            == theirs.model_copy(update=same).model_dump_json()
        )
        assert mine.model_copy(update=same).to_dict() == theirs.model_copy(update=same).to_dict()
        for score in theirs.scores:
            tied += "by_tie_rule" in score.metadata
            skipped += score.status == "skipped"
            passed += score.passed is True
    assert tied and skipped and passed  # the run covers ties, skips and verdicts


def test_a_progress_bar_reads_the_records_values_without_building_them(runs) -> None:
    _, lazy, _, _ = runs
    rows = [LazyScores(r.scores.columns, r.scores.row) for r in lazy.case_results]
    seen = [list(row.summaries()) for row in rows]
    assert not any(row.built for row in rows)
    for row, summaries in zip(rows, seen, strict=True):
        assert summaries == [
            (s.name, s.numeric, status_code(s.metadata) == ERROR) for s in row.records()
        ]
        assert list(row.summaries()) == summaries  # built: read off the records, the same


def _tables(store: ReportStore, report) -> dict[str, object]:
    paths = table_paths(store.report_dir(report.knowledge_base_name, report.report_id))
    return {name: pq.read_table(paths[name]) for name in ("cases", "results", "scores")}


@pytest.mark.filterwarnings("ignore::heta_notebook.DepthWarning")
@pytest.mark.filterwarnings("ignore:only .* map to a benchmark document:UserWarning")
def test_a_stored_run_writes_the_tables_of_the_records_run(runs) -> None:
    store, lazy, eager, _ = runs
    if store is None:
        pytest.skip("in memory: nothing stored")
    mine, theirs = _tables(store, lazy), _tables(store, eager)
    for table in ("cases", "results", "scores"):
        drop = [c for c in mine[table].column_names if c in ("latency_ms", "text")]
        assert mine[table].drop_columns(drop).equals(theirs[table].drop_columns(drop)), table


def _unread(report) -> list:
    """The report's case results with fresh, unbuilt rows of the same score columns."""
    return [
        r.model_copy(update={"scores": LazyScores(r.scores.columns, r.scores.row)})
        for r in report.case_results
    ]


@pytest.mark.filterwarnings("ignore::heta_notebook.DepthWarning")
@pytest.mark.filterwarnings("ignore:only .* map to a benchmark document:UserWarning")
def test_the_tables_of_rows_of_score_columns_are_those_of_the_records(runs) -> None:
    """What a report's frames and its saving read: the batches' score tables, no record."""
    _, lazy, eager, _ = runs
    unread = _unread(lazy)
    mine, theirs = record_tables(unread), record_tables(list(eager.case_results))
    assert not any(r.scores.built for r in unread)
    for name in ("cases", "results", "scores"):
        drop = [c for c in mine[name].column_names if c == "latency_ms"]
        assert mine[name].drop_columns(drop).equals(theirs[name].drop_columns(drop)), name
    mine, theirs = lazy.frames().views(), eager.frames().views()
    mine.pop("latency"), theirs.pop("latency")  # timings differ; all else is equal
    assert mine == theirs


def test_a_case_result_built_without_model_construct_is_model_constructs() -> None:
    from heta_notebook.schema import EvaluationCaseResult
    from heta_notebook.schema._construct import constructed_record

    fields = {
        "case_id": "q1",
        "query": "what?",
        "query_mode": "a",
        "scores": (),
        "response": QueryResponse(mode="a"),
        "latency_ms": 1.5,
        "error": None,
        "metadata": {"expected": {}},
    }
    fast = constructed_record(EvaluationCaseResult, dict(fields))
    slow = EvaluationCaseResult.model_construct(**fields)
    assert type(fast) is EvaluationCaseResult and fast == slow and repr(fast) == repr(slow)
    assert fast.__dict__ == slow.__dict__ and list(fast.__dict__) == list(slow.__dict__)
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.__pydantic_extra__ == slow.__pydantic_extra__ == {}
    assert fast.__pydantic_private__ is slow.__pydantic_private__ is None
    assert fast.model_dump_json() == slow.model_dump_json()
    copied = fast.model_copy(update={"latency_ms": 2.0, "note": "x"})
    assert (
        copied.latency_ms == 2.0 and copied.model_extra == {"note": "x"} and fast.latency_ms == 1.5
    )
    partial = constructed_record(EvaluationCaseResult, {"case_id": "q1", "query": "what?"})
    assert partial == EvaluationCaseResult.model_construct(case_id="q1", query="what?")


@pytest.mark.filterwarnings("ignore:10 scores cut deeper")  # top_k=10, as the runs above
@pytest.mark.parametrize("enabled", [True, False])
def test_a_round_is_read_with_the_collector_paused_and_left_as_found(enabled, monkeypatch):
    """Replies are read and scored with the cyclic collector paused (their short-lived
    objects are not walked); the run leaves the collector as it found it."""
    seen: list[bool] = []
    read = _pool.read_reply

    def reading(reply):
        seen.append(gc.isenabled())
        return read(reply)

    monkeypatch.setattr(_pool, "read_reply", reading)
    monkeypatch.setattr(redaction, "_declared", ())
    if not enabled:
        gc.disable()
    try:
        report = _run(None, f"gc-{enabled}")
        assert gc.isenabled() is enabled
    finally:
        gc.enable()
    assert len(report.case_results) == 120 and seen and not any(seen)  # 60 cases × 2 modes
