"""The explorers' cells: texts stored once in a string table, numbers rounded for the page,
and the notes (judge reason, evaluator error, skip reason) that explain a score."""

from __future__ import annotations

import json
import math
from typing import Any

from heta_notebook.schema._status import SKIPPED, status_and_reason

MAX_TEXT = 600  # characters of a result chunk / answer / reason kept (the length is shown)
MAX_META = 1_500  # characters of a JSON metadata block kept


class StringTable:
    """Texts stored once, referenced by position; long texts cut with their length recorded."""

    def __init__(self, limit: int = MAX_TEXT) -> None:
        self.limit = limit
        self.texts: list[str] = []
        self.full_length: dict[str, int] = {}
        self._index: dict[str, int] = {}

    def add(self, text: Any, limit: int | None = None) -> int:
        """Index of ``text`` (-1 for None / empty)."""
        if text is None or text == "":
            return -1
        text = str(text)
        found = self._index.get(text)
        if found is not None:
            return found
        cut = limit if limit is not None else self.limit
        index = len(self.texts)
        self._index[text] = index
        if len(text) > cut:
            self.full_length[str(index)] = len(text)
            text = text[: cut - 1] + "…"
        self.texts.append(text)
        return index


def num(value: Any, digits: int = 4) -> float | None:
    """A rounded finite float for the page (None for missing / text values)."""
    if value is None or isinstance(value, str):
        return None
    value = float(value)
    return round(value, digits) if math.isfinite(value) else None


def json_text(data: Any) -> str | None:
    return json.dumps(data, default=str, ensure_ascii=False, sort_keys=True) if data else None


# Response metadata the explorers already show in their own place: each evidence item's miss
# class and deep rank (its badge) and its rank at every recorded stage (and the trace).
_SHOWN_ELSEWHERE = frozenset(("deep_ranks", "stages"))


def response_meta(response: Any) -> str | None:
    """The response's metadata block for the detail pane, without what is shown elsewhere."""
    if response is None or not response.metadata:
        return None
    return json_text({k: v for k, v in response.metadata.items() if k not in _SHOWN_ELSEWHERE})


def score_note(score: Any) -> str | None:
    """What explains a score: the judge's reason, an evaluator error or a skip reason."""
    return metadata_note(score.metadata)


def metadata_note(metadata: dict[str, Any]) -> str | None:
    """:func:`score_note` from a score's metadata (its status and reason come from it)."""
    code, reason = status_and_reason(metadata)
    return reason or ("skipped" if code == SKIPPED else None)
