"""The options both explorers share: their names, their checks and the one error they raise.

``report.explore(...)`` and ``comparison.explore(...)`` take explicit keywords; the filters
with one meaning in both have one name in both (``label``, ``score``, ``search``), and both
have ``set_filters``, ``select`` and ``page_rows``. A value the data does not have (a mode, a
score, a label, a filter) raises :class:`ExplorerOptionError` naming what there is, instead of
showing an empty list.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

VERDICTS = ("any", "passed", "failed")
MAX_LISTED = 12  # choices named in an error; the rest counted


class ExplorerOptionError(ValueError, KeyError):
    """An explorer option names something the data does not have (a ValueError; also a
    KeyError, which the comparison explorer raised before)."""

    __str__ = ValueError.__str__  # KeyError's str() would quote the message


def check_choice(what: str, value: Any, choices: Iterable[Any], where: str) -> None:
    """Raise :class:`ExplorerOptionError` unless ``value`` is one of ``choices``."""
    options = [str(c) for c in choices]
    if value in options:
        return
    listed = ", ".join(options[:MAX_LISTED]) or "none"
    more = f" (+{len(options) - MAX_LISTED} more)" if len(options) > MAX_LISTED else ""
    raise ExplorerOptionError(f"unknown {what} {value!r}: {where} has {listed}{more}")


def check_keys(given: Iterable[str], known: Iterable[str], method: str) -> None:
    """A TypeError naming the unknown keyword arguments of ``method`` and the known ones."""
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise TypeError(
            f"{method}() got unknown option(s) {', '.join(unknown)}; "
            f"it takes {', '.join(sorted(known))}"
        )


__all__ = ["VERDICTS", "ExplorerOptionError", "check_choice", "check_keys"]
