"""The live card: while a run goes in a notebook, cases done, errors and the headline score's
running mean per query mode, updated in place (``display(..., display_id=True)``) at the
runner's bounded rate. When the run ends it says so; the report's own card follows."""

from __future__ import annotations

import html
from typing import Any

LIVE_CLASS = "hn-live-card"


class LiveCard:
    """A display handle that re-renders ``running`` (a ``RunningScores``) on ``update()``."""

    def __init__(self, running: Any) -> None:
        from IPython.display import HTML, display

        self.running = running
        self._html = HTML
        self._handle = display(HTML(live_card_html(running)), display_id=True)

    def update(self) -> None:
        """Show the current figures (the runner calls this at a bounded rate)."""
        if self._handle is not None:
            self._handle.update(self._html(live_card_html(self.running)))


def live_card_html(running: Any) -> str:
    """The live card's HTML: a title with done/total and errors, a row per query mode."""
    esc = html.escape
    state = "finished" if running.finished else "running"
    headline = running.headline
    rows = []
    for mode, tally in running.modes.items():
        mean = "–" if tally.mean is None else f"{tally.mean:.3f}"
        rows.append(
            f"<tr><td>{esc(mode)}</td><td>{tally.done}</td><td>{tally.errors}</td>"
            f"<td>{mean}</td></tr>"
        )
    head = f"<th>{esc(headline)} (running mean)</th>" if headline else "<th>score</th>"
    table = (
        "<table><thead><tr><th>mode</th><th>cases</th><th>errors</th>"
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        if rows
        else ""
    )
    return (
        f'<div class="{LIVE_CLASS}" data-done="{running.done}" data-total="{running.total}" '
        f'data-state="{state}" style="font-family:sans-serif;font-size:13px;margin:4px 0">'
        f"<b>{esc(running.label or 'run')}</b> · {state}: "
        f'<span class="hn-live-done">{running.done}</span> of {running.total} case × mode'
        f" · errors: {running.errors}{table}</div>"
    )


__all__ = ["LIVE_CLASS", "LiveCard", "live_card_html"]
