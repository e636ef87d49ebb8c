"""Answer evaluators: normalisation, skips, missing answers, SQuAD token F1 against its reference code."""

from __future__ import annotations

import asyncio
import collections
import re
import string

import pytest

from heta_notebook.evaluators._answer import (
    NO_ANSWER,
    NO_ANSWERS,
    AnswerContains,
    AnswerExactMatch,
    AnswerTokenF1,
    normalize_answer,
)
from heta_notebook.evaluators._protocol import BenchmarkEvaluatorProtocol, EvaluatorSettings
from heta_notebook.schema import BenchmarkCase
from tests._evaluators_helpers import answer_case, response


def score(ev, case, answer):
    return asyncio.run(ev.evaluate(case=case, response=response([], answer=answer)))


# SQuAD v2.0's official evaluation functions, used as the oracle.
def squad_normalize(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(re.compile(r"\b(a|an|the)\b", re.UNICODE), " ", s)
    return " ".join(s.split())


def squad_f1(gold, pred):
    gold_toks, pred_toks = squad_normalize(gold).split(), squad_normalize(pred).split()
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision, recall = num_same / len(pred_toks), num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


PAIRS = [
    ("The Eiffel Tower", "eiffel tower"),
    ("Denver Broncos", "The Denver Broncos won the game."),
    ("an apple a day", "apple, apple; day!"),
    ("1,000 km", "1000 km"),
    ("the", "a"),
    ("Saint-Étienne", "saint étienne"),
    ("x y z", "q r"),
    ("Linda Dessau", "Linda Deßau"),  # lower() keeps ß: F1 0.5, as the official script says
    ("ΌΣΟΣ", "όσος"),  # final sigma: lower() gives σ, the reference keeps ς
]


@pytest.mark.parametrize(("gold", "pred"), PAIRS)
def test_token_f1_equals_squad_reference(gold, pred):
    value = score(AnswerTokenF1(), answer_case(gold), pred).value
    assert value == pytest.approx(squad_f1(gold, pred), abs=1e-12)


def test_token_f1_takes_the_best_expected_answer_and_reports_it():
    s = score(AnswerTokenF1(), answer_case("Paris", "Paris France"), "Paris, France")
    assert s.value == 1.0 and s.metadata["best_answer"] == "Paris France"
    assert s.metadata["precision"] == 1.0 and s.passed is None
    s = score(AnswerTokenF1(settings=EvaluatorSettings(threshold=0.5)), answer_case("w x y z"), "x")
    assert s.value == pytest.approx(0.4) and s.passed is False


def test_exact_match_normalises_case_and_whitespace_and_optionally_squad():
    case = answer_case("The  Eiffel Tower")
    assert score(AnswerExactMatch(), case, "the eiffel\ttower").value is True
    assert score(AnswerExactMatch(), case, "Eiffel Tower.").value is False
    squad = AnswerExactMatch(strip_punctuation=True, strip_articles=True)
    s = score(squad, case, "Eiffel Tower.")
    assert (s.value, s.passed, s.metadata["matched_answers"]) == (True, True, ["The  Eiffel Tower"])


def test_contains_is_loose_and_ignores_answers_that_normalise_to_nothing():
    assert score(AnswerContains(), answer_case("Paris"), "It is PARIS, of course").value is True
    assert score(AnswerContains(), answer_case("Lyon"), "It is Paris").value is False
    only_article = AnswerContains(strip_articles=True)
    assert score(only_article, answer_case("the"), "anything").value is False


@pytest.mark.parametrize("ev", [AnswerContains(), AnswerExactMatch(), AnswerTokenF1()])
def test_no_expected_answers_is_skipped_and_no_answer_scores_zero_with_reason(ev):
    assert isinstance(ev, BenchmarkEvaluatorProtocol)
    skipped = score(ev, BenchmarkCase(case_id="c", query="q"), "anything")
    assert skipped.status == "skipped" and skipped.metadata["skip_reason"] == NO_ANSWERS
    for missing in (None, "   "):
        zero = score(ev, answer_case("x"), missing)
        assert zero.status == "scored" and zero.numeric == 0.0 and zero.reason == NO_ANSWER
    assert ev.name in {"answer_contains", "answer_exact_match", "answer_token_f1"}


def test_batch_equals_per_case_and_names_match_heta():
    cases = [answer_case("Paris"), answer_case("Rome"), BenchmarkCase(case_id="n", query="q")]
    responses = [response([], answer=a) for a in ("paris", "Paris", "x")]
    for ev in (AnswerContains(), AnswerExactMatch(), AnswerTokenF1()):
        single = [
            asyncio.run(ev.evaluate(case=c, response=r))
            for c, r in zip(cases, responses, strict=True)
        ]
        assert ev.evaluate_batch(cases, responses) == single
    assert AnswerContains().name == "answer_contains"
    assert AnswerExactMatch().name == "answer_exact_match"


def test_normalize_answer():
    assert normalize_answer("  The\nCAT ") == "the cat"
    assert normalize_answer("The cat's hat!", punctuation=True, articles=True) == "cats hat"


def test_squad_lower_is_the_default_and_casefold_only_on_request():
    """The official script lower-cases ("Deßau" ≠ "Dessau"); casefold is an explicit option."""
    case = answer_case("Linda Dessau")
    assert score(AnswerTokenF1(), case, "Linda Deßau").value == pytest.approx(0.5)
    assert score(AnswerTokenF1(casefold=True), case, "Linda Deßau").value == 1.0
    assert score(AnswerExactMatch(), case, "linda deßau").value is False
    assert score(AnswerExactMatch(casefold=True), case, "linda deßau").value is True
    assert score(AnswerContains(), answer_case("STRASSE"), "Hauptstraße 1").value is False
    assert score(AnswerContains(casefold=True), answer_case("STRASSE"), "Hauptstraße 1").value
    assert normalize_answer("Deßau") == "deßau"
    assert normalize_answer("Deßau", casefold=True) == "dessau"
