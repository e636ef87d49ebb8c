"""SQuAD's answer metrics, as the official v2.0 evaluation script defines them.

- ``squad_normalize``: lower case, drop punctuation, drop the articles a/an/the, collapse
  whitespace (the script's ``normalize_answer``).
- ``SquadExactMatch`` / ``SquadTokenF1``: best over the reference answers. A question without
  a usable reference (v2's unanswerable ones) has the single reference ``""``, so it scores 1
  exactly when the response abstains (a flagged abstention, no answer, or one that normalises
  to nothing), as in the script. An answerable question answered with nothing scores 0.
- ``AbstentionAccuracy``: 1 when the response abstained exactly when the case expects it.

Which cases expect abstention: ``case.expected.metadata["abstain"]`` (``SquadBenchmark`` sets it
for v2 questions); cases without answers and without that flag are skipped. The script's
HasAns/NoAns split is the case label ``answerable`` (``has_answer`` / ``no_answer``).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from heta_notebook.evaluators._protocol import SyncScorer
from heta_notebook.schema._abstain import abstention_expected
from heta_notebook.schema._records import BenchmarkCase, EvaluationScore, QueryResponse

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def squad_normalize(text: str) -> str:
    """The official script's ``normalize_answer``: lower, no punctuation/articles, one space."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def squad_exact(gold: str, prediction: str) -> int:
    """1 when both normalise to the same text (``compute_exact``)."""
    return int(squad_normalize(gold) == squad_normalize(prediction))


def squad_f1(gold: str, prediction: str) -> float:
    """Token F1 of the normalised texts; an empty side scores 1 only if both are (``compute_f1``)."""
    gold_tokens, pred_tokens = squad_normalize(gold).split(), squad_normalize(prediction).split()
    if not gold_tokens or not pred_tokens:
        return float(gold_tokens == pred_tokens)
    same = sum((Counter(gold_tokens) & Counter(pred_tokens)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def expects_abstention(case: BenchmarkCase) -> bool | None:
    """True/False when the case says whether it expects an abstention, else None."""
    return abstention_expected(case.expected)


def abstained(response: QueryResponse) -> bool:
    """The response gave no answer: a flagged abstention (``Abstain``), None, blank, or text
    that normalises to nothing (the official script's empty prediction)."""
    return response.abstained or not squad_normalize(response.answer or "")


def references(case: BenchmarkCase) -> list[str] | None:
    """The script's gold answers: those that survive normalisation, else ``[""]`` (answers that
    all normalise to nothing, or a case expecting abstention); None when it cannot be scored."""
    golds = [a for a in case.expected.answers if squad_normalize(a)]
    if golds:
        return golds
    return [""] if case.expected.answers or expects_abstention(case) else None


@dataclass(frozen=True)
class _SquadMetric(SyncScorer):
    name: ClassVar[str] = "squad"

    def score(self, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Best over the references, the official way; skipped for cases it cannot score."""
        golds = references(case)
        if golds is None:
            return EvaluationScore.skipped_score(self.name, "case has no expected answers")
        failed = answer_step_error(response)
        if failed is not None:
            return EvaluationScore.error_score(self.name, failed)
        prediction = response.answer or ""
        values = [self._metric(gold, prediction) for gold in golds]
        best = max(range(len(golds)), key=values.__getitem__)
        metadata: dict[str, Any] = {
            "best_answer": golds[best],
            "abstained": abstained(response),
            "expects_abstention": golds == [""],
        }
        return EvaluationScore(
            name=self.name, value=float(values[best]), passed=values[best] == 1, metadata=metadata
        )

    def _metric(self, gold: str, prediction: str) -> float:
        raise NotImplementedError


@dataclass(frozen=True)
class SquadExactMatch(_SquadMetric):
    """SQuAD exact match (0/1), best over references; unanswerable cases reward abstaining."""

    name: ClassVar[str] = "squad_exact_match"

    def _metric(self, gold: str, prediction: str) -> float:
        return float(squad_exact(gold, prediction))


@dataclass(frozen=True)
class SquadTokenF1(_SquadMetric):
    """SQuAD token F1 (0..1), best over references; unanswerable cases reward abstaining."""

    name: ClassVar[str] = "squad_f1"

    def _metric(self, gold: str, prediction: str) -> float:
        return squad_f1(gold, prediction)


@dataclass(frozen=True)
class AbstentionAccuracy(SyncScorer):
    """1 when the response abstained exactly when the case expects it (answered an answerable
    question, abstained on an unanswerable one); skipped when the case does not say."""

    name: ClassVar[str] = "abstention"

    def score(self, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """Compare the response's abstention with the case's expectation."""
        expected = expects_abstention(case)
        if expected is None:
            return EvaluationScore.skipped_score(self.name, "case does not say if it is answerable")
        failed = answer_step_error(response)
        if failed is not None:
            return EvaluationScore.error_score(self.name, failed)
        did = abstained(response)
        metadata = {"abstained": did, "expects_abstention": expected}
        return EvaluationScore(
            name=self.name, value=float(did == expected), passed=did == expected, metadata=metadata
        )


def squad_default_evaluators(version: int = 2, k: int = 5) -> tuple[Any, ...]:
    """EM and F1 (official), evidence recall@k, and for v2 the abstention score."""
    from heta_notebook.evaluators._retrieval import EvidenceRecallAtK

    metrics: Sequence[Any] = (SquadExactMatch(), SquadTokenF1(), EvidenceRecallAtK(k=k))
    return (*metrics, AbstentionAccuracy()) if version >= 2 else tuple(metrics)


class AnswerStepError(RuntimeError):
    """The response's answer step failed (``metadata.answer.error``), so there is nothing to score."""


def answer_step_error(response: QueryResponse) -> AnswerStepError | None:
    """The answer step's failure (``metadata.answer.error``: an HTTP 500, a timeout), or None."""
    step = response.metadata.get("answer")
    error = step.get("error") if isinstance(step, dict) else None
    if not error:
        return None
    message = error.get("message") if isinstance(error, dict) else str(error)
    return AnswerStepError(f"the answer step failed: {message}")


__all__ = [
    "AbstentionAccuracy",
    "AnswerStepError",
    "SquadExactMatch",
    "SquadTokenF1",
    "abstained",
    "answer_step_error",
    "expects_abstention",
    "squad_default_evaluators",
    "squad_exact",
    "squad_f1",
    "squad_normalize",
]
