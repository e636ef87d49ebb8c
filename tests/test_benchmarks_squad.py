"""SquadBenchmark: SQuAD 1.1 and 2.0 files, the shipped sample, bad input named by file and
field, and EM/F1 checked against the official SQuAD v2.0 evaluation script's definitions."""

from __future__ import annotations

import collections
import json
import re
import string
from pathlib import Path

import pytest

import heta_notebook as hn
from heta_notebook.benchmarks._io import BenchmarkFormatError
from heta_notebook.benchmarks._squad import SquadBenchmark, squad2_sample_path
from heta_notebook.evaluators._retrieval import EvidenceRecallAtK
from heta_notebook.evaluators._squad import (
    AbstentionAccuracy,
    SquadExactMatch,
    SquadTokenF1,
    squad_default_evaluators,
)
from heta_notebook.schema import BenchmarkCase, BenchmarkExpected, QueryResponse

# --------------------------------------------------------------------------- the official script
# The definitions of SQuAD 2.0's evaluate-v2.0.py (normalize_answer, get_tokens, compute_exact,
# compute_f1 and the gold-answer rule of get_raw_scores), written out here as the reference.


def official_normalize(s: str) -> str:
    def remove_articles(text):
        regex = re.compile(r"\b(a|an|the)\b", re.UNICODE)
        return re.sub(regex, " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def official_tokens(s: str) -> list[str]:
    return official_normalize(s).split() if s else []


def official_exact(a_gold: str, a_pred: str) -> int:
    return int(official_normalize(a_gold) == official_normalize(a_pred))


def official_f1(a_gold: str, a_pred: str) -> float:
    gold_toks, pred_toks = official_tokens(a_gold), official_tokens(a_pred)
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def official_scores(answers: list[str], prediction: str) -> tuple[int, float]:
    gold_answers = [a for a in answers if official_normalize(a)]
    if not gold_answers:
        gold_answers = [""]  # unanswerable: the only correct prediction is empty
    return (
        max(official_exact(a, prediction) for a in gold_answers),
        max(official_f1(a, prediction) for a in gold_answers),
    )


HAND_MADE = [
    (["Denver Broncos", "Denver Broncos", "Broncos"], "The Denver Broncos!"),
    (["Denver Broncos"], "denver"),
    (["Saint Bernadette Soubirous"], "Bernadette"),
    (["1066"], "in 1066"),
    (["the the a"], "the"),  # a reference that normalises to nothing counts as none
    (["a"], ""),
    ([], ""),  # unanswerable, abstained
    ([], "France"),  # unanswerable, answered
    ([], "The."),  # normalises to nothing: counts as abstaining
    (["France"], ""),  # answerable, abstained
    (["Paris, France", "France"], "france paris"),
    (["Ünïcode Straße"], "ünïcode STRASSE"),  # lower(), not casefold(): no match
    (["rock 'n' roll"], "rock n roll"),
    (["x y z", "x"], "x x y"),
]


@pytest.mark.parametrize(("answers", "prediction"), HAND_MADE)
def test_em_and_f1_match_the_official_script(answers, prediction):
    case = BenchmarkCase(
        case_id="c",
        query="q?",
        expected=BenchmarkExpected(answers=tuple(answers), metadata={"abstain": not answers}),
    )
    response = QueryResponse(mode="m", answer=prediction or None)
    exact, f1 = official_scores(answers, prediction)
    assert SquadExactMatch().score(case, response).value == exact
    assert SquadTokenF1().score(case, response).value == pytest.approx(f1, abs=1e-12)


def test_abstention_score():
    answerable = BenchmarkCase(
        case_id="a",
        query="q",
        expected=BenchmarkExpected(answers=("x",), metadata={"abstain": False}),
    )
    unanswerable = BenchmarkCase(
        case_id="u", query="q", expected=BenchmarkExpected(metadata={"abstain": True})
    )
    said, silent = QueryResponse(mode="m", answer="x"), QueryResponse(mode="m")
    score = AbstentionAccuracy().score
    assert [score(answerable, said).value, score(answerable, silent).value] == [1.0, 0.0]
    assert [score(unanswerable, said).value, score(unanswerable, silent).value] == [0.0, 1.0]
    undecided = BenchmarkCase(case_id="n", query="q", expected=BenchmarkExpected(answers=("x",)))
    assert score(undecided, said).status == "skipped"
    failed = QueryResponse(mode="m", metadata={"answer": {"error": {"message": "HTTP 500"}}})
    assert score(answerable, failed).status == "error"
    assert SquadExactMatch().score(answerable, failed).status == "error"
    assert (
        SquadTokenF1()
        .score(undecided.model_copy(update={"expected": BenchmarkExpected()}), said)
        .status
        == "skipped"
    )


# --------------------------------------------------------------------------- loading


def squad_file(tmp_path: Path, data: object, name: str = "squad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


V2 = {
    "version": "v2.0",
    "data": [
        {
            "title": "Super Bowl 50",
            "paragraphs": [
                {
                    "context": "Super Bowl 50 was won by the Denver Broncos.",
                    "qas": [
                        {
                            "id": "q1",
                            "question": "Who won Super Bowl 50?",
                            "answers": [
                                {"text": "Denver Broncos", "answer_start": 29},
                                {"text": "Denver Broncos", "answer_start": 29},
                                {"text": "Broncos", "answer_start": 36},
                            ],
                            "is_impossible": False,
                        },
                        {
                            "id": "q2",
                            "question": "Who lost Super Bowl 49?",
                            "answers": [],
                            "plausible_answers": [{"text": "Denver Broncos", "answer_start": 29}],
                            "is_impossible": True,
                        },
                    ],
                },
                {"context": "The game was played in California.", "qas": []},
            ],
        }
    ],
}


def test_v2_paragraphs_become_documents_and_questions_cases(tmp_path):
    loaded = SquadBenchmark(squad_file(tmp_path, V2)).load()
    assert [d.document_id for d in loaded.documents] == ["Super_Bowl_50_p0", "Super_Bowl_50_p1"]
    assert loaded.documents[0].text == "Super Bowl 50 was won by the Denver Broncos."
    assert loaded.documents[0].metadata["title"] == "Super Bowl 50"
    won, lost = loaded.cases
    assert won.case_id == "q1" and won.query == "Who won Super Bowl 50?"
    assert won.expected.answers == ("Denver Broncos", "Broncos")
    assert won.expected.evidence[0].reference_id == "Super_Bowl_50_p0"
    assert won.expected.evidence[0].metadata["answer_starts"] == [29, 29, 36]
    assert won.expected.metadata["abstain"] is False
    assert won.labels == {"answerable": "has_answer", "title": "Super Bowl 50"}
    assert lost.expected.answers == () and lost.expected.metadata["abstain"] is True
    assert lost.labels["answerable"] == "no_answer"
    assert lost.metadata["plausible_answers"] == ["Denver Broncos"]
    assert lost.expected.evidence[0].reference_id == "Super_Bowl_50_p0"


def test_v2_default_evaluators_include_abstention(tmp_path):
    names = [e.name for e in SquadBenchmark(squad_file(tmp_path, V2)).evaluators()]
    assert names == ["squad_exact_match", "squad_f1", "evidence_recall@5", "abstention"]


def test_v1_loads_without_abstention(tmp_path):
    v1 = json.loads(json.dumps(V2))
    v1["version"] = "1.1"
    qas = v1["data"][0]["paragraphs"][0]["qas"]
    del qas[1]
    del qas[0]["is_impossible"]
    benchmark = SquadBenchmark(squad_file(tmp_path, v1), name="squad11")
    loaded = benchmark.load()
    assert [c.case_id for c in loaded.cases] == ["q1"]
    assert "abstain" not in loaded.cases[0].expected.metadata
    assert not any(isinstance(e, AbstentionAccuracy) for e in benchmark.evaluators())
    # without a version field, the absence of is_impossible also means 1.1
    del v1["version"]
    assert len(SquadBenchmark(squad_file(tmp_path, v1, "nov.json")).evaluators()) == 3


def test_the_shipped_sample():
    benchmark = hn.SquadBenchmark.sample()
    loaded = benchmark.load()
    assert benchmark.manifest.key == "squad2_sample:2.0:dev"
    assert len(loaded.documents) == 87 and len(loaded.cases) == 626
    labels = collections.Counter(c.labels["answerable"] for c in loaded.cases)
    assert labels == {"has_answer": 293, "no_answer": 333}
    readme = (squad2_sample_path().parent / "README.md").read_text()
    assert "CC BY-SA 4.0" in readme and "Rajpurkar" in readme
    raw = json.loads(squad2_sample_path().read_text())
    assert raw["version"] == "v2.0" and len(raw["data"]) == 2


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("data"), r"data must be a list, got missing"),
        (lambda d: d["data"][0].pop("title"), r"data\[0\]\.title must be non-empty text"),
        (
            lambda d: d["data"][0]["paragraphs"].append([]),
            r"data\[0\]\.paragraphs\[2\] must be an object",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][1].update(context=""),
            r"paragraphs\[1\]\.context must be non-empty text, got empty",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][0].pop("question"),
            r"paragraphs\[0\]\.qas\[0\]\.question must be non-empty text, got missing",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][1].update(id="q1"),
            r"qas\[1\]\.id: duplicate question id 'q1' \(first at data\[0\]\.paragraphs\[0\]\.qas\[0\]\)",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][2].update(
                answer_start="36"
            ),
            r"qas\[0\]\.answers\[2\]\.answer_start must be a non-negative integer",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][0].update(answers=[]),
            r"qas\[0\]\.answers has no answers; set is_impossible",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][1].update(is_impossible="yes"),
            r"qas\[1\]\.is_impossible must be true or false",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][1].update(
                answers=[{"text": d["data"][0]["paragraphs"][0]["context"][:4], "answer_start": 0}]
            ),
            r"qas\[1\]: is_impossible is true but answers are given",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][0].update(
                answer_start=10**6
            ),
            r"qas\[0\]\.answers\[0\]\.answer_start 1000000 \+ its \d+ characters is past the end",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][0].update(text="zz"),
            r"qas\[0\]\.answers\[0\]\.text 'zz' is not the context's text",
        ),
        (lambda d: d.update(version="3.0"), r"version: expected 'v2.0' or '1.1', got '3.0'"),
    ],
)
def test_bad_input_names_file_and_field(tmp_path, mutate, message):
    data = json.loads(json.dumps(V2))
    mutate(data)
    path = squad_file(tmp_path, data)
    with pytest.raises(BenchmarkFormatError, match=message) as caught:
        SquadBenchmark(path).load()
    assert caught.value.file == str(path) and str(path) in str(caught.value)


def test_malformed_json_and_missing_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"data": [\n  {"title": }\n]}', encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match="malformed JSON") as caught:
        SquadBenchmark(bad).load()
    assert caught.value.line == 2
    with pytest.raises(BenchmarkFormatError, match="SQuAD file file not found"):
        SquadBenchmark(tmp_path / "nope.json").load()
    top = squad_file(tmp_path, [1, 2])
    with pytest.raises(BenchmarkFormatError, match="top level must be an object"):
        SquadBenchmark(top).load()


def test_a_run_scores_answers_and_evidence(tmp_path):
    benchmark = SquadBenchmark(squad_file(tmp_path, V2))
    recipe = hn.Recipe(name="phrase", dense=None, hybrid=None, answer=hn.Extractive(span="phrase"))
    result = hn.run_benchmark(
        benchmark=benchmark, recipe=recipe, workspace=tmp_path / "ws", progress=False
    )
    rows = {r.case_id: r for r in result.report.case_results}
    scores = {s.name: s for s in rows["q1"].scores}
    assert rows["q1"].response.answer == "Denver Broncos"
    assert scores["squad_exact_match"].value == 1.0 and scores["squad_f1"].value == 1.0
    assert scores["evidence_recall@5"].value == 1.0 and scores["abstention"].value == 1.0
    lost = {s.name: s for s in rows["q2"].scores}
    assert rows["q2"].response.answer is not None  # an adversarial question fools it
    assert lost["squad_exact_match"].value == 0.0 and lost["abstention"].value == 0.0
    assert isinstance(squad_default_evaluators(2)[2], EvidenceRecallAtK)


def test_a_file_with_no_questions_is_refused_naming_it(tmp_path):
    """Found by the fuzz suite: an empty 'data' gave a 'no cases' error naming no file."""
    import pytest

    from heta_notebook import BenchmarkFormatError, SquadBenchmark

    path = tmp_path / "empty.json"
    path.write_text('{"version": "v2.0", "data": []}', encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match="empty.json.*no cases"):
        SquadBenchmark(path).load()
