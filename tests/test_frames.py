"""ReportFrames: every frame's values checked against the report it came from."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from heta_notebook.analysis._case_rows import (
    RESULT_FIELDS,
    case_evidence,
    case_results,
    expected_of,
)
from heta_notebook.analysis._frames import ReportFrames
from heta_notebook.evaluators._aggregation import summarize
from heta_notebook.schema import EvaluationReport
from tests._display_helpers import make_report


@pytest.fixture(scope="module")
def report() -> EvaluationReport:
    return make_report(30)


@pytest.fixture(scope="module")
def frames(report) -> ReportFrames:
    return report.frames()


def test_summary_matches_aggregation_and_manual_mean(report, frames):
    summary = frames.summary().set_index(["query_mode", "score"])
    expected = summarize(report.case_results)
    assert len(summary) == len(expected)
    for key, agg in expected.items():
        mode, name = key.split(".", 1)
        row = summary.loc[(mode, name)]
        assert row["n"] == agg.n and row["n_skipped"] == agg.n_skipped
        assert row["n_error"] == agg.n_error
        if agg.value is not None:
            assert row["mean"] == pytest.approx(agg.value)
    # independent check of one mean: skipped/failed excluded
    values = [
        s.value
        for r in report.case_results
        if r.query_mode == "dense"
        for s in r.scores
        if s.name == "ndcg@10" and s.status == "scored"
    ]
    assert summary.loc[("dense", "ndcg@10"), "mean"] == pytest.approx(np.mean(values))
    assert summary.loc[("dense", "ndcg@10"), "n_skipped"] == 3  # q0003, q0014, q0025


def test_summary_orders_modes_and_scores_like_the_report(report, frames):
    summary = frames.summary()
    assert list(dict.fromkeys(summary["query_mode"])) == list(report.query_modes)
    first_mode = summary[summary["query_mode"] == "bm25"]
    assert list(first_mode["score"]) == list(report.score_names)


def test_cases_one_row_per_case_result_with_score_columns(report, frames):
    cases = frames.cases()
    assert len(cases) == len(report.case_results)
    for row in (0, 5, 40, len(report.case_results) - 1):
        result = report.case_results[row]
        got = cases.iloc[row]
        assert got["case_id"] == result.case_id and got["query_mode"] == result.query_mode
        assert got["query"] == result.query
        for score in result.scores:
            value = got[score.name]
            if score.status == "scored":
                assert value == pytest.approx(float(score.value))
            else:
                assert math.isnan(value)


def test_cases_records_query_errors_and_their_missing_scores(report, frames):
    cases = frames.cases()
    failed = cases[cases["error"].notna()]
    assert set(failed["case_id"]) == {"q0007", "q0020"}
    assert set(failed["query_mode"]) == {"bm25"}
    assert failed["ndcg@10"].isna().all() and (failed["n_results"] == 0).all()


def test_scores_long_format_status_and_reasons(report, frames):
    scores = frames.scores()
    assert len(scores) == sum(len(r.scores) for r in report.case_results)
    judge = scores[scores["score"] == "judge_correctness"]
    assert set(judge["status"]) == {"scored", "error"}
    scored = judge[judge["status"] == "scored"]
    assert scored["reason"].str.contains("answer").all()
    errors = judge[judge["status"] == "error"]
    assert errors["reason"].str.contains("timed out").all() and errors["value"].isna().all()
    skipped = scores[scores["status"] == "skipped"]
    assert (skipped["case_id"].isin(["q0003", "q0014", "q0025"])).all()
    booleans = scores[scores["score"] == "answer_contains"]
    assert set(booleans["value"].unique()) <= {0.0, 1.0}
    assert booleans["passed"].dtype == "boolean"


def test_text_scores_stay_text_in_cases(report):
    from heta_notebook.schema import EvaluationScore

    first = report.case_results[0]
    labelled = first.model_copy(
        update={"scores": (*first.scores, EvaluationScore(name="verdict", value="good"))}
    )
    other = report.model_copy(update={"case_results": (labelled, *report.case_results[1:])})
    cases = other.frames().cases()
    assert cases.loc[0, "verdict"] == "good" and pd.isna(cases.loc[1, "verdict"])


def test_evidence_frame_uses_matching_and_agrees_with_recall_metadata(report, frames):
    evidence = frames.evidence()
    for row in (0, 1, 2, 10, 11):
        result = report.case_results[row]
        meta = result.score("evidence_recall@10").metadata
        got = evidence[evidence["row"] == row]
        if meta.get("skipped"):
            assert got.empty
            continue
        matched = got[got["matched"]]
        assert len(got) == meta["expected"]
        # the recall score looks at the top 10; our results list has exactly 10
        assert set(matched["reference_id"]) == {e["reference_id"] for e in meta["matched_evidence"]}
        for item in meta["matched_evidence"]:
            hit = matched[matched["reference_id"] == item["reference_id"]].iloc[0]
            assert hit["rank"] == item["rank"] and hit["result_id"] == item["result_id"]
        assert (got["source"] == "match").all()


def test_evidence_falls_back_to_score_metadata_without_expected(report):
    bare = make_report(6, expected_metadata=False)
    evidence = bare.frames().evidence()
    assert not evidence.empty
    assert evidence["source"].str.startswith("score:evidence_recall@10").all()
    row0 = bare.case_results[0].score("evidence_recall@10").metadata
    got = evidence[evidence["row"] == 0]
    assert int(got["matched"].sum()) == row0["matched"]


def test_results_frame_ranks_documents_and_relevance(report, frames):
    results = frames.results()
    assert len(results) == sum(
        len(r.response.results) for r in report.case_results if r.response is not None
    )
    row0 = results[results["row"] == 0]
    assert list(row0["rank"]) == list(range(1, 11))
    qrels = {
        e["reference_id"]: e["metadata"]["relevance"]
        for e in report.case_results[0].metadata["expected"]["evidence"]
    }
    for rec in row0.itertuples():
        assert rec.document_id == rec.result_id.split(":")[2].split("#")[0]
        assert rec.relevance == qrels.get(rec.document_id, 0)
        assert rec.relevant == (rec.document_id in qrels)
    no_qrels = results[results["case_id"] == "q0003"]
    assert no_qrels["relevance"].isna().all() and not no_qrels["relevant"].any()


def test_per_case_helpers_match_frames(report, frames):
    result = report.case_results[4]
    assert len(case_evidence(result)) == len(frames.evidence().query("row == 4"))
    assert [r["rank"] for r in case_results(result)] == list(range(1, 11))


def test_metrics_table_and_latency(report, frames):
    table = frames.metrics_table()
    assert list(table.columns) == list(report.query_modes)
    assert list(table.index) == list(report.score_names)
    latency = frames.latency().set_index("query_mode")
    bm25 = [r.latency_ms for r in report.case_results if r.query_mode == "bm25"]
    assert latency.loc["bm25", "p50"] == pytest.approx(np.median(bm25))
    assert latency.loc["bm25", "n_error"] == 2 and latency.loc["dense", "n_error"] == 0


def test_single_columns_agree_with_full_frames(report):
    lazy = ReportFrames(report)
    column = lazy.score_column("ndcg@10")  # computed without the long frame
    full = report.frames().cases()["ndcg@10"].to_numpy()
    np.testing.assert_array_equal(np.isnan(column["value"]), np.isnan(full))
    np.testing.assert_allclose(column["value"].dropna(), full[~np.isnan(full)])
    assert list(lazy.case_column("query_mode")) == [r.query_mode for r in report.case_results]
    warm = ReportFrames(report)
    warm.scores()
    pd.testing.assert_frame_equal(
        warm.score_column("answer_contains"), lazy.score_column("answer_contains")
    )


def test_frames_are_copies(frames):
    cases = frames.cases()
    cases.loc[0, "query"] = "changed"
    assert frames.cases().loc[0, "query"] != "changed"


def test_empty_report_gives_empty_frames():
    empty = make_report(1).model_copy(update={"case_results": ()})
    frames = empty.frames()
    assert frames.summary().empty and frames.cases().empty and frames.scores().empty
    assert frames.evidence().empty and frames.results().empty


def test_summary_from_extracted_columns_equals_aggregation_summary(report):
    """After scores(), summary() is computed from the extracted columns, not by
    ``aggregation.summarize``: the numbers must be identical (text scores, errors included)."""
    from heta_notebook.schema import EvaluationScore

    first = report.case_results[0]
    labelled = first.model_copy(
        update={
            "scores": (*first.scores, EvaluationScore(name="verdict", value="good", passed=True))
        }
    )
    other = report.model_copy(update={"case_results": (labelled, *report.case_results[1:])})
    cold = ReportFrames(other).summary()  # aggregation.summarize
    warm = ReportFrames(other)
    warm.scores()
    pd.testing.assert_frame_equal(warm.summary(), cold, check_exact=True)
    assert cold.set_index(["query_mode", "score"]).loc[("bm25", "verdict"), "counts"] == {"good": 1}


def test_a_dropped_report_is_freed_at_once_and_its_frames_say_so():
    """The report caches its frames and the frames refer back only weakly, so dropping a
    report frees it and its records by reference counting (no full collection later);
    frames kept after it still give their tables and name what is gone."""
    import gc
    import weakref

    report = make_report()
    frames = report.frames()
    expected = frames.summary()
    frames.cases(), frames.scores()
    assert frames.report is report and report.frames() is frames
    alive = weakref.ref(report)
    gc.disable()
    try:
        del report
        assert alive() is None  # freed without the cyclic collector
    finally:
        gc.enable()
    pd.testing.assert_frame_equal(frames.summary(), expected)
    with pytest.raises(ReferenceError, match="keep a reference to the report"):
        _ = frames.report


def test_a_model_copy_gets_its_own_frames():
    report = make_report()
    copy = report.model_copy(update={"case_results": report.case_results[:1]})
    assert copy.frames() is not report.frames()
    assert len(copy.frames().cases()) == 1 < len(report.frames().cases())


@pytest.mark.parametrize("odd", [False, True])
def test_a_stored_reports_evidence_comes_from_its_columns(tmp_path, odd, monkeypatch):
    """``frames.evidence()`` of a stored report matches reference-id evidence on the stored
    result keys, building no record (a 100k-case report built them all: minutes); a case
    with a text or locator to match is built and read as a record. Either way the rows are
    ``case_evidence``'s of each case result, in report order."""
    from heta_notebook.reports._stored import LazyCaseResults
    from tests.test_display_explorer_data import _columnar_copy, _with_odd_evidence

    report = make_report(14)
    report = _with_odd_evidence(report) if odd else report
    built: list[int] = []
    take = LazyCaseResults.take
    monkeypatch.setattr(
        LazyCaseResults, "take", lambda self, rows: built.extend(rows) or take(self, rows)
    )
    lazy = _columnar_copy(report, tmp_path / "rep")
    got = lazy.frames().evidence().reset_index(drop=True)
    rows = [
        (i, r.case_id, r.query_mode, *e.values())
        for i, r in enumerate(report.case_results)
        for e in case_evidence(r)
    ]
    expected = pd.DataFrame.from_records(rows, columns=list(got.columns))
    expected["rank"] = expected["rank"].astype("Int64")
    pd.testing.assert_frame_equal(got, expected)
    pd.testing.assert_frame_equal(report.frames().evidence().reset_index(drop=True), expected)
    by_reference = {  # what the columns decide: reference ids alone
        i
        for i, r in enumerate(report.case_results)
        if (items := (r.metadata.get("expected") or {}).get("evidence"))
        and not any(item.get("text") or item.get("locator") for item in items)
    }
    assert by_reference and not by_reference & set(built)
    assert set(built) | by_reference == set(range(len(report.case_results)))


def _results_by_records(report: EvaluationReport) -> pd.DataFrame:
    """``frames.results()`` as it was built before: ``case_results`` of every record (the
    expected data of each case id's first record), in report order."""
    rows, parsed = [], {}
    for row, result in enumerate(report.case_results):
        if result.case_id not in parsed:
            parsed[result.case_id] = expected_of(result)
        for item in case_results(result, parsed[result.case_id]):
            rows.append((row, result.case_id, result.query_mode, *item.values()))
    frame = pd.DataFrame.from_records(
        rows, columns=["row", "case_id", "query_mode", *RESULT_FIELDS]
    )
    frame["relevance"] = frame["relevance"].astype("Int64")
    return frame


@pytest.mark.parametrize("kind", ["plain", "odd evidence", "no expected data"])
def test_the_results_frame_comes_from_the_columns(tmp_path, kind, monkeypatch):
    """``frames.results()`` of an in-memory and of a stored report equals the rows of its
    records exactly; a stored report builds a record only for a case whose evidence the
    columns cannot decide (a text or locator to match, or none: score metadata may name it)."""
    from heta_notebook.reports._stored import LazyCaseResults
    from tests.test_display_explorer_data import _columnar_copy, _with_odd_evidence

    report = make_report(14, expected_metadata=kind != "no expected data")
    report = _with_odd_evidence(report) if kind == "odd evidence" else report
    expected = _results_by_records(report)
    assert len(expected) and expected["relevant"].any()
    pd.testing.assert_frame_equal(report.frames().results(), expected)
    built: list[int] = []
    take = LazyCaseResults.take
    monkeypatch.setattr(
        LazyCaseResults, "take", lambda self, rows: built.extend(rows) or take(self, rows)
    )
    stored = _columnar_copy(report, tmp_path / "rep")
    pd.testing.assert_frame_equal(stored.frames().results(), expected)
    first: dict[str, dict] = {}  # a case's expected data: its first row's, as before
    for r in report.case_results:
        first.setdefault(r.case_id, r.metadata.get("expected") or {})
    decided = {  # what the columns decide: reference ids alone
        i
        for i, r in enumerate(report.case_results)
        if (items := first[r.case_id].get("evidence"))
        and not any(item.get("text") or item.get("locator") for item in items)
    }
    with_results = {
        i for i, r in enumerate(report.case_results) if r.response and r.response.results
    }
    assert (kind == "no expected data") == (not decided)
    assert set(built) == with_results - decided


@pytest.fixture(scope="module")
def cranfield_chunks(tmp_path_factory) -> EvaluationReport:
    """A Cranfield run of chunked documents (``doc#n`` results, graded qrels)."""
    from heta_notebook import BeirBenchmark, Chunking, Recipe, run_benchmark

    recipe = Recipe(name="chunks", chunking=Chunking(unit="words", size=100, overlap=20))
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipe=recipe,
        query_modes=["full_text_search"],
        workspace=str(tmp_path_factory.mktemp("cranfield")),
        progress=False,
    ).report


def test_a_cranfield_runs_results_frame_is_the_same_in_memory_and_stored(
    cranfield_chunks, tmp_path
):
    from heta_notebook.reports._folder import write_report

    expected = _results_by_records(cranfield_chunks)
    assert expected["document_id"].notna().all() and expected["relevant"].any()
    pd.testing.assert_frame_equal(cranfield_chunks.frames().results(), expected)
    write_report(tmp_path / "saved", cranfield_chunks)
    stored = EvaluationReport.load(tmp_path / "saved")
    pd.testing.assert_frame_equal(stored.frames().results(), expected)
