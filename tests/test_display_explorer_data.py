"""The explorers' data: columnar, texts stored once, long texts cut with their length, a cap
that keeps the most informative case results and says how many were left out."""

from __future__ import annotations

from heta_notebook.display.explorer_data import StringTable, encode_report, payload_size
from heta_notebook.display.widgets import ExplorerWidget, pack, report_data, unpack
from tests._display_helpers import make_report


def test_string_table_stores_each_text_once_and_cuts_long_ones():
    table = StringTable(limit=10)
    first = table.add("short")
    assert table.add("short") == first and table.add(None) == -1 and table.add("") == -1
    cut = table.add("x" * 25)
    assert table.texts[cut] == "x" * 9 + "…" and table.full_length[str(cut)] == 25


def test_payload_is_columnar_and_complete():
    report = make_report(10)
    payload = encode_report(report)
    n = len(report.case_results)
    assert payload["rows"] == list(range(n)) and payload["left_out"] == 0
    cases = payload["cases"]
    assert all(len(column) == n for column in cases.values())
    strings = payload["strings"]
    assert len(strings) == len(set(strings))  # every text once
    first = report.case_results[0]
    assert strings[cases["case_id"][0]] == first.case_id
    assert strings[cases["query"][0]] == first.query
    judge = payload["scores"]["judge_correctness"]
    reasons = {strings[i] for i in judge["r"] if i >= 0}
    assert {s.reason for r in report.case_results for s in r.scores if s.reason} <= reasons
    evidence = cases["evidence"][0]
    assert evidence and all(len(item) == 6 for item in evidence)
    assert unpack(pack(payload)) == payload
    assert len(pack(payload)) < payload_size(payload)  # compressed


def test_cap_embeds_errors_and_failures_first_and_counts_the_rest():
    report = make_report(30)
    payload = encode_report(report, max_cases=12)
    assert len(payload["rows"]) == 12 and payload["left_out"] == len(report.case_results) - 12
    kept = [report.case_results[i] for i in payload["rows"]]
    errors = [r for r in report.case_results if r.error is not None]
    assert all(r in kept for r in errors)
    assert payload["rows"] == sorted(payload["rows"])  # report order among the kept
    last = report.case_results[-1].case_id  # e.g. the biggest change in a comparison
    pinned = encode_report(report, max_cases=5, priority=(last,))
    assert any(report.case_results[i].case_id == last for i in pinned["rows"])


def test_one_data_model_per_report_shared_by_explorers():
    report = make_report(5)
    first, second = report.explore(), report.explore(mode="dense")
    assert first.widget.data is second.widget.data is report_data(report)
    assert isinstance(first.widget, ExplorerWidget) and first.widget.kind == "report"


def test_text_valued_scores_are_kept():
    from heta_notebook.schema import EvaluationScore

    report = make_report(2)
    first = report.case_results[0]
    labelled = first.model_copy(
        update={"scores": (*first.scores, EvaluationScore(name="verdict_text", value="partly"))}
    )
    report = report.model_copy(update={"case_results": (labelled, *report.case_results[1:])})
    payload = encode_report(report)
    column = payload["scores"]["verdict_text"]
    assert payload["strings"][column["t"]["0"]] == "partly" and column["v"][0] is None


def test_an_abstention_is_told_apart_from_a_retrieval_only_case():
    from heta_notebook import EvaluationCaseResult, QueryResponse
    from heta_notebook.display.case_detail import case_detail_html
    from heta_notebook.schema import BenchmarkManifest, EvaluationReport

    def result(case_id, answer_meta, expected):
        return EvaluationCaseResult(
            case_id=case_id,
            query="Who?",
            query_mode="full_text_search",
            response=QueryResponse(mode="full_text_search", metadata=answer_meta),
            metadata={"expected": expected},
        )

    abstained = result("q1", {"answer": {"abstained": True}}, {"metadata": {"abstain": True}})
    plain = result("q2", {}, {"answers": ["Rollo"]})
    report = EvaluationReport(
        report_id="r",
        benchmark=BenchmarkManifest(name="squad"),
        knowledge_base_name="kb",
        case_results=(abstained, plain),
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:01Z",
    )
    cases = encode_report(report)["cases"]
    assert cases["abstained"] == [1, 0] and cases["expects_abstention"] == [1, 0]
    detail = case_detail_html(abstained)
    assert "abstained: the answer step found no answer" in detail
    assert "unanswerable: the right answer is to abstain" in detail
    assert "no answer (retrieval only)" in case_detail_html(plain)


def _columnar_copy(report, folder):
    """``report`` saved in the columnar store (small row groups) and opened lazily."""
    from heta_notebook.columnar import LazyCaseResults, open_report, write_report

    write_report(folder, report, cases_per_group=7)  # many row groups
    reopened = open_report(folder)
    assert isinstance(reopened.case_results, LazyCaseResults)
    return reopened


def test_columnar_report_gives_the_same_payload_as_its_records(tmp_path):
    report = make_report(30)
    lazy = _columnar_copy(report, tmp_path / "rep")
    for cap in (None, 12, 40):
        assert encode_report(lazy, max_cases=cap) == encode_report(report, max_cases=cap)
    last = report.case_results[-1].case_id
    pinned = encode_report(lazy, max_cases=5, priority=(last,))
    assert pinned == encode_report(report, max_cases=5, priority=(last,))


def test_informative_order_from_frames_matches_the_records(tmp_path):
    """The vectorised order (frames) is the rule spelled out on records."""
    import math

    from heta_notebook.analysis.headline import headline_score
    from heta_notebook.display.explorer_data import informative_order

    report = make_report(40)
    headline = headline_score(report.score_names)

    def key(row):
        r = report.case_results[row]
        score = r.score(headline)
        value = score.numeric if score is not None else None
        return (
            0 if r.case_id == "q0005" else 1,
            0 if r.error is not None else 1,
            0 if any(s.passed is False for s in r.scores) else 1,
            value if value is not None else math.inf,
            row,
        )

    expected = sorted(range(len(report.case_results)), key=key)
    assert informative_order(report, ("q0005",)).tolist() == expected
    lazy = _columnar_copy(report, tmp_path / "rep")
    assert informative_order(lazy, ("q0005",)).tolist() == expected


def test_take_builds_the_same_records_as_indexing(tmp_path):
    report = make_report(20)
    lazy = _columnar_copy(report, tmp_path / "rep").case_results
    rows = [0, 3, 6, 7, 8, 19, 50, 59]
    assert list(lazy.take(rows)) == [report.case_results[i] for i in rows]
