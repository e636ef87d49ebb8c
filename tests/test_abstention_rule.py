"""One rule for "this case expects an abstention" (issue 33's conceptual twin, four copies
before): ``schema._abstain.abstention_expected``. The SQuAD scorer, the frames (records and
stored columns), the explorer payload and the case detail all give what the four copies gave:
``expected.metadata["abstain"]`` read as a truth value, "does not say" when it is absent."""

from __future__ import annotations

import pytest

from heta_notebook import ReportStore
from heta_notebook.display._case_detail import case_detail_html
from heta_notebook.display._explorer_data import encode_report
from heta_notebook.evaluators import AbstentionAccuracy, expects_abstention
from heta_notebook.schema import (
    BenchmarkCase,
    BenchmarkExpected,
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationReport,
    QueryResponse,
)
from heta_notebook.schema._abstain import ABSTAIN_EXPECTED, abstention_expected

# a stored ``expected`` (None: the case recorded none) -> what the case says
TABLE = [
    ({"metadata": {"abstain": True}}, True),
    ({"metadata": {"abstain": False}}, False),
    ({"metadata": {"abstain": 1}}, True),
    ({"metadata": {"abstain": "yes"}}, True),
    ({"metadata": {"abstain": 0}}, False),
    ({"metadata": {"abstain": ""}}, False),
    ({"metadata": {"abstain": None}}, None),
    ({"metadata": {"other": True}}, None),
    ({"answers": ["Rollo"]}, None),
    (None, None),
]


def _report() -> EvaluationReport:
    results = [
        EvaluationCaseResult(
            case_id=f"q{i}",
            query="Who?",
            query_mode="full_text_search",
            response=QueryResponse(mode="full_text_search", answer=None),
            metadata={} if expected is None else {"expected": expected},
        )
        for i, (expected, _) in enumerate(TABLE)
    ]
    return EvaluationReport(
        report_id="r",
        benchmark=BenchmarkManifest(name="squad"),
        knowledge_base_name="kb",
        case_results=tuple(results),
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:01Z",
    )


@pytest.mark.parametrize(("stored", "says"), TABLE)
def test_the_rule_reads_a_record_its_dict_or_nothing_alike(stored, says):
    assert ABSTAIN_EXPECTED == "abstain"  # the key SquadBenchmark writes and reports keep
    assert abstention_expected(stored) is says
    record = None if stored is None else BenchmarkExpected.from_dict(stored)
    assert abstention_expected(record) is says
    if record is not None:
        case = BenchmarkCase(case_id="q", query="Who?", expected=record)
        assert expects_abstention(case) is says  # the public SQuAD helper: three states
        score = AbstentionAccuracy().score(case, QueryResponse(mode="m", answer=None))
        assert (score.status == "skipped") is (says is None)


def test_frames_payload_and_detail_agree_in_memory_and_stored(tmp_path):
    report = _report()
    store = ReportStore(tmp_path)
    store.save(report)
    stored = store.load("kb", "r")
    truth = [bool(says) for _, says in TABLE]
    for one in (report, stored):
        assert list(one.frames().case_column("expects_abstention")) == truth
        assert encode_report(one)["cases"]["expects_abstention"] == [int(t) for t in truth]
    for result, t in zip(report.case_results, truth, strict=True):
        shown = "unanswerable: the right answer is to abstain" in case_detail_html(result)
        assert shown is t
