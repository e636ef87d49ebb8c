"""The miss taxonomy: every expected evidence item gets one class, and constructed cases
produce each class (found, beyond k, split, not retrieved, not indexed, lost at a stage,
found but not cited, found but the answer wrong, unknown depth)."""

from __future__ import annotations

from typing import Any

import pytest

from heta_notebook import compare
from heta_notebook.analysis._misses import (
    classify_case,
    delta_sentence,
    miss_line,
)
from heta_notebook.schema import (
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationReport,
    EvaluationScore,
    QueryCitation,
    QueryResponse,
    QueryResult,
    QueryTraceEvent,
)
from heta_notebook.systems import response_stages


def _result(doc: str, chunk: int = 0) -> QueryResult:
    return QueryResult(
        id=f"{doc}#{chunk}", source={"benchmark_document_id": doc, "chunk_id": f"{doc}#{chunk}"}
    )


def _case(
    evidence: list[str],
    results: list[QueryResult],
    *,
    case_id: str = "q1",
    top_k: int | None = None,
    mode: str = "bm25",
    scores: tuple[EvaluationScore, ...] = (),
    **response: Any,
) -> EvaluationCaseResult:
    metadata = dict(response.pop("metadata", {}))
    if top_k is not None:
        metadata["top_k"] = top_k
    answers = ("yes",) if "answer" in response else ()
    items = tuple(BenchmarkEvidence(reference_id=d) for d in evidence)
    expected = BenchmarkExpected(answers=answers, evidence=items)
    return EvaluationCaseResult(
        case_id=case_id,
        query=f"query {case_id}",
        query_mode=mode,
        scores=scores,
        response=QueryResponse(mode=mode, results=tuple(results), metadata=metadata, **response),
        metadata={"expected": expected.to_dict()},
    )


def _classes(result: EvaluationCaseResult, **options: Any) -> dict[str, str]:
    return {row["label"]: row["miss_class"] for row in classify_case(result, **options)}


def test_found_beyond_k_and_unknown_depth_from_the_results_alone() -> None:
    results = [_result(d) for d in ("a", "x", "y", "b", "z")]
    rows = classify_case(_case(["a", "b", "c"], results, top_k=5), k=3)
    by_label = {r["label"]: r for r in rows}
    assert by_label["a"]["miss_class"] == "found" and by_label["a"]["rank"] == 1
    assert by_label["b"]["miss_class"] == "beyond k" and by_label["b"]["rank"] == 4
    # 5 results asked, 5 returned: c may sit at rank 6 or nowhere; we do not guess
    assert by_label["c"]["miss_class"] == "unknown depth" and by_label["c"]["rank"] is None


def test_not_retrieved_when_the_system_returned_fewer_results_than_asked() -> None:
    results = [_result("a"), _result("x")]
    assert _classes(_case(["a", "c"], results, top_k=10)) == {"a": "found", "c": "not retrieved"}


def test_two_chunks_of_one_document_beyond_k_are_split() -> None:
    results = [_result("x"), _result("y"), _result("b", 0), _result("b", 3)]
    assert _classes(_case(["b"], results, top_k=4), k=2) == {"b": "split"}


def test_evidence_cut_by_a_chunk_boundary_is_split_ranked_or_not() -> None:
    deep = {
        "r": {"indexed": True, "chunks": 3, "chunk_rank": None, "cut": True},  # never ranked
        "d": {"indexed": True, "chunks": 3, "chunk_rank": 40, "cut": True},
        "w": {"indexed": True, "chunks": 3, "chunk_rank": None, "cut": False},  # held whole
    }
    results = [_result(d) for d in ("x", "y", "z")]
    case = _case(["r", "d", "w"], results, top_k=3, metadata={"deep_ranks": deep})
    rows = {r["label"]: r for r in classify_case(case)}
    assert {k: (r["miss_class"], r["cut"]) for k, r in rows.items()} == {
        "r": ("split", True),
        "d": ("split", True),
        "w": ("not retrieved", False),
    }
    assert rows["d"]["rank"] == 40 and rows["r"]["rank"] is None


# the embedded KB's deep ranks of five missed documents: beyond k, split, not retrieved, and
# not indexed (filtered out; empty text)
DEEP_RANKS = {
    "b": {"indexed": True, "chunks": 1, "chunk_rank": 37, "document_rank": 21},
    "s": {"indexed": True, "chunks": 4, "chunk_rank": 15, "document_rank": 12},
    "n": {"indexed": True, "chunks": 1, "chunk_rank": None, "document_rank": None},
    "e": {"indexed": False, "chunks": 1},
    "f": {"indexed": False, "chunks": 0},
}


def test_deep_ranks_decide_beyond_k_split_not_retrieved_and_not_indexed() -> None:
    deep = DEEP_RANKS
    results = [_result(d) for d in ("x", "y", "z")]
    case = _case(["b", "s", "n", "e", "f"], results, top_k=3, metadata={"deep_ranks": deep})
    rows = {r["label"]: r for r in classify_case(case)}
    assert {k: r["miss_class"] for k, r in rows.items()} == {
        "b": "beyond k",
        "s": "split",
        "n": "not retrieved",
        "e": "not indexed",
        "f": "not indexed",
    }
    assert (rows["b"]["rank"], rows["b"]["document_rank"], rows["b"]["rank_source"]) == (
        37,
        21,
        "deep rank",
    )


def test_a_two_stage_system_shows_lost_at_stage_rerank() -> None:
    stages = [
        {
            "stage": "retrieve",
            "ids": ["a#0", "b#0", "c#0", "x#0", "y#0"],
            "document_ids": ["a", "b", "c", "x", "y"],  # chunk ids need their documents
        },
        {"stage": "rerank", "ids": ["x#0", "a#0", "y#0"]},  # final results map themselves
    ]
    results = [_result("x"), _result("a"), _result("y")]
    case = _case(["a", "b", "d"], results, top_k=3, metadata={"stages": stages})
    rows = {r["label"]: r for r in classify_case(case)}
    assert rows["a"]["miss_class"] == "found"
    assert (rows["b"]["miss_class"], rows["b"]["stage"]) == ("lost at stage", "rerank")
    assert rows["b"]["stage_ranks"] == {"retrieve": 2, "rerank": None}
    assert rows["d"]["miss_class"] == "unknown depth"  # never in any stage, depth unknown


def test_a_stage_loses_evidence_it_drops_or_demotes_past_k_and_beyond_k_is_the_rest() -> None:
    """docs/misses.md's rows: ``lost at stage S`` is evidence listed before S and dropped at S,
    or inside k before S and outside k after it; ``beyond k`` is a rank past k (here the last
    stage's) where no stage lost it."""
    stages = [
        {"stage": "retrieve", "ids": ["a", "b", "c", "d", "e"]},
        {"stage": "rerank", "ids": ["a", "d", "c", "b"]},  # b demoted 2 -> 4, e dropped
    ]
    case = _case(
        ["b", "c", "e"], [_result("a"), _result("d")], top_k=2, metadata={"stages": stages}
    )
    rows = {r["label"]: r for r in classify_case(case)}
    assert (rows["b"]["miss_class"], rows["b"]["stage"]) == ("lost at stage", "rerank")
    assert (rows["b"]["rank"], rows["b"]["rank_source"]) == (4, "stage:rerank")  # where S put it
    assert (rows["e"]["miss_class"], rows["e"]["stage"]) == ("lost at stage", "rerank")
    assert (rows["e"]["rank"], rows["e"]["rank_source"]) == (5, "stage:retrieve")  # dropped
    # c: outside k at every stage, never inside k before: depth, not a stage, is to blame
    assert (rows["c"]["miss_class"], rows["c"]["stage"]) == ("beyond k", None)
    assert (rows["c"]["rank"], rows["c"]["rank_source"]) == (3, "stage:rerank")


def test_the_docs_table_names_every_class() -> None:
    from pathlib import Path

    from heta_notebook.analysis._misses import CLASSES, LOST_AT

    table = Path(__file__).parents[1].joinpath("docs", "misses.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    named = {name for row in rows for name in row.split("|")[1].strip().strip("`").split("` / `")}
    assert named == {c if c != LOST_AT else f"{LOST_AT} S" for c in CLASSES}


def test_stages_can_come_from_trace_events() -> None:
    trace = (
        QueryTraceEvent(stage="retrieve", message="bm25", metadata={"ids": ["b", "a"]}),
        QueryTraceEvent(stage="rerank", message="cross-encoder", metadata={"ids": ["a"]}),
    )
    case = _case(["a", "b"], [_result("a")], top_k=1, trace=trace)
    assert [s.name for s in response_stages(case.response)] == ["retrieve", "rerank"]
    assert _classes(case) == {"a": "found", "b": "lost at stage"}


def test_a_malformed_stage_record_names_the_field() -> None:
    case = _case(["a"], [_result("a")], metadata={"stages": [{"stage": "retrieve", "ids": 3}]})
    with pytest.raises(ValueError, match=r"stages'\]\[0\]\.ids: expected a list"):
        classify_case(case)


def test_answer_step_classes_not_cited_and_answer_wrong() -> None:
    results = [_result("a"), _result("b")]
    cite_a = (QueryCitation(id="1", result_id="a#0"),)
    right = (EvaluationScore(name="answer_token_f1", value=0.9, passed=True),)
    wrong = (EvaluationScore(name="answer_token_f1", value=0.0, passed=False),)
    ok = _case(["a", "b"], results, top_k=2, answer="yes", citations=cite_a, scores=right)
    assert _classes(ok) == {"a": "found", "b": "found, not cited"}
    bad = _case(["a"], results, top_k=2, answer="no", citations=cite_a, scores=wrong)
    assert _classes(bad) == {"a": "found, answer wrong"}


def test_answer_classes_need_a_case_that_expects_an_answer() -> None:
    """A retrieval benchmark's incidental answer step cites one result: not a miss."""
    cite_a = (QueryCitation(id="1", result_id="a#0"),)
    case = _case(["a", "b"], [_result("a"), _result("b")], top_k=2, citations=cite_a)
    assert _classes(case) == {"a": "found", "b": "found"}


def _report(label: str, results: list[EvaluationCaseResult]) -> EvaluationReport:
    return EvaluationReport(
        report_id=f"r-{label}",
        benchmark=BenchmarkManifest(name="toy"),
        knowledge_base_name=f"kb-{label}",
        recipe_manifest={"name": label},
        query_modes=("bm25",),
        case_results=tuple(results),
        started_at="2026-12-01T00:00:00+00:00",
        finished_at="2026-12-01T00:01:00+00:00",
        metadata={"config": {"top_k": 2}},
    )


def test_report_misses_counts_per_recipe_mode_and_class_and_compare_gives_deltas() -> None:
    docs = [_result("a"), _result("b")]
    a = _report("docs", [_case(["a", "b"], docs, case_id="q1"), _case(["a"], docs, case_id="q2")])
    none = [_result("x")]
    b = _report("chunks", [_case(["a", "b"], none, case_id="q1"), _case(["a"], none, case_id="q2")])
    counts = b.misses()
    assert counts[["recipe", "query_mode", "miss_class", "count"]].values.tolist() == [
        ["chunks", "bm25", "not retrieved", 3]
    ]
    assert b.misses(level="evidence")["miss_class"].tolist() == ["not retrieved"] * 3
    assert miss_line(counts) == "3 misses: 3 not retrieved"
    deltas = compare({"docs": a, "chunks": b}).misses()
    row = deltas.set_index("miss_class").loc["not retrieved"]
    assert (row["count_a"], row["count_b"], row["delta"]) == (0, 3, 3)
    assert delta_sentence(deltas) == "loses 3 evidences to not retrieved"


def test_compare_misses_by_slice() -> None:
    docs, none = [_result("a")], [_result("x")]

    def labelled(case: EvaluationCaseResult, topic: str) -> EvaluationCaseResult:
        return case.model_copy(update={"metadata": {**case.metadata, "labels": {"topic": topic}}})

    a = _report(
        "docs", [labelled(_case(["a"], docs, case_id=f"q{i}"), t) for i, t in enumerate("xy")]
    )
    b = _report(
        "chunks", [labelled(_case(["a"], none, case_id=f"q{i}"), t) for i, t in enumerate("xy")]
    )
    deltas = compare({"docs": a, "chunks": b}).misses(by="topic")
    lost = deltas[deltas["miss_class"] == "not retrieved"]
    assert sorted(lost["topic"]) == ["x", "y"] and lost["delta"].tolist() == [1, 1]


def test_card_figure_and_comparison_view_show_the_classes() -> None:
    docs, none = [_result("a"), _result("b")], [_result("x")]
    recall = (EvaluationScore(name="recall@2", value=0.5),)  # a comparison needs a score
    a = _report("docs", [_case(["a", "b"], docs, case_id="q1", scores=recall)])
    b = _report("chunks", [_case(["a", "b"], none, case_id="q1", scores=recall)])
    assert "bm25</b>: 2 misses: 2 not retrieved" in b._repr_html_()
    fig = b.plot.misses()
    assert fig.layout.barmode == "stack"
    assert [(t.name, list(t.y)) for t in fig.data] == [("not retrieved", [2])]
    comparison = compare({"docs": a, "chunks": b})
    html = comparison._repr_html_()
    assert "Why evidence was missed" in html and "loses 2 evidences to not retrieved" in html
    names = {t.name for t in comparison.plot.misses().data}
    assert names == {"found", "not retrieved"}


def test_the_explorer_filters_cases_by_miss_class() -> None:
    docs, none = [_result("a")], [_result("x")]
    report = _report("mixed", [_case(["a"], docs, case_id="q1"), _case(["a"], none, case_id="q2")])
    explorer = report.explore(miss_class="not retrieved")
    assert explorer.page_rows()["case_id"].tolist() == ["q2"]
    assert explorer.state["miss_class"] == "not retrieved"
    assert explorer.set_filters(miss_class=None).n_matching == 2


def test_the_explorer_payload_shows_a_stage_loss_and_each_stage_rank() -> None:
    from heta_notebook.display._explorer_data import encode_report

    stages = [
        {"stage": "retrieve", "ids": ["b", "x"]},
        {"stage": "rerank", "ids": ["x#0"]},
    ]
    case = _case(["b"], [_result("x")], top_k=1, metadata={"stages": stages})
    payload = encode_report(_report("two-stage", [case]))
    strings = payload["strings"]
    (item,) = payload["cases"]["evidence"][0]
    assert strings[item[6]] == "lost at stage rerank" and item[7] == 1
    assert strings[item[9]] == "retrieve #1 → rerank –"
    assert [strings[j] for j in payload["cases"]["misses"][0]] == ["lost at stage rerank"]
