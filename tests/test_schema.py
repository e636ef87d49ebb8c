"""The records validate on construction, name the bad field, and round-trip losslessly."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from heta_notebook import (
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationError,
    EvaluationReport,
    EvaluationScore,
    QueryResponse,
    QueryResult,
)


def make_report(**extra: object) -> EvaluationReport:
    response = QueryResponse(
        mode="full_text_search",
        results=[
            QueryResult(id="c1", text="chunk", score=1.5, source={"benchmark_document_id": "7"})
        ],
        answer="forty two",
    )
    scores = [
        EvaluationScore(name="ndcg@10", value=0.5),
        EvaluationScore(
            name="judge", value=True, passed=True, metadata={"reasoning": "cites doc 7"}
        ),
    ]
    result = EvaluationCaseResult(
        case_id="q1",
        query="what?",
        query_mode="full_text_search",
        scores=scores,
        response=response,
        latency_ms=3.5,
    )
    failed = EvaluationCaseResult(
        case_id="q2",
        query="why?",
        query_mode="full_text_search",
        error=EvaluationError(message="boom", error_type="RuntimeError"),
    )
    fields: dict[str, object] = {
        "report_id": "r1",
        "benchmark": BenchmarkManifest(
            name="cranfield", version="1", split="test", task_type="retrieval"
        ),
        "knowledge_base_name": "kb",
        "recipe_manifest": {"name": "bm25"},
        "query_modes": ("full_text_search",),
        "score_summary": {"full_text_search.ndcg@10": 0.5},
        "case_results": (result, failed),
        "started_at": "2026-11-29T00:00:00Z",
        "finished_at": "2026-11-29T00:00:01Z",
    }
    return EvaluationReport(**{**fields, **extra})


def test_report_round_trips_through_json_losslessly() -> None:
    report = make_report()
    again = EvaluationReport.load(report.to_json())
    assert again == report
    assert again.to_json() == report.to_json()


def test_unknown_fields_from_newer_writers_survive_a_round_trip() -> None:
    data = json.loads(make_report().to_json())
    data["future_top_level"] = {"a": 1}
    data["case_results"][0]["future_case_field"] = [1, 2]
    data["case_results"][0]["scores"][0]["future_score_field"] = "x"
    data["benchmark"]["future_manifest_field"] = True
    again = json.loads(EvaluationReport.load(json.dumps(data)).to_json())
    assert again["future_top_level"] == {"a": 1}
    assert again["case_results"][0]["future_case_field"] == [1, 2]
    assert again["case_results"][0]["scores"][0]["future_score_field"] == "x"
    assert again["benchmark"]["future_manifest_field"] is True


def test_load_reads_paths_bytes_and_dicts(tmp_path) -> None:
    report = make_report()
    path = report.save(tmp_path / "report.json")
    assert EvaluationReport.load(path) == report
    assert EvaluationReport.load(str(path)) == report
    assert EvaluationReport.load(path.read_bytes()) == report
    assert EvaluationReport.load(json.loads(path.read_text())) == report


def test_load_names_the_file_and_the_field(tmp_path) -> None:
    data = json.loads(make_report().to_json())
    del data["case_results"][1]["error"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError) as info:
        EvaluationReport.load(bad)
    message = str(info.value)
    assert str(bad) in message and "either response or error must be set" in message
    with pytest.raises(FileNotFoundError, match="no report at"):
        EvaluationReport.load(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: BenchmarkCase(case_id="  ", query="q"), "case_id"),
        (lambda: BenchmarkCase(case_id="1", query=""), "query"),
        (lambda: QueryResult(id="", text="t"), "id"),
        (lambda: EvaluationScore(name="", value=1.0), "name"),
        (lambda: BenchmarkManifest(name=""), "name"),
        (
            lambda: EvaluationCaseResult(
                case_id="1",
                query="q",
                query_mode="m",
                latency_ms=-1,
                response=QueryResponse(mode="m"),
            ),
            "latency_ms",
        ),
    ],
)
def test_validation_errors_name_the_field(build, field) -> None:
    with pytest.raises(ValidationError) as info:
        build()
    assert info.value.errors()[0]["loc"][0] == field


def test_evidence_needs_something_to_match() -> None:
    with pytest.raises(ValidationError, match="at least one of reference_id, locator, or text"):
        BenchmarkEvidence()
    assert BenchmarkEvidence(locator={"page_index": 3}).label() == "page_index=3"
    assert BenchmarkEvidence(reference_id="d1", metadata={"relevance": 2}).relevance == 2


def test_case_result_needs_a_response_or_an_error() -> None:
    with pytest.raises(ValidationError, match="either response or error"):
        EvaluationCaseResult(case_id="1", query="q", query_mode="m")


def test_document_has_exactly_one_location() -> None:
    with pytest.raises(ValidationError, match="exactly one of text, data, path"):
        BenchmarkDocument(document_id="d", text="a", data=b"b")
    with pytest.raises(ValidationError, match="file name, not a path"):
        BenchmarkDocument(document_id="d", name="../x.txt", text="a")
    assert BenchmarkDocument(document_id="d", data="é".encode()).read_text() == "é"


def test_scores_report_status_numeric_value_and_reason() -> None:
    assert EvaluationScore(name="s", value=True).numeric == 1.0
    assert EvaluationScore(name="s", value="A").numeric is None
    skipped = EvaluationScore.skipped_score("s", "no qrels")
    assert skipped.status == "skipped" and skipped.numeric is None
    error = EvaluationScore.error_score("s", TimeoutError("slow"))
    assert error.status == "error" and error.metadata["error"]["error_type"] == "TimeoutError"
    assert EvaluationScore(name="s", value=0.1, metadata={"explanation": "why"}).reason == "why"
    with pytest.raises(ValidationError, match="finite"):
        EvaluationScore(name="s", value=float("nan"))


def test_records_are_frozen() -> None:
    report = make_report()
    with pytest.raises(ValidationError):
        report.report_id = "other"  # type: ignore[misc]


def test_plain_repr_is_short_and_useful() -> None:
    text = repr(make_report(metadata={"partial": True}))
    assert "cranfield:1:test" in text and "cases=2" in text and "errors=1" in text
    assert "PARTIAL" in text and len(text) < 300


@pytest.mark.parametrize(
    ("summary", "first"),
    [
        ({"m.map@10": 0.1, "m.ndcg_cut_10": 0.2}, "m.ndcg_cut_10=0.2000"),
        (
            {"m.beir_map@1": 0.1, "m.judge": 0.5, "m.evidence_recall@10": 0.4},
            "m.evidence_recall@10",
        ),
        (
            {"m.recall@1": 0.1, "m.recall@5": 0.5, "n.recall@5": 0.6},
            "m.recall@5=0.5000, n.recall@5",
        ),
    ],
)
def test_repr_leads_with_the_cards_headline_score(summary, first) -> None:
    """The plain repr follows the one headline rule (the card's, the charts'), in every mode."""
    text = repr(make_report(score_summary=summary))
    assert text[text.index("errors=") :].split(" ", 1)[1].startswith(first), text


def test_repr_leads_with_ndcg_at_10_when_present() -> None:
    summary = {"m.beir_map@1": 0.1, "m.beir_ndcg@1": 0.2, "m.beir_ndcg@10": 0.3}
    assert "<EvaluationReport 'r1' " in repr(make_report(score_summary=summary))
    assert repr(make_report(score_summary=summary)).index("m.beir_ndcg@10=0.3000") < repr(
        make_report(score_summary=summary)
    ).index("m.beir_map@1")
