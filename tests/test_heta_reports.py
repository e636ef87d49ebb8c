"""heta-framework reports: its report.json loads, renders and compares; ours converts without loss.

The fixture ``tests/fixtures/heta/report.json`` was written by heta-framework 0.1.2's own
``BenchmarkRunner`` (``tests/fixtures/make_heta_report.py``).
"""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import sys

import pytest

from heta_notebook.integrations.heta import (
    from_heta_report,
    is_heta_object,
    require_heta,
    to_heta_report,
)
from heta_notebook.reports._store import ReportStore
from heta_notebook.schema import (
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationError,
    EvaluationReport,
    EvaluationScore,
    QueryCitation,
    QueryResponse,
    QueryResult,
    QueryTraceEvent,
    report_key,
)
from tests._heta_helpers import KB_NAME, REPORT_ID, REPORT_JSON, heta, raw_fixture


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@pytest.fixture(scope="module")
def heta_report() -> EvaluationReport:
    return EvaluationReport.load(REPORT_JSON)


# --------------------------------------------------------------------------- theirs → ours


def test_heta_report_json_loads_field_for_field(heta_report: EvaluationReport) -> None:
    raw = raw_fixture()
    assert heta_report.to_dict() == raw  # nothing dropped, nothing invented
    assert heta_report.report_id == REPORT_ID
    assert heta_report.benchmark.key == "beir_cranfield_mini:official:test"
    assert heta_report.query_modes == ("full_text_search", "vector_search")
    assert len(heta_report.case_results) == 16
    errors = [r for r in heta_report.case_results if r.error is not None]
    assert len(errors) == 8 and {r.query_mode for r in errors} == {"vector_search"}
    assert errors[0].error.error_type == "LookupError"
    skipped = heta_report.case_results[0].score("answer_contains")
    assert skipped.status == "skipped"  # heta marks "no expected answers" with metadata.skipped


def test_heta_report_loads_through_report_store_in_heta_layout(tmp_path) -> None:
    target = tmp_path / report_key(KB_NAME, REPORT_ID)
    target.parent.mkdir(parents=True)
    shutil.copyfile(REPORT_JSON, target)  # exactly where heta-framework's runner persists it
    store = ReportStore(tmp_path)
    assert store.report_ids(KB_NAME) == [REPORT_ID]
    loaded = store.load(KB_NAME, REPORT_ID)
    assert loaded.to_dict() == raw_fixture()
    listing = store.list()
    row = listing.iloc[0]
    assert (row["knowledge_base_name"], row["report_id"]) == (KB_NAME, REPORT_ID)
    assert row["full_text_search.beir_ndcg@10"] == pytest.approx(
        loaded.score_summary["full_text_search.beir_ndcg@10"]
    )


def test_from_heta_report_accepts_object_dict_json_bytes_and_path(heta_report) -> None:
    theirs = to_heta_report(heta_report)
    text = REPORT_JSON.read_text(encoding="utf-8")
    for source in (theirs, theirs.to_dict(), text, text.encode(), REPORT_JSON, str(REPORT_JSON)):
        assert from_heta_report(source) == heta_report


def test_non_finite_heta_scores_become_skipped_not_nan() -> None:
    data = raw_fixture()
    score = data["case_results"][0]["scores"][0]
    score["value"] = float("nan")
    text = json.dumps(data)  # heta-framework's json.dumps writes NaN as is
    report = from_heta_report(text)
    converted = report.case_results[0].scores[0]
    assert converted.status == "skipped" and converted.numeric is None
    assert converted.metadata["original_value"] == "nan"
    assert not math.isnan(float(converted.value))


# --------------------------------------------------------------------------- ours → theirs


def _tricky_report() -> EvaluationReport:
    """A report using everything heta-framework's dataclasses have no place for."""
    response = QueryResponse(
        mode="full_text_search",
        results=(
            QueryResult(id="c1", text="  padded chunk\n", score=2.5, source={"document_id": "d1"}),
            QueryResult(id="c2", text="", score=None, kind="table", future_field=[1, 2]),
        ),
        answer="  an answer with spaces ",
        citations=(QueryCitation(id="cit", result_id="c1", text="quote"),),
        trace=(QueryTraceEvent(stage="retrieve", message="bm25", metadata={"k": 10}),),
        metadata={"insights": [{"text": "claim", "evidence_ids": ["c1"]}]},
    )
    scored = EvaluationScore(name="beir_ndcg@10", value=0.5, metadata={"k": 10})
    case = EvaluationCaseResult(
        case_id="q1",
        query="what <b>is</b> it",
        query_mode="full_text_search",
        scores=(
            scored,
            EvaluationScore.skipped_score("answer_contains", "no expected answers"),
            EvaluationScore.error_score("judge", RuntimeError("boom")),
            EvaluationScore(name="verdict", value="correct", passed=True, metadata={"reason": "r"}),
            EvaluationScore(name="flag", value=True, passed=True),
        ),
        response=response,
        latency_ms=1.5,
        metadata={"expected": {"answers": ["x"]}, "labels": {"topic": "t"}},
        case_extra={"nested": True},
    )
    failed = EvaluationCaseResult(
        case_id="q2",
        query="second",
        query_mode="full_text_search",
        error=EvaluationError(message="timed out", error_type="TimeoutError", retryable=True),
    )
    empty_answer = EvaluationCaseResult(
        case_id="q3",
        query="third",
        query_mode="full_text_search",
        response=QueryResponse(mode="full_text_search", answer=""),
    )
    return EvaluationReport(
        report_id="ours-1",
        benchmark=BenchmarkManifest(name="bench", metadata={"a": 1}, future="kept"),
        knowledge_base_name="kb",
        knowledge_base_manifest=[{"name": "kb-a"}, {"name": "kb-b"}],
        recipe_manifest={"name": "bm25", "chunking": {"size": 100}},
        query_modes=("full_text_search",),
        score_summary={"full_text_search.beir_ndcg@10": 0.5},
        case_results=(case, failed, empty_answer),
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
        metadata={"partial": False, "versions": {"python": "3.11"}},
        written_by_newer_version={"x": 1},
    )


@pytest.mark.parametrize("which", ["fixture", "tricky"])
def test_ours_to_heta_to_dict_to_ours_is_lossless(which, heta_report) -> None:
    ours = heta_report if which == "fixture" else _tricky_report()
    theirs = to_heta_report(ours)
    assert isinstance(theirs, heta.EvaluationReport)
    assert is_heta_object(theirs) and not is_heta_object(ours)
    data = json.loads(json.dumps(theirs.to_dict()))  # heta's own serialisation
    back = from_heta_report(data)
    assert back == ours
    assert back.to_json() == ours.to_json()


def test_heta_consumers_see_normal_heta_records() -> None:
    theirs = to_heta_report(_tricky_report())
    first = theirs.case_results[0]
    assert isinstance(first.response, heta_query_response())
    assert first.response.answer == "an answer with spaces"  # heta's own normalisation
    assert first.response.results[1].text == "(empty)"  # heta refuses empty result text
    assert first.response.insights == ()  # insights travel in metadata
    assert first.scores[2].metadata["error"]["error_type"] == "RuntimeError"
    assert theirs.case_results[1].error.retryable is True
    assert theirs.benchmark.key == "bench:1:test"
    assert theirs.knowledge_base_manifest == [{"name": "kb-a"}, {"name": "kb-b"}]
    # heta-framework's runner computes the same storage key as ours
    assert heta.default_report_key("My KB", "r1") == report_key("My KB", "r1")


def heta_query_response() -> type:
    from heta_framework.kb.search import QueryResponse as HetaQueryResponse

    return HetaQueryResponse


def test_missing_heta_framework_gives_install_hint(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "heta_framework.evaluation", None)
    with pytest.raises(ImportError, match=r"pip install 'heta-notebook\[heta\]'"):
        require_heta("to_heta_report")
    with pytest.raises(ImportError, match="heta-notebook"):
        to_heta_report(_tricky_report())


def test_is_heta_object_checks_the_type_module_only() -> None:
    assert is_heta_object(heta.EvidenceRecallAtK(k=3))
    assert not is_heta_object(_tricky_report())
    assert not is_heta_object({"module": "heta_framework"})


# --------------------------------------------------------------------------- render and compare


@pytest.mark.skipif(not _has("heta_notebook.display._card"), reason="display card not landed yet")
def test_heta_report_renders_card_and_frames(heta_report) -> None:
    html = heta_report._repr_html_()
    assert "beir_cranfield_mini" in html and "full_text_search" in html
    frames = heta_report.frames()
    summary = frames.summary()
    assert len(summary) > 0
    cases = frames.cases()
    assert len(cases) == 16


def test_heta_report_frames_without_expected_metadata(heta_report) -> None:
    """heta reports lack metadata["expected"] (it is ours, not heta's): frames degrade, do not fail."""
    pytest.importorskip("heta_notebook.analysis._frames")
    frames = heta_report.frames()
    scores = frames.scores()
    ndcg = scores[
        (scores["query_mode"] == "full_text_search") & (scores["score"] == "beir_ndcg@10")
    ]
    ours = [r.score("beir_ndcg@10").value for r in heta_report.case_results if r.response]
    assert sorted(ndcg["value"]) == pytest.approx(sorted(ours))
    assert len(frames.results()) > 0


@pytest.mark.skipif(
    not _has("heta_notebook.display._explorer"), reason="report.explore() not landed yet"
)
def test_heta_report_explorer_filters_and_shows_a_case(heta_report) -> None:
    explorer = heta_report.explore()
    assert explorer.set_filters(errors_only=True).n_matching == 8  # the vector_search errors
    explorer.set_filters(errors_only=False, mode="full_text_search")
    assert explorer.n_matching == 8
    explorer.sort("beir_ndcg@10", descending=True).select("1", mode="full_text_search")
    detail = explorer.detail_html
    assert "beir_ndcg@10" in detail and "similarity laws" in detail  # the query is shown
    assert explorer.select("1", mode="vector_search").detail_html.count("LookupError") >= 1


def test_heta_report_compares_with_itself_and_a_converted_copy(heta_report) -> None:
    pytest.importorskip("heta_notebook.analysis._compare")
    from heta_notebook.analysis._compare import compare

    theirs = to_heta_report(heta_report)  # heta's object goes straight into compare()
    comparison = compare({"loaded": heta_report, "heta object": theirs})
    summary = comparison.summary()
    assert len(summary) > 0
    deltas = comparison.deltas("beir_ndcg@10")
    assert (deltas["delta"].abs() < 1e-12).all()


def test_manifest_converts_both_ways_with_unknown_fields_in_metadata() -> None:
    from heta_notebook.integrations.heta._records import manifest_from_heta, manifest_to_heta

    ours = BenchmarkManifest(name="b", version="2", split="dev", homepage="https://x", extra=1)
    theirs = manifest_to_heta(ours)
    assert isinstance(theirs, heta.BenchmarkManifest) and theirs.key == ours.key == "b:2:dev"
    assert theirs.metadata == {"extra": 1}
    assert manifest_from_heta(theirs).homepage == "https://x"


def test_importing_the_integration_does_not_import_heta_framework() -> None:
    import subprocess

    code = (
        "import sys, heta_notebook, heta_notebook.integrations.heta as h\n"
        "assert not [m for m in sys.modules if m.startswith('heta_framework')], 'eager import'\n"
        "assert h.is_heta_object(1) is False\n"
        "assert not [m for m in sys.modules if m.startswith('heta_framework')], 'eager import'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
