"""Texts shared by the explorer payloads of one kernel session (or of one standalone page).

Each payload has its own string table (``explorer_data.StringTable``), so reports on the same
corpus repeat the same document texts. :meth:`TextPool.share` moves a payload's table into
immutable, packed **chunks**, each holding only texts no earlier chunk holds, and leaves in the
payload ``texts``: the chunks it reads (model references) and, per entry of its own table, the
position of that text in the concatenation of those chunks (delta-coded, so the common runs
of +1 gzip to almost nothing). ``full_length`` (few entries) stays in the payload. The page
rebuilds the very same ``strings`` from them (``resolveTexts`` in ``assets/explorer.js``;
:func:`resolve` here), so every index in the payload, and in details fetched later, keeps its
meaning. A payload without ``texts`` (saved before this existed) is read as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np


class TextPool:
    """The chunks written so far and where each text is; ``new_chunk`` stores one chunk
    (packed, as a widget or a page's model) and returns its reference ("IPY_MODEL_<id>")."""

    def __init__(self, new_chunk: Callable[[dict[str, Any]], str]) -> None:
        self._new_chunk = new_chunk
        self._where: dict[str, tuple[int, int]] = {}  # text -> (chunk, position in it)
        self._refs: list[str] = []
        self._sizes: list[int] = []
        self._chunks: dict[str, dict[str, Any]] = {}  # reference -> chunk (for resolve)
        self._lock = threading.Lock()  # payloads are built in several threads

    def share(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` with its string table replaced by ``texts`` (adding one chunk for the
        texts no chunk holds yet); a payload without a table is returned as it is."""
        if "strings" not in payload:
            return payload
        keys = payload["strings"]
        with self._lock:
            self._add([k for k in dict.fromkeys(keys) if k not in self._where])
            places = [self._where[k] for k in keys]
            used = sorted({chunk for chunk, _ in places})
            starts = np.cumsum([0, *(self._sizes[c] for c in used)])[:-1].tolist()
            offsets = dict(zip(used, starts, strict=True))
            chunks = [self._refs[c] for c in used]
        positions = np.fromiter((offsets[c] + p for c, p in places), np.int64, len(places))
        rest = {k: v for k, v in payload.items() if k != "strings"}
        return {**rest, "texts": {"chunks": chunks, "refs": np.diff(positions, prepend=0).tolist()}}

    def _add(self, keys: list[str]) -> None:
        """One new chunk holding the texts ``keys`` (none when empty); called under the lock."""
        if not keys:
            return
        chunk = {"strings": keys}
        ref = self._new_chunk(chunk)
        number = len(self._refs)
        self._where.update({key: (number, i) for i, key in enumerate(keys)})
        self._refs.append(ref)
        self._sizes.append(len(keys))
        self._chunks[ref] = chunk

    def resolve(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A payload of this pool with its own string table back (tests, debugging)."""
        return resolve(payload, self._chunks.__getitem__)


def resolve(payload: dict[str, Any], chunk_of: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """``payload`` with ``strings`` rebuilt from its ``texts`` (what the page does);
    ``chunk_of`` gives a chunk (``{"strings": [...]}``) by its reference."""
    texts = payload.get("texts")
    if texts is None:
        return payload
    strings = [text for ref in texts["chunks"] for text in chunk_of(ref)["strings"]]
    positions = np.cumsum(np.asarray(texts["refs"], dtype=np.int64)).tolist()
    rest = {k: v for k, v in payload.items() if k != "texts"}
    return {**rest, "strings": [strings[p] for p in positions]}


__all__ = ["TextPool", "resolve"]
