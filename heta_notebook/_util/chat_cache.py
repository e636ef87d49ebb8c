"""A folder of past chat replies (judges and the chat answer step), so re-running a notebook
neither re-bills nor changes scores.

One JSON file per request, named by the sha256 of what decides the reply: model, prompt
version, the full rendered messages, temperature and max_tokens. Entries hold the raw reply
and its token usage (never the API key); the judge re-parses them on a hit. Writes are
atomic, so a crash or two processes writing at once never leave a torn entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from heta_notebook._util.paths import atomic_write_text, safe_join, safe_name
from heta_notebook._util.sums import seal, unseal


class _HasCacheDir(Protocol):
    """What ``in_store`` needs of a ``ReportStore`` (kept structural: ``_util`` imports none of ours)."""

    def cache_dir(self, namespace: str) -> Path: ...


CACHE_NAMESPACE = "judge"
CACHE_FORMAT = 1


def cache_key(
    *,
    model: str,
    prompt_version: str,
    messages: Sequence[Mapping[str, str]],
    temperature: float,
    max_tokens: int,
) -> str:
    """The sha256 (hex) of everything that decides a judge's reply."""
    payload = {
        "format": CACHE_FORMAT,
        "model": model,
        "prompt_version": prompt_version,
        "messages": [dict(m) for m in messages],
        "temperature": temperature,
        "max_tokens": max_tokens,
    }
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_cache_dir() -> Path:
    """``$HETA_JUDGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/heta_notebook/judge`` (``~/.cache/...``)."""
    explicit = os.environ.get("HETA_JUDGE_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(base).expanduser() / "heta_notebook" / CACHE_NAMESPACE


class ChatCache:
    """Chat replies stored as ``{folder}/{key[:2]}/{key}.json`` (judges and answer steps alike)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder).expanduser()

    @classmethod
    def in_store(cls, store: _HasCacheDir) -> ChatCache:
        """The cache inside a ReportStore (``_heta/cache/judge``), next to the reports."""
        return cls(store.cache_dir(CACHE_NAMESPACE))

    def __repr__(self) -> str:
        return f"ChatCache({str(self.folder)!r})"

    def path(self, key: str) -> Path:
        """Where the entry for ``key`` lives (the key must be a hex digest)."""
        if len(key) < 16 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"judge cache keys are sha256 hex digests, got {key!r}")
        return safe_join(self.folder, safe_name(key[:2]), safe_name(f"{key}.json"))

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None when missing or unreadable: a corrupt entry (not JSON,
        a wrong sum, another key's) is a miss, so the reply is asked again and rewritten."""
        try:
            entry, _ = unseal(self.path(key).read_bytes())
        except OSError:
            return None
        if entry is None or entry.get("key", key) != key:
            return None  # unsealed entries of earlier versions are read as they are
        if not isinstance(entry.get("reply"), str):
            return None
        return entry

    def put(self, key: str, entry: Mapping[str, Any]) -> Path:
        """Store ``entry`` atomically, sealed with its sum, and return its path."""
        path = self.path(key)
        sealed = seal({"key": key, **entry})
        atomic_write_text(path, json.dumps(sealed, ensure_ascii=False, indent=2))
        return path

    def __len__(self) -> int:
        return sum(1 for _ in self.folder.glob("??/*.json")) if self.folder.is_dir() else 0

    def clear(self) -> int:
        """Delete every entry; return how many were removed."""
        removed = 0
        for path in self.folder.glob("??/*.json") if self.folder.is_dir() else ():
            path.unlink(missing_ok=True)
            removed += 1
        return removed


__all__ = ["CACHE_NAMESPACE", "ChatCache", "cache_key", "default_cache_dir"]
