"""``Abstain``: what a system returns to abstain, a plain record beside the report's records."""

from __future__ import annotations

from collections.abc import Sequence
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


__all__ = ["Abstain"]
