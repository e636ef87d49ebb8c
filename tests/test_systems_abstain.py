"""Abstentions and skips are first-class: a system abstains on purpose (``Abstain``), answer
metrics score it the SQuAD way, frames and the card count it; a skipped score keeps its reason."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import heta_notebook as hn
from heta_notebook import Abstain, AbstentionAccuracy, HttpSystem, QueryResponse, QueryResult
from heta_notebook.benchmarks._squad import SquadBenchmark, squad2_sample_path
from heta_notebook.evaluators._answer import AnswerContains
from heta_notebook.evaluators._squad import SquadExactMatch, SquadTokenF1
from heta_notebook.schema import BenchmarkCase, BenchmarkExpected
from heta_notebook.systems import normalize_response

WHY = "no passage names it"


@pytest.mark.parametrize(
    "returned",
    [
        Abstain(WHY, results=["d1", "d2"]),
        (Abstain(WHY), ["d1", "d2"]),
        {"abstain": True, "reason": WHY, "results": ["d1", "d2"]},
        {"abstain": WHY, "results": [{"id": "d1"}, {"id": "d2"}]},
        QueryResponse.abstention("m", WHY, [QueryResult(id="d1"), QueryResult(id="d2")]),
    ],
    ids=["Abstain", "pair", "dict", "dict-reason", "QueryResponse"],
)
def test_every_form_of_abstaining_is_one_record(returned) -> None:
    response = normalize_response(returned, "m")
    assert response.abstained and response.abstain_reason == WHY
    assert response.answer is None
    assert [r.id for r in response.results] == ["d1", "d2"]  # what was retrieved is kept
    assert QueryResponse.from_dict(response.to_dict()) == response  # plain data, round trip


def test_an_abstention_without_a_reason_and_a_plain_answer_are_told_apart() -> None:
    assert normalize_response(Abstain(), "m").abstain_reason is None
    assert normalize_response(Abstain(), "m").abstained
    plain = normalize_response({"answer": None, "reason": "x"}, "m")
    assert not plain.abstained and plain.abstain_reason is None
    with pytest.raises(ValueError, match="an abstention has no answer"):
        QueryResponse(mode="m", answer="Paris", metadata={"abstained": True})


def _case(answers: tuple[str, ...], abstain: bool | None) -> BenchmarkCase:
    meta = {} if abstain is None else {"abstain": abstain}
    return BenchmarkCase(
        case_id="c", query="q", expected=BenchmarkExpected(answers=answers, metadata=meta)
    )


def test_answer_metrics_score_an_abstention_the_squad_way() -> None:
    """Official SQuAD 2.0: an unanswerable question's reference is "", so abstaining is the
    right answer (EM = F1 = 1) and abstaining on an answerable one scores 0."""
    abstained = QueryResponse.abstention("m", WHY)
    unanswerable, answerable = _case((), True), _case(("Denver Broncos",), False)
    for metric in (SquadExactMatch(), SquadTokenF1(), AbstentionAccuracy()):
        assert metric.score(unanswerable, abstained).value == 1.0
        assert metric.score(answerable, abstained).value == 0.0
    score = SquadExactMatch().score(unanswerable, abstained)
    assert score.metadata["abstained"] and score.passed
    # the same as the script's empty prediction: a flag changes no number
    empty = QueryResponse(mode="m", answer="")
    for case in (unanswerable, answerable):
        assert (
            SquadTokenF1().score(case, abstained).value == SquadTokenF1().score(case, empty).value
        )


def test_other_answer_metrics_say_the_case_was_abstained_on() -> None:
    score = AnswerContains().score(_case(("Paris",), None), QueryResponse.abstention("m", WHY))
    assert score.value is False and score.reason == f"abstained: {WHY}"
    skipped = AnswerContains().score(_case((), None), QueryResponse.abstention("m", WHY))
    assert skipped.status == "skipped"


def _abstains_on_unanswerable(question: str) -> object:
    """A reader that knows which sample questions have no answer (the test's oracle)."""
    if question in _UNANSWERABLE:
        return Abstain(WHY, results=[])
    return {"answer": _ANSWERS[question], "results": []}


_SAMPLE = SquadBenchmark(squad2_sample_path())
_CASES = _SAMPLE.load().cases[:40]
_UNANSWERABLE = {c.query for c in _CASES if c.expected.metadata.get("abstain")}
_ANSWERS = {c.query: (c.expected.answers or ("",))[0] for c in _CASES}


@pytest.fixture(scope="module")
def report():
    ids = [c.case_id for c in _CASES]
    return hn.run_benchmark(
        benchmark=_SAMPLE,
        recipe=_abstains_on_unanswerable,
        case_ids=ids,
        evaluators=[SquadExactMatch(), AbstentionAccuracy(), AnswerContains()],
        progress=False,
    ).report


def test_a_run_records_abstentions_in_frames_and_on_the_card(report) -> None:
    assert 0 < len(_UNANSWERABLE) < len(_CASES)
    cases = report.frames().cases()
    assert cases["abstained"].sum() == len(_UNANSWERABLE)
    reasons = set(cases.loc[cases["abstained"], "abstain_reason"])
    assert reasons == {WHY}
    assert cases.loc[~cases["abstained"], "abstain_reason"].isna().all()
    summary = report.summary().set_index("score")
    assert summary.loc["squad_exact_match", "mean"] == 1.0  # abstaining there is right
    assert summary.loc["abstention", "mean"] == 1.0
    html = report.card()._repr_html_()
    assert "abstained" in html and f">{len(_UNANSWERABLE)}<" in html


def test_a_skip_reason_is_its_own_column(report) -> None:
    scores = report.frames().scores()
    contains = scores[scores["score"] == "answer_contains"]
    skipped = contains[contains["status"] == "skipped"]
    assert len(skipped) == len(_UNANSWERABLE)  # no expected answers: nothing to compare
    assert set(skipped["skip_reason"]) == {"case has no expected answers"}
    assert contains.loc[contains["status"] != "skipped", "skip_reason"].isna().all()


def test_abstentions_survive_the_columnar_form(report, tmp_path) -> None:
    store = hn.ReportStore(tmp_path)
    store.save(report)
    loaded = store.load(report.knowledge_base_name, report.report_id)
    mine, theirs = report.frames().cases(), loaded.frames().cases()
    assert mine["abstained"].tolist() == theirs["abstained"].tolist()
    assert mine["abstain_reason"].tolist() == theirs["abstain_reason"].tolist()
    assert loaded.frames().abstentions() == report.frames().abstentions()
    skip = loaded.frames().scores()["skip_reason"].dropna()
    assert set(skip) == {"case has no expected answers"}


def test_reason_columns_hold_none_in_memory_and_saved(report, tmp_path) -> None:
    """Rows that did not abstain (or skip) print None, not NaN, and a saved report's frames
    have the same dtypes: pandas 3 would otherwise infer its str dtype (NaN for missing)."""
    store = hn.ReportStore(tmp_path)
    store.save(report)
    loaded = store.load(report.knowledge_base_name, report.report_id)
    for frames in (report.frames(), loaded.frames()):
        cases, scores = frames.cases(), frames.scores()
        for frame, column in ((cases, "abstain_reason"), (scores, "skip_reason")):
            assert frame[column].dtype == object
            assert None in frame[column].tolist() and not frame[column].map(type).eq(float).any()
        answered = cases.loc[~cases["abstained"], ["abstain_reason"]].head(1)
        assert "NaN" not in answered.to_string() and "None" in answered.to_string()
    for name in ("cases", "scores"):
        mine, theirs = getattr(report.frames(), name)(), getattr(loaded.frames(), name)()
        assert mine.dtypes.to_dict() == theirs.dtypes.to_dict()


@contextmanager
def _reader_service() -> Iterator[str]:
    """A loopback reader: abstains (with a reason) on questions it cannot answer."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            question = body["query"]
            if question in _UNANSWERABLE:
                reply = {"abstain": True, "reason": WHY, "results": []}
            else:
                reply = {"answer": _ANSWERS[question], "results": [], "reason": "unused"}
            payload = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/ask"
    finally:
        server.shutdown()
        server.server_close()


def test_an_http_service_abstains_through_its_reply(report) -> None:
    with _reader_service() as url:
        served = hn.run_benchmark(
            benchmark=_SAMPLE,
            recipe=HttpSystem(url),
            case_ids=[c.case_id for c in _CASES],
            evaluators=[SquadExactMatch(), AbstentionAccuracy(), AnswerContains()],
            progress=False,
        ).report
    mine, theirs = served.frames().cases(), report.frames().cases()
    assert mine["abstained"].tolist() == theirs["abstained"].tolist()
    assert mine["abstain_reason"].tolist() == theirs["abstain_reason"].tolist()
    answered = [r.response for r in served.case_results if not r.response.abstained]
    assert all("abstain_reason" not in r.metadata for r in answered)
