"""Miss classes for a whole report at once equal ``classify_case`` row by row.

``evidence_misses`` classifies the cases the reference rule decides from arrays (a columnar
report's tables, or records' reference keys) and only the rest record by record. Every
column of ``EVIDENCE_COLUMNS`` must equal what ``classify_case`` gives for each case: on
Cranfield runs of the embedded recipes (whole documents and 100-word chunks, three modes, deep
ranks recorded), in memory and saved as columns, and on constructed cases of every class. A
report past the old 20,000-case cap gets its explorer badges from the columns; a saved report's
card reads the miss counts its header keeps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from heta_notebook import BeirBenchmark, Chunking, Recipe, run_benchmark
from heta_notebook.analysis import _misses
from heta_notebook.analysis._misses import (
    EVIDENCE_COLUMNS,
    classify_case,
    evidence_misses,
    requested_top_k,
)
from heta_notebook.display import _card as card
from heta_notebook.display._explorer_data import encode_report
from heta_notebook.reports._folder import report_header, write_report
from heta_notebook.reports._tables import SCORES_SCHEMA
from heta_notebook.schema import (
    BenchmarkEvidence,
    EvaluationError,
    EvaluationReport,
    EvaluationScore,
    QueryCitation,
    QueryTraceEvent,
)
from tests._report_helpers import GroupWriter
from tests.test_misses import DEEP_RANKS, _case, _report, _result

RECIPES = {
    "whole-docs": Recipe(name="whole-docs"),
    "chunks-100": Recipe(name="chunks-100", chunking=Chunking(unit="words", size=100, overlap=20)),
}


def _one_by_one(report: EvaluationReport, k: int | None = None, every: int = 1) -> pd.DataFrame:
    """What ``evidence_misses`` gave before: ``classify_case`` per record, in report order
    (of every ``every``-th record only: the reference is the slow part of these tests)."""
    requested = requested_top_k(report)
    rows = [
        row
        for result in report.case_results[::every]
        for row in classify_case(result, k=k, requested=requested)
    ]
    frame = pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
    for column in ("rank", "document_rank", "chunks", "k"):
        frame[column] = frame[column].astype("Int64")
    return frame


def _columnar(report: EvaluationReport, folder: Path) -> EvaluationReport:
    """``report`` saved in the columnar layout and opened again (records built lazily)."""
    write_report(folder, report)
    return EvaluationReport.load(folder)


# A third of the queries, and the one whose judged document has no text ("not indexed"): every
# class of both recipes in every cut, at a third of the run and the reference's time.
CRANFIELD_CASES = [*(str(i) for i in range(1, 76)), "125"]


def _cranfield_runs(workspace: str) -> dict[str, EvaluationReport]:
    runs = run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipes=RECIPES,
        case_ids=CRANFIELD_CASES,
        query_modes=["full_text_search", "vector_search", "hybrid_search"],
        workspace=workspace,
        progress=False,
    )
    return {name: runs[name] for name in RECIPES}


SAMPLE = 3  # other cuts are checked on every third case result (each mode, every class)


@pytest.fixture(scope="module")
def cranfield_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvaluationReport]:
    return _cranfield_runs(str(tmp_path_factory.mktemp("cranfield")))


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_cranfield_runs_give_the_rows_of_classify_case(
    cranfield_runs: dict[str, EvaluationReport], recipe: str, tmp_path: Path
) -> None:
    report = cranfield_runs[recipe]
    expected = _one_by_one(report)
    assert any("deep_ranks" in r.response.metadata for r in report.case_results)
    classes = set(expected["miss_class"])
    assert {"found", "beyond k", "not retrieved", "not indexed"} <= classes
    assert ("split" in classes) == (recipe == "chunks-100")
    pd.testing.assert_frame_equal(evidence_misses(report), expected)
    saved = _columnar(report, tmp_path / "saved")
    pd.testing.assert_frame_equal(evidence_misses(saved), expected)
    sampled = {(r.case_id, r.query_mode) for r in report.case_results[::SAMPLE]}
    for k in (3, 40):  # another cut: other items found, beyond k or split
        expected = _one_by_one(report, k=k, every=SAMPLE)
        assert {"found", "beyond k", "not retrieved"} <= set(expected["miss_class"])
        assert ("split" in set(expected["miss_class"])) == (recipe == "chunks-100")
        got = evidence_misses(saved, k=k)
        keep = [key in sampled for key in zip(got["case_id"], got["query_mode"], strict=True)]
        pd.testing.assert_frame_equal(got[keep].reset_index(drop=True), expected)


def _every_class() -> list[Any]:
    """The constructed cases of tests/test_misses.py (one or more per class), case ids unique."""
    deep = {
        **DEEP_RANKS,
        "r": {"indexed": True, "chunks": 3, "chunk_rank": None, "cut": True},
        "d": {"indexed": True, "chunks": 3, "chunk_rank": 40, "cut": True},
        "w": {"indexed": True, "chunks": 3, "chunk_rank": None, "cut": False},
    }
    three = [_result(d) for d in ("x", "y", "z")]
    stages = [
        {"stage": "retrieve", "ids": ["a#0", "b#0", "c#0"], "document_ids": ["a", "b", "c"]},
        {"stage": "rerank", "ids": ["x#0", "a#0", "y#0"]},
    ]
    trace = (
        QueryTraceEvent(stage="retrieve", message="bm25", metadata={"ids": ["b", "a"]}),
        QueryTraceEvent(stage="rerank", message="cross-encoder", metadata={"ids": ["a"]}),
    )
    cite_a = (QueryCitation(id="1", result_id="a#0"),)
    right = (EvaluationScore(name="answer_token_f1", value=0.9, passed=True),)
    wrong = (EvaluationScore(name="answer_token_f1", value=0.0, passed=False),)
    ab = [_result("a"), _result("b")]
    failed = EvaluationError(stage="query", error_type="Timeout", message="timed out")
    cases = [
        _case(["a", "b", "c"], [_result(d) for d in ("a", "x", "y", "b", "z")], top_k=5),
        _case(["a", "c"], [_result("a"), _result("x")], top_k=10),  # not retrieved
        _case(["b"], [_result("x"), _result("y"), _result("b", 0), _result("b", 3)], top_k=2),
        _case(["b"], [_result("x"), _result("y"), _result("b", 0)], top_k=2),  # one chunk
        _case(["b", "s", "n", "e", "f"], three, top_k=3, metadata={"deep_ranks": deep}),
        _case(["r", "d", "w"], three, top_k=3, metadata={"deep_ranks": deep}),
        _case(
            ["a", "b", "d"],
            [_result("x"), _result("a"), _result("y")],
            top_k=3,
            metadata={"stages": stages},
        ),
        _case(["a", "b"], [_result("a")], top_k=1, trace=trace),
        _case(["a", "b"], ab, top_k=2, answer="yes", citations=cite_a, scores=right),
        _case(["a"], ab, top_k=2, answer="no", citations=cite_a, scores=wrong),
        _case(["a", "b"], ab, top_k=2, citations=cite_a),  # no answer expected
        _case(["a", "a", "q"], [_result("q", 2), _result("a")]),  # no top_k: k = len
        _case([], ab),  # nothing expected: no rows
    ]
    text = _case(["a"], ab, top_k=1)  # a text item: decided record by record
    expected = {**text.metadata["expected"]}
    expected["evidence"] = [*expected["evidence"], BenchmarkEvidence(text="b").to_dict()]
    cases.append(text.model_copy(update={"metadata": {"expected": expected}}))
    cases.append(_case(["a"], ab, top_k=1).model_copy(update={"response": None, "error": failed}))
    return [c.model_copy(update={"case_id": f"q{i}"}) for i, c in enumerate(cases)]


def test_constructed_cases_of_every_class_give_the_rows_of_classify_case(tmp_path: Path) -> None:
    report = _report("every-class", _every_class())
    expected = _one_by_one(report)
    assert set(expected["miss_class"]) == set(_misses.CLASSES)
    pd.testing.assert_frame_equal(evidence_misses(report), expected)
    saved = _columnar(report, tmp_path / "saved")
    pd.testing.assert_frame_equal(evidence_misses(saved), expected)
    for k in (1, 4):
        pd.testing.assert_frame_equal(evidence_misses(saved, k=k), _one_by_one(report, k=k))
    by = evidence_misses(saved, by="topic")  # slices come from the case metadata columns
    assert by["topic"].eq("(none)").all() and len(by) == len(expected)


def test_only_cases_the_columns_cannot_decide_are_classified_one_by_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    saved = _columnar(_report("every-class", _every_class()), tmp_path / "saved")
    seen: list[str] = []

    def counted(result: Any, **options: Any) -> list[dict[str, Any]]:
        seen.append(result.case_id)
        return classify_case(result, **options)

    monkeypatch.setattr(_misses, "classify_case", counted)
    evidence_misses(saved)
    # stages (metadata, trace), a text item (an answer step is read from the columns)
    assert seen == ["q6", "q7", "q13"]


# --------------------------------------------------------------------------- past the old cap


def _large_report(folder: Path, n: int) -> EvaluationReport:
    """A columnar report of ``n`` case results written straight into its tables: 3 judged
    documents per case, 10 results, top_k 10, deep ranks for every other case."""
    rng = np.random.default_rng(3)
    folder.mkdir(parents=True)
    writer = GroupWriter(folder)
    writer.text_id("a chunk")
    for start in range(0, n, 1000):
        rows = np.arange(start, min(start + 1000, n))
        judged = rows[:, None] * 3 + np.arange(3)  # distinct, never among the other results
        docs = rng.integers(10**6, 10**6 + 300, size=(len(rows), 10))
        docs[:, 4] = judged[:, 0]  # the first judged document found at rank 5
        deep = {"indexed": True, "chunks": 2, "chunk_rank": 50, "document_rank": 30}
        responses = [
            json.dumps(
                {"metadata": {"top_k": 10, **({"deep_ranks": {f"d{j[1]}": deep}} if r % 2 else {})}}
            )
            for r, j in zip(rows.tolist(), judged, strict=True)
        ]
        expected = [
            json.dumps({"expected": {"evidence": [{"reference_id": f"d{d}"} for d in j]}})
            for j in judged
        ]
        ids = [f"d{d}#0" for d in docs.ravel()]
        m, null = len(rows), pa.nulls(len(rows), pa.string())
        writer.add_group(
            {
                "cases": pa.table(
                    {
                        "case_id": [f"q{r}" for r in rows],
                        "query": [f"query {r}" for r in rows],
                        "query_mode": ["bm25"] * m,
                        "latency_ms": np.ones(m),
                        "error": null,
                        "error_type": null,
                        "error_json": null,
                        "has_response": np.ones(m, bool),
                        "response_mode": ["bm25"] * m,
                        "answer": null,
                        "response_json": responses,
                        "n_results": np.full(m, 10, np.int32),
                        "n_scores": np.zeros(m, np.int32),
                        "metadata": expected,
                        "extra": null,
                    }
                ),
                "results": pa.table(
                    {
                        "row": np.repeat(rows, 10).astype(np.int32),
                        "rank": np.tile(np.arange(1, 11, dtype=np.int32), m),
                        "id": ids,
                        "text": np.zeros(10 * m, np.int32),
                        "score": np.ones(10 * m),
                        "kind": ["chunk"] * (10 * m),
                        "source": [json.dumps({"benchmark_document_id": i[:-2]}) for i in ids],
                        "metadata": pa.nulls(10 * m, pa.string()),
                        "extra": pa.nulls(10 * m, pa.string()),
                    }
                ),
                "scores": SCORES_SCHEMA.empty_table(),
            }
        )
    header = EvaluationReport(
        report_id="large",
        benchmark={"name": "synthetic"},
        knowledge_base_name="large-kb",
        query_modes=("bm25",),
        started_at="2026-12-01T00:00:00Z",
        finished_at="2026-12-01T01:00:00Z",
    )
    writer.finish(report_header(header))
    return EvaluationReport.load(folder)


def test_a_report_past_the_old_cap_gets_explorer_badges_from_its_columns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    report = _large_report(tmp_path / "large", 20_001)  # the cap was 20,000 case results

    def refused(*_: Any, **__: Any) -> list[dict[str, Any]]:
        raise AssertionError("a case the columns decide was classified record by record")

    monkeypatch.setattr(_misses, "classify_case", refused)
    payload = encode_report(report, max_cases=50)
    strings = payload["strings"]
    badges = [[strings[j] for j in row] for row in payload["cases"]["misses"]]
    assert len(badges) == 50 and all(badges)  # every case misses 2 of its 3 items
    (found, *_), classes = payload["cases"]["evidence"][0], set()
    assert strings[found[6]] == "found" and found[7] == 5
    for row in badges:
        classes.update(row)
    assert classes <= {"split", "unknown depth"} and "split" in classes
    # written without the header's views (as by hand): past the card's cap, it points there
    assert "Why evidence was missed: report.misses()" in report._repr_html_()


def test_a_saved_report_keeps_its_miss_counts_and_its_card_reads_them(
    cranfield_runs: dict[str, EvaluationReport],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Written with the report, the counts make a stored report's card need no
    classification, whatever its size; they equal what classifying gives."""
    report = cranfield_runs["chunks-100"]
    expected = report.frames().misses()
    saved = _columnar(report, tmp_path / "saved")

    def refused(*_: Any, **__: Any) -> pd.DataFrame:
        raise AssertionError("the card classified a report whose header holds the counts")

    monkeypatch.setattr(_misses, "report_misses", refused)
    pd.testing.assert_frame_equal(saved.frames().misses(), expected)
    html = saved._repr_html_()
    for mode, group in expected.groupby("query_mode", sort=False):
        assert f"<b>{mode}</b>: {_misses.miss_line(group)}" in html
    monkeypatch.setattr(card, "MAX_MISS_CASES", 0)  # the header's counts, whatever the size
    assert _misses.miss_line(expected[expected["query_mode"] == "vector_search"]) in (
        saved._repr_html_()
    )


def test_sources_equal_but_for_a_value_type_are_matched_apart() -> None:
    """Records' reference keys are read once per distinct source: ``1`` and ``True`` (equal
    as dict keys) name different documents ("1", "True"), so they never share keys."""
    from heta_notebook.schema import QueryResult

    one = QueryResult(id="r1", source={"document_id": 1})
    true = QueryResult(id="r2", source={"document_id": True})
    report = _report(
        "types",
        [
            _case(["1", "True"], [one], case_id="q1", top_k=1),
            _case(["1", "True"], [true], case_id="q2", top_k=1),
        ],
    )
    expected = _one_by_one(report)
    assert expected["miss_class"].tolist() == ["found", "unknown depth", "unknown depth", "found"]
    pd.testing.assert_frame_equal(evidence_misses(report), expected)


# --------------------------------------------------------------------------- answer steps


def _cite_variously(question: str, results: tuple[Any, ...]) -> Any:
    """A custom answer step citing its results every way a citation can name one (by
    ``result_id``, by ``id`` alone, by number, past the first results, not at all) and
    abstaining on some questions: what the columns must read as ``classify_case`` does."""
    way = sum(map(ord, question)) % 6
    if way == 0 or not results:
        return None  # abstains
    if way == 1:
        return {"answer": "x", "citations": [QueryCitation(id=results[-1].id)]}  # id alone
    if way == 2:
        return {"answer": "x", "citations": [len(results), 1]}  # numbers: result_id set
    if way == 3:
        return "x", []  # answers citing nothing
    if way == 4:
        return {"answer": "x", "citations": ["no-such-result", results[0].id]}
    return {"answer": "", "citations": [QueryCitation(id="1", result_id=results[-1].id)]}


SQUAD_LIMIT = 40  # questions per run (x 3 modes): every class of the answer step shows


@pytest.fixture(scope="module")
def squad_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvaluationReport]:
    """Notebook 04's recipes on the first questions of the SQuAD sample (answers expected,
    unanswerable questions, abstentions), a custom answer step citing every way, and a chat
    answerer against a loopback server (citing by number, abstaining on some questions)."""
    from heta_notebook import Extractive, SquadBenchmark
    from heta_notebook.kb._answer import ChatAnswer, CustomAnswer
    from tests._judge_server import JudgeServer, Reply

    def chat_reply(request: dict[str, Any]) -> Reply:
        asked = json.dumps(request)
        if sum(map(ord, asked)) % 3 == 0:
            return Reply(content=json.dumps({"answer": None, "citations": []}))
        return Reply(content=json.dumps({"answer": "the answer", "citations": [2, 1]}))

    workspace = tmp_path_factory.mktemp("squad")
    with JudgeServer() as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANSWER_KEY", "sk-test-answer")
        server.route = chat_reply
        recipes = {
            "sentence": Recipe(name="sentence"),
            "phrase": Recipe(name="phrase", answer=Extractive(span="phrase")),
            "cautious": Recipe(name="cautious", answer=Extractive(span="phrase", min_overlap=0.7)),
            "chunks-phrase": Recipe(
                name="chunks-phrase",
                chunking=Chunking(unit="words", size=40, overlap=10),
                answer=Extractive(span="phrase"),
            ),
            "custom": Recipe(name="custom", answer=CustomAnswer.of(_cite_variously)),
            "chat": Recipe(
                name="chat",
                answer=ChatAnswer(
                    model="m",
                    base_url=server.base_url,
                    api_key_env="ANSWER_KEY",
                    cache_dir=str(workspace / "chat-cache"),
                ),
            ),
        }
        runs = run_benchmark(
            benchmark=SquadBenchmark.sample(),
            recipes=recipes,
            limit=SQUAD_LIMIT,
            workspace=str(workspace),
            progress=False,
        )
    return {name: runs[name] for name in recipes}


def test_squad_runs_with_an_answer_step_give_the_rows_of_classify_case(
    squad_runs: dict[str, EvaluationReport],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Every case of every run, in memory and saved, whole and a few rows at a time (a
    subset's answer scores are read from its report), at the run's cut and two others;
    none goes record by record (the evidence is named by reference id, no stages)."""
    seen: list[str] = []
    classes: set[str] = set()
    for name, report in squad_runs.items():
        expected = _one_by_one(report)
        classes |= set(expected["miss_class"])
        assert any(r.response and r.response.citations for r in report.case_results), name
        monkeypatch.setattr(_misses, "classify_case", lambda r, **o: seen.append(r) or [])
        pd.testing.assert_frame_equal(evidence_misses(report), expected)
        saved = _columnar(report, tmp_path / name)
        pd.testing.assert_frame_equal(evidence_misses(saved), expected)
        rows = np.arange(1, len(report.case_results), 4)
        picked = {(report.case_results[i].case_id, report.case_results[i].query_mode) for i in rows}
        keep = [
            key in picked for key in zip(expected["case_id"], expected["query_mode"], strict=True)
        ]
        for source in (report, saved):
            got = evidence_misses(source, rows=rows)
            pd.testing.assert_frame_equal(got, expected[keep].reset_index(drop=True))
        monkeypatch.undo()
        for k in (1, 10):
            pd.testing.assert_frame_equal(evidence_misses(saved, k=k), _one_by_one(report, k=k))
    assert not seen
    assert {"found", "found, not cited", "found, answer wrong", "not retrieved"} <= classes


def _answer_edges() -> list[Any]:
    """Hand-made answer-step cases: how citations name results, which answer score counts."""
    a, b, x = _result("a"), _result("b"), _result("x")
    ab, a1 = [a, b], _result("a", 1)

    def score(name: str, value: Any, passed: bool | None, **meta: Any) -> EvaluationScore:
        return EvaluationScore(name=name, value=value, passed=passed, metadata=meta)

    f1_0 = score("squad_f1", 0.0, False)
    cite = QueryCitation
    cases = [
        _case(["a", "b"], ab, top_k=2, answer="y", citations=(cite(id="a#0"),)),  # id alone
        _case(["a", "b"], ab, top_k=2, answer="y", citations=(cite(id="1", result_id="b#0"),)),
        _case(["a"], ab, top_k=2, answer="y", citations=(cite(id="a#0", result_id="zz"),)),
        _case(["a"], ab, top_k=2, answer="y"),  # no citations
        _case(["a"], ab, top_k=2, answer="", citations=(cite(id="a#0"),), scores=(f1_0,)),
        _case(["a"], [a, x, a1], top_k=2, answer="y", citations=(cite(id="a#1"),)),  # past k
        _case(["a", "b"], [a, x, b], top_k=2, answer="y", citations=(cite(id="b#0"),)),
        _case(["a", "a"], [a, a], top_k=2, answer="y", citations=(cite(id="a#0"),)),  # twice
    ]
    ok = (cite(id="a#0"),)
    for scores in (
        (score("squad_f1", 1.0, True, skipped=True), f1_0),  # skipped: the next counts
        (score("squad_f1", 0.0, False, skipped=True), score("squad_exact_match", 1.0, True)),
        (score("squad_f1", 1.0, True, skipped=True), score("squad_f1", 0.0, False)),  # 1st only
        (score("answer", 0.0, None),),  # passed None, value 0
        (score("answer", False, None),),  # passed None, value False
        (score("answer", 0.5, None),),
        (score("answer", "0", None),),  # a text value is never 0
        (score("answer", 0.0, True),),  # passed decides
        (score("answer_contains", 1.0, False), f1_0),  # the order of ANSWER_SCORES decides
        (score("answer", 0.0, False, skipped=0),),  # a falsy skipped is not skipped
        (score("answer", 0.0, False, error={"message": "down"}),),  # an error counts
        (score("recall", 0.0, False),),  # no answer score
    ):
        cases.append(_case(["a"], ab, top_k=2, answer="y", citations=ok, scores=scores))
    abstained = {"answer": {"answerer": "extractive", "abstained": True}, "abstained": True}
    cases.append(_case(["a"], ab, top_k=2, metadata=abstained))  # abstains, no citation
    cases.append(_case(["a"], ab, top_k=2, citations=ok, metadata={"answer": {}}))  # no text
    no_answer = _case(["a", "b"], ab, top_k=2, citations=ok)  # expects no answer
    cases.append(no_answer.model_copy(update={"scores": (f1_0,)}))
    valued = _case(["a"], ab, top_k=2, answer="3", citations=ok, scores=(f1_0,))
    expected = {**valued.metadata["expected"], "answers": [], "value": 3}
    cases.append(valued.model_copy(update={"metadata": {"expected": expected}}))  # a value
    return [c.model_copy(update={"case_id": f"e{i}"}) for i, c in enumerate(cases)]


def test_hand_made_answer_step_cases_give_the_rows_of_classify_case(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    report = _report("answers", _answer_edges())
    expected = _one_by_one(report)
    assert {"found", "found, not cited", "found, answer wrong"} <= set(expected["miss_class"])
    monkeypatch.setattr(_misses, "classify_case", lambda *_, **__: pytest.fail("one by one"))
    pd.testing.assert_frame_equal(evidence_misses(report), expected)
    saved = _columnar(report, tmp_path / "saved")
    pd.testing.assert_frame_equal(evidence_misses(saved), expected)
    rows = np.arange(0, len(report.case_results), 3)
    picked = {report.case_results[i].case_id for i in rows}
    for source in (report, saved):
        got = evidence_misses(source, rows=rows)
        want = expected[expected["case_id"].isin(picked)].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, want)
    monkeypatch.undo()
    for k in (1, 3):
        pd.testing.assert_frame_equal(evidence_misses(saved, k=k), _one_by_one(report, k=k))
