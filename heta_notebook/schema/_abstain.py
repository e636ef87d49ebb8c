"""``Abstain``: what a system returns to abstain, a plain record beside the report's records;
the one rule for a response that abstained (``abstention_of``) and the one for a case that
expects an abstention (``abstention_expected``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Abstain:
    """What a system returns to abstain: no answer, on purpose, and why.

    ``return Abstain("no passage mentions the launch date")`` (or ``Abstain(reason,
    results=hits)`` to keep what was retrieved, or ``(Abstain(reason), hits)``). The response
    is recorded as an abstention: SQuAD-style answer metrics score it as the empty answer
    (right for an unanswerable question, wrong for an answerable one), and frames, the card
    and the explorers show it as "abstained: reason" rather than as a missing answer.
    """

    reason: str | None = None
    results: Sequence[Any] = ()


ABSTAIN_EXPECTED = "abstain"  # expected.metadata key: the right answer is to abstain


def abstention_expected(expected: Any) -> bool | None:
    """Whether a case's right answer is to abstain (SQuAD 2.0's unanswerable questions:
    ``expected.metadata["abstain"]``), from its ``BenchmarkExpected``, that record's stored
    dict, or None; None when it does not say."""
    if isinstance(expected, Mapping):
        metadata = expected.get("metadata")
    else:
        metadata = getattr(expected, "metadata", None)
    flag = metadata.get(ABSTAIN_EXPECTED) if isinstance(metadata, Mapping) else None
    return None if flag is None else bool(flag)


__all__ = ["ABSTAIN_EXPECTED", "Abstain", "abstention_expected"]


ABSTAINED = "abstained"  # metadata key: the system chose not to answer (True)
ABSTAIN_REASON = "abstain_reason"  # metadata key: why (free text, optional)
ANSWER_STEP_ABSTAINED = "the answer step found no answer"  # the embedded step's default reason


def abstention_of(metadata: Mapping[str, Any]) -> tuple[bool, str | None]:
    """The one abstention rule, from a response's metadata: ``abstained`` is True (a
    system's ``Abstain``), or the embedded answer step abstained without failing
    (``metadata["answer"]["abstained"]``); and the reason given, if any."""
    if metadata.get(ABSTAINED) is True:
        return True, _text_or_none(metadata.get(ABSTAIN_REASON))
    step = metadata.get("answer")
    if isinstance(step, Mapping) and step.get("abstained") and not step.get("error"):
        return True, _text_or_none(step.get("reason")) or ANSWER_STEP_ABSTAINED
    return False, None


def _text_or_none(value: Any) -> str | None:
    return None if value is None or str(value).strip() == "" else str(value)
