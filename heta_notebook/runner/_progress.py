"""A run's progress while it goes: a tqdm.auto bar (done/total, errors, the running headline
score, ETA) and, in a notebook, a live card that fills in as cases finish.

Running figures are kept per query mode (cases done, errors, the headline score's running
mean) in O(1) per case; the bar's text and the live card are refreshed at most every
``REFRESH_SECONDS`` (and once at the end), so a fast run pays for a few renders, not one per
case.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from heta_notebook.schema._construct import LazyScores
from heta_notebook.schema._records import EvaluationCaseResult
from heta_notebook.schema._status import ERROR, status_code

REFRESH_SECONDS = 0.5  # the bounded rate of the bar's postfix and the live card


@dataclass
class ModeTally:
    """Running figures of one query mode: cases done, errors, the headline's sum and count."""

    done: int = 0
    errors: int = 0
    scored: int = 0
    total: float = 0.0

    @property
    def mean(self) -> float | None:
        return self.total / self.scored if self.scored else None


@dataclass
class RunningScores:
    """What the live views show: per mode tallies of the headline score, as cases finish."""

    label: str
    total: int
    headline: str | None
    initial: int = 0
    modes: dict[str, ModeTally] = field(default_factory=dict)
    finished: bool = False

    @property
    def done(self) -> int:
        return self.initial + sum(t.done for t in self.modes.values())

    @property
    def errors(self) -> int:
        return sum(t.errors for t in self.modes.values())

    def mean(self) -> float | None:
        """The headline's running mean over every scored case × mode so far."""
        scored = sum(t.scored for t in self.modes.values())
        return sum(t.total for t in self.modes.values()) / scored if scored else None

    def add(self, result: EvaluationCaseResult) -> bool:
        """Count one finished case; True when it failed (a query error or an error score)."""
        tally = self.modes.setdefault(result.query_mode, ModeTally())
        tally.done += 1
        failed = result.error is not None
        scores = result.scores
        if isinstance(scores, LazyScores):  # a row of its batch's columns: no record built
            summaries = scores.summaries()
        else:
            summaries = ((s.name, s.numeric, status_code(s.metadata) == ERROR) for s in scores)
        for name, value, error in summaries:
            failed = failed or error
            if name == self.headline and value is not None:
                tally.scored += 1
                tally.total += value
        tally.errors += failed
        return failed


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where a live card can be shown and updated)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the notebook extra
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class RunProgress:
    """Counts finished cases, errors and the running headline score on a bar (and a live card
    in a notebook); does nothing when disabled."""

    def __init__(
        self,
        *,
        total: int,
        initial: int = 0,
        desc: str = "",
        enabled: bool = True,
        headline: str | None = None,
        live: bool | None = None,
        modes: Sequence[str] = (),
    ):
        self.running = RunningScores(label=desc, total=total, headline=headline, initial=initial)
        for mode in modes:  # rows in the run's mode order, not in the order cases finish
            self.running.modes[mode] = ModeTally()
        self._bar: Any = None
        self._card: Any = None
        self._next = 0.0
        if enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, initial=initial, desc=desc, unit="case", leave=True)
            self._bar.set_postfix(errors=0, refresh=False)
            if live if live is not None else in_notebook():
                from heta_notebook.display._live_card import LiveCard

                self._card = LiveCard(self.running)

    @property
    def errors(self) -> int:
        return self.running.errors

    def update(self, result: EvaluationCaseResult) -> None:
        """Advance by one finished case; refresh the texts at most every REFRESH_SECONDS."""
        if self._bar is None:  # no bar, nothing to show: skip the scan of every score
            return
        self.running.add(result)
        self._bar.update(1)
        now = time.monotonic()
        if now >= self._next:
            self._next = now + REFRESH_SECONDS
            self._refresh()

    def _refresh(self) -> None:
        postfix: dict[str, Any] = {"errors": self.running.errors}
        mean = self.running.mean()
        if mean is not None and self.running.headline:
            postfix[self.running.headline] = f"{mean:.3f}"
        self._bar.set_postfix(postfix, refresh=False)
        if self._card is not None:
            self._card.update()

    def close(self) -> None:
        """Finish the bar (left on screen, like any tqdm bar) and the live card."""
        if self._bar is not None:
            self.running.finished = True
            self._refresh()
            self._bar.close()
