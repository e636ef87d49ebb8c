"""A checkpoint writes a scored batch's score rows from the lists its scorer built them from
(``columnar.score_table``); those rows must be exactly what reading every score record
gives: values, passed, status, reason and metadata, in the records' order."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
from pydantic_core import to_json

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
from heta_notebook.evaluators._protocol import EvaluatorSettings
from heta_notebook.evaluators._retrieval import (
    NO_QRELS,
    NO_RELEVANT,
    BeirRetrievalMetric,
    beir_default_metrics,
    evaluate_batch_columns,
)
from heta_notebook.reports._checkpoint import CHECKPOINT, records_of, scan_checkpoint
from heta_notebook.reports._run import RunHandle
from heta_notebook.reports._tables import _score_arrays, case_columns, score_table
from heta_notebook.schema import BenchmarkCase, BenchmarkExpected, EvaluationScore
from heta_notebook.schema._construct import ConstructedScores, constructed_scores
from tests._evaluators_helpers import doc_response, qrels_case
from tests._runner_helpers import MODES, ListBenchmark, TopHit, ToyKB, make_cases


def _read_off_records(columns) -> pa.Table:
    """The oracle: every score record read one by one, case by case, in evaluator order."""
    rows = [column[i] for i in range(len(columns[0])) for column in columns]
    arrays = _score_arrays(rows)
    return pa.Table.from_arrays(arrays, names=[f.name for f in score_table(columns).schema])


def _same(a: pa.Table, b: pa.Table) -> bool:
    """Equal tables, a NaN equal to a NaN in the same place."""
    return a.schema == b.schema and a.to_pandas().equals(b.to_pandas())


def test_constructed_columns_give_the_rows_the_records_give():
    shared = [{"relevant_documents": i, "matched_documents": [f"d{i}"]} for i in range(4)]
    flagged = [
        {"skipped": True, "skip_reason": "no qrels"},
        {"error": {"message": "boom"}},
        {"reason": "the judge said so", "x": math.inf},
        {},
    ]
    columns = [
        constructed_scores("a", [0.5, 1.0, 0.0, 0.25], [None] * 4, shared),
        constructed_scores("b", [0.1, 0.2, 0.3, 0.4], [True, False, None, True], shared),
        constructed_scores("c", [1.0, 2.0, 3.0, float("nan")], [None] * 4, flagged),
    ]
    assert _same(score_table(columns), _read_off_records(columns))
    assert math.isnan(score_table(columns).column("value")[11].as_py())  # NaN, not null
    # A column read off its records (a per-case evaluator, or a text value) mixes in.
    plain = [EvaluationScore(name="t", value=v, passed=None) for v in ("x", 1.0, True, 2)]
    mixed = [*columns, plain]
    assert _same(score_table(mixed), _read_off_records(mixed))
    table = score_table(mixed)  # case by case: a, b, c, t
    assert table.column("status").to_pylist()[2::4] == ["skipped", "error", "scored", "scored"]
    assert table.column("reason").to_pylist()[2::4] == [
        "no qrels",
        "boom",
        "the judge said so",
        None,
    ]
    assert table.column("name").to_pylist()[:4] == ["a", "b", "c", "t"]


def test_integer_values_are_read_off_the_records():
    (column,) = [constructed_scores("i", [1, 2], [None, None], [{}, {}])]
    assert score_table([column]).equals(_read_off_records([column]))
    assert score_table([column]).column("kind").to_pylist() == [0, 0]


@pytest.fixture
def keep_checkpoints(monkeypatch):
    """Keep a finished run's checkpoint (deleted once its complete report is saved)."""
    monkeypatch.setattr(RunHandle, "discard", lambda self: None)


@pytest.mark.usefixtures("keep_checkpoints")
@pytest.mark.parametrize(("checkpoint_every", "per_case"), [(1, True), (25, False), (25, True)])
async def test_a_checkpointed_beir_run_writes_the_score_rows_its_records_hold(
    tmp_path, checkpoint_every, per_case
):
    cases = [
        *make_cases(40),
        BenchmarkCase(case_id="none", query="no qrels", expected=BenchmarkExpected()),
    ]
    metrics = (
        *beir_default_metrics((1, 5)),
        BeirRetrievalMetric(
            "ndcg", 3, convention="heta", settings=EvaluatorSettings(threshold=0.5)
        ),
    )
    store = ReportStore(tmp_path)
    result = await BenchmarkRunner().run(
        benchmark=ListBenchmark(
            cases=cases, evaluators=((TopHit(),) if per_case else ()) + metrics
        ),
        recipe=ToyKB(),
        knowledge_base_name="kb",
        query_modes=MODES,
        config=BenchmarkRunConfig(report_id="r", checkpoint_every=checkpoint_every),
        store=store,
        progress=False,
    )
    data = (store.report_dir("kb", "r") / CHECKPOINT).read_bytes()
    scan = scan_checkpoint(data, CHECKPOINT)
    tables, texts = scan.tables, scan.texts
    by_key = {(r.case_id, r.query_mode): r for r in result.report.case_results}
    written = records_of(tables, texts)
    assert len(written) == len(by_key) == 82
    assert {(r.case_id, r.query_mode): r for r in written} == by_key
    records = [by_key[(r.case_id, r.query_mode)] for r in written]
    oracle = case_columns(records, 0, {})["scores"]
    assert tables["scores"].equals(oracle)
    statuses = set(tables["scores"].column("status").to_pylist())
    assert statuses == {"scored", "skipped"}
    assert tables["scores"].column("passed").drop_null().to_pylist()  # the threshold's


@pytest.mark.parametrize("convention", ["trec_eval", "heta"])
def test_beir_metadata_json_is_what_to_json_writes_of_each_dict(convention):
    odd = ['d"quoted"', "d\\back", "d\u00e9t\u00e9 \U0001f600", "d\ttab\n", "d/\u2028"]
    cases = [
        qrels_case({odd[0]: 2, odd[2]: 1, "x": 0}, case_id="q1"),
        qrels_case({odd[1]: 1, odd[3]: 3, odd[4]: 1}, case_id="q2"),
        qrels_case({}, case_id="no-qrels"),
        qrels_case({"x": 0}, case_id="none-relevant"),
    ]
    responses = [
        doc_response([odd[2], "x", odd[0], "y"]),
        doc_response([odd[3], odd[4], "z", odd[1]]),
        doc_response(["x"]),
        doc_response(["x"]),
    ]
    metrics = [
        BeirRetrievalMetric(m, k, convention=convention)
        for m in ("ndcg", "recall")
        for k in (1, 3, 10)
    ]
    columns = evaluate_batch_columns(metrics, cases, responses)
    for column in columns:
        assert isinstance(column, ConstructedScores) and column.metadata_json is not None
        assert list(column.metadata_json) == [to_json(s.metadata).decode() for s in column]
    assert _same(score_table(columns), _read_off_records(columns))
    assert [s.metadata.get("skip_reason") for s in columns[0]] == [
        None,
        None,
        NO_QRELS,
        NO_RELEVANT,
    ]
