"""A tqdm.auto bar per run: done/total, errors so far, ETA (a widget in Jupyter)."""

from __future__ import annotations

from typing import Any

from heta_notebook.schema._records import EvaluationCaseResult
from heta_notebook.schema._status import ERROR, status_code


class RunProgress:
    """Counts finished cases and errors on a bar; does nothing when disabled."""

    def __init__(self, *, total: int, initial: int = 0, desc: str = "", enabled: bool = True):
        self.errors = 0
        self._bar: Any = None
        if enabled:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, initial=initial, desc=desc, unit="case", leave=True)
            self._bar.set_postfix(errors=0, refresh=False)

    def update(self, result: EvaluationCaseResult) -> None:
        """Advance by one finished case; show the error count when it changes."""
        if self._bar is None:  # no bar, nothing to show: skip the scan of every score
            return
        failed = result.error is not None or any(
            status_code(s.metadata) == ERROR for s in result.scores
        )
        if failed:
            self.errors += 1
            self._bar.set_postfix(errors=self.errors, refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        """Finish the bar (left on screen, like any tqdm bar)."""
        if self._bar is not None:
            self._bar.close()
