"""The status rule (scored / skipped / error) and the one reason rule, for every surface.

A score's status and the text that explains it are functions of its metadata only:
``metadata.error`` wins, then ``metadata.skipped``, else the score counts; the reason is the
error's message, the skip reason, or a judge's ``reason``/``reasoning``/``explanation``.
Records, the columnar form, frames and the explorers all ask this module. The depth rule
(scores cut deeper than the run's ``top_k``) lives here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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


# -- the depth rule: scores that look deeper than the run retrieved (``beir_ndcg@100`` on
# ``top_k=10`` results). The runner records them (``report.metadata["deeper_than_top_k"]``:
# score name -> its k) and warns when the run starts; the card, comparisons and the CLI say
# so in one line (``depth_line``). Such a score is computed on the results there are, as
# trec_eval computes it, but it is not the BEIR figure of the same name.

KEY = "deeper_than_top_k"


class DepthWarning(UserWarning):
    """Scores cut deeper than the results a query asked for (the CLI says it its own way)."""


def deeper_scores(evaluators: Iterable[Any], top_k: int) -> dict[str, int]:
    """Score name → k for the evaluators that cut at a ``k`` deeper than ``top_k``."""
    found = {}
    for evaluator in evaluators:
        k = getattr(evaluator, "k", None)
        if isinstance(k, int) and not isinstance(k, bool) and k > top_k:
            found[str(evaluator.name)] = k
    return found


def depth_line(metadata: Mapping[str, Any], how: str = "top_k={k}") -> str | None:
    """``"5 scores cut deeper than the 10 results each query asked for: ..."``, or None when
    every score's k is within the run's ``top_k``; ``how`` says how to ask for ``k`` results."""
    deeper = metadata.get(KEY)
    config = metadata.get("config")
    top_k = config.get("top_k") if isinstance(config, Mapping) else None
    if not isinstance(deeper, Mapping) or not deeper or not isinstance(top_k, int):
        return None
    names = sorted(deeper, key=lambda name: (deeper[name], name))
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    one = len(names) == 1
    return (
        f"{len(names)} score{'' if one else 's'} cut deeper than the {top_k} results each "
        f"query asked for: {shown} {'is' if one else 'are'} computed on those {top_k}, not "
        f"as deep as {'its name says' if one else 'their names say'}; run with "
        f"{how.format(k=max(deeper.values()))} for {'it' if one else 'them'}"
    )
