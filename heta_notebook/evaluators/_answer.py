"""Answer evaluators: does the generated answer contain, equal, or overlap an expected answer.

Text is normalised before comparison: lower-cased with ``str.lower()`` exactly as the official
SQuAD script does ("Deßau" stays "deßau"), whitespace collapsed, optionally without punctuation
and the articles a/an/the (SQuAD's rule). ``casefold=True`` asks for ``str.casefold()`` instead
("deßau" → "dessau", heta-framework's rule).
``AnswerTokenF1`` is SQuAD's token F1 (best over the expected answers) and normalises the
SQuAD way by default. A case with no expected answers gets a skipped score; a response without
an answer scores 0 with a reason; so does an abstention (``Abstain``), whose reason says it
abstained and why (SQuAD's metrics score an abstention as the empty answer instead).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from heta_notebook.evaluators._protocol import EvaluatorSettings, SyncScorer
from heta_notebook.evaluators._squad import answer_step_error
from heta_notebook.schema._records import BenchmarkCase, EvaluationScore, QueryResponse

NO_ANSWERS = "case has no expected answers"
NO_ANSWER = "response has no answer"
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(
    text: str, *, punctuation: bool = False, articles: bool = False, casefold: bool = False
) -> str:
    """Lower-case (SQuAD's ``lower()``; ``casefold=True``: ``casefold()``), collapse whitespace;
    ``punctuation``/``articles=True`` also drop those (SQuAD)."""
    text = text.casefold() if casefold else text.lower()
    if punctuation:
        text = text.translate(_PUNCTUATION)
    if articles:
        text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


@dataclass(frozen=True)
class _AnswerEvaluator(SyncScorer):
    """Shared behaviour: skip without expected answers, 0 without an answer, batch = loop."""

    strip_punctuation: bool = field(default=False, kw_only=True)
    strip_articles: bool = field(default=False, kw_only=True)
    casefold: bool = field(default=False, kw_only=True)
    settings: EvaluatorSettings | None = field(default=None, kw_only=True)

    name: ClassVar[str] = "answer"
    zero: ClassVar[float | bool] = False

    def score(self, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Score one response (``evaluate`` and ``evaluate_batch`` call this)."""
        expected = case.expected.answers
        if not expected:
            return EvaluationScore.skipped_score(self.name, NO_ANSWERS)
        failed = answer_step_error(response)
        if failed is not None:  # an outage is an error with its reason, never an abstention
            return EvaluationScore.error_score(self.name, failed)
        if response.abstained:  # on purpose: wrong when answers are expected, and said so
            why = response.abstain_reason
            reason = f"abstained: {why}" if why else "abstained"
            return self._result(
                self.zero, {"reason": reason, "abstained": True, "matched_answers": []}
            )
        answer = response.answer or ""
        if not answer.strip():
            return self._result(self.zero, {"reason": NO_ANSWER, "matched_answers": []})
        return self._score_answer(answer, expected)

    def normalize(self, text: str) -> str:
        """This evaluator's normal form of ``text``."""
        return normalize_answer(
            text,
            punctuation=self.strip_punctuation,
            articles=self.strip_articles,
            casefold=self.casefold,
        )

    def _score_answer(self, answer: str, expected: Sequence[str]) -> EvaluationScore:
        raise NotImplementedError

    def _result(self, value: float | bool, metadata: dict[str, Any]) -> EvaluationScore:
        """``passed`` is the settings' threshold verdict, else the value itself when boolean."""
        threshold = self.settings.threshold if self.settings else None
        if threshold is not None:
            passed: bool | None = float(value) >= threshold
        else:
            passed = value if isinstance(value, bool) else None
        return EvaluationScore(name=self.name, value=value, passed=passed, metadata=metadata)


@dataclass(frozen=True)
class AnswerContains(_AnswerEvaluator):
    """True when the normalised answer contains any normalised expected answer (loose QA)."""

    name: ClassVar[str] = "answer_contains"

    def _score_answer(self, answer: str, expected: Sequence[str]) -> EvaluationScore:
        actual = self.normalize(answer)
        matched = [a for a in expected if (norm := self.normalize(a)) and norm in actual]
        return self._result(bool(matched), {"matched_answers": matched})


@dataclass(frozen=True)
class AnswerExactMatch(_AnswerEvaluator):
    """True when the normalised answer equals a normalised expected answer (short answers, labels)."""

    name: ClassVar[str] = "answer_exact_match"

    def _score_answer(self, answer: str, expected: Sequence[str]) -> EvaluationScore:
        actual = self.normalize(answer)
        matched = [a for a in expected if self.normalize(a) == actual]
        return self._result(bool(matched), {"matched_answers": matched})


@dataclass(frozen=True)
class AnswerTokenF1(_AnswerEvaluator):
    """SQuAD token F1 against the best-matching expected answer (0..1)."""

    strip_punctuation: bool = field(default=True, kw_only=True)
    strip_articles: bool = field(default=True, kw_only=True)

    name: ClassVar[str] = "answer_token_f1"
    zero: ClassVar[float | bool] = 0.0

    def _score_answer(self, answer: str, expected: Sequence[str]) -> EvaluationScore:
        tokens = self.normalize(answer).split()
        best = max(
            ((token_f1(tokens, self.normalize(a).split()), a) for a in expected),
            key=lambda item: item[0][0],
        )
        (f1, precision, recall), answer_text = best
        metadata = {"best_answer": answer_text, "precision": precision, "recall": recall}
        return self._result(f1, {**metadata, "matched_answers": [answer_text] if f1 else []})


def token_f1(prediction: Sequence[str], truth: Sequence[str]) -> tuple[float, float, float]:
    """SQuAD's token ``(f1, precision, recall)``; two empty token lists count as a match."""
    if not prediction or not truth:
        same = float(list(prediction) == list(truth))
        return same, same, same
    common = sum((Counter(prediction) & Counter(truth)).values())
    if common == 0:
        return 0.0, 0.0, 0.0
    precision, recall = common / len(prediction), common / len(truth)
    return 2 * precision * recall / (precision + recall), precision, recall


__all__ = [
    "AnswerContains",
    "AnswerExactMatch",
    "AnswerTokenF1",
    "normalize_answer",
    "token_f1",
]
