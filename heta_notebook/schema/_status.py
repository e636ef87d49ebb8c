"""The status rule (scored / skipped / error) and the one reason rule, for every surface.

A score's status and the text that explains it are functions of its metadata only:
``metadata.error`` wins, then ``metadata.skipped``, else the score counts; the reason is the
error's message, the skip reason, or a judge's ``reason``/``reasoning``/``explanation``.
Records, the columnar form, frames and the explorers all ask this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

Status = Literal["scored", "skipped", "error"]
STATUSES: tuple[Status, Status, Status] = ("scored", "skipped", "error")
SCORED, SKIPPED, ERROR = 0, 1, 2
REASON_KEYS = ("reason", "reasoning", "explanation")
RULE_KEYS = frozenset(("error", "skipped"))
# metadata with none of these keys is "scored" with no reason: a fast path for bulk readers
FLAG_KEYS = frozenset((*RULE_KEYS, *REASON_KEYS))


def status_code(metadata: Mapping[str, Any] | None) -> int:
    """The one scored/skipped/error rule: ``metadata.error`` wins, then ``metadata.skipped``.

    Codes index :data:`STATUSES` (0 scored, 1 skipped, 2 error); only scored values are averaged.
    """
    if not metadata:
        return SCORED
    if metadata.get("error"):
        return ERROR
    return SKIPPED if metadata.get("skipped") else SCORED


def status_codes(metadatas: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """:func:`status_code` of many scores' metadata (int8); the rule runs only where a flag is."""
    mds = np.fromiter(metadatas, dtype=object, count=len(metadatas))
    out = np.zeros(len(mds), dtype=np.int8)
    flagged = np.flatnonzero(~np.fromiter(map(RULE_KEYS.isdisjoint, mds), bool, len(mds)))
    if len(flagged):
        out[flagged] = list(map(status_code, mds[flagged]))
    return out


def status_name(metadata: Mapping[str, Any] | None) -> Status:
    """``"scored"``, ``"skipped"`` or ``"error"`` for a score's metadata (see :func:`status_code`)."""
    return STATUSES[status_code(metadata)]


def status_and_reason(metadata: Mapping[str, Any] | None) -> tuple[int, str | None]:
    """A score's status code and the one reason a surface shows for it: the error message, the
    skip reason (None when none was given), or the judge's reason."""
    code = status_code(metadata)
    if not metadata:
        return code, None
    if code == ERROR:
        error = metadata["error"]
        return code, str(error.get("message") if isinstance(error, dict) else error)
    if code == SKIPPED:
        reason = metadata.get("skip_reason")
        return code, None if reason is None else str(reason)
    return code, judge_reason(metadata)


def judge_reason(metadata: Mapping[str, Any]) -> str | None:
    """The first non-empty ``reason``/``reasoning``/``explanation`` in a score's metadata."""
    for key in REASON_KEYS:
        value = metadata.get(key)
        if value:
            return str(value)
    return None


def reason(metadata: Mapping[str, Any] | None) -> str | None:
    """:func:`status_and_reason`'s reason alone."""
    return status_and_reason(metadata)[1]
