"""Sums for the JSON files we write, so any changed byte is detected on read.

Small objects (a store's ``summary.json`` listing rows, cache entries) carry the sha256 of
their own canonical JSON: ``seal(obj)`` adds the sum; ``unseal(text)`` returns ``(obj, None)``
when the sum holds, ``(obj, NO_SUM)`` for an object written before sums (unchecked: the caller
decides), or ``(None, problem)`` naming what is wrong (not JSON, not an object, a wrong sum).
A reader then rebuilds the file from its source (the report) instead of trusting it.

Files of other kinds (a knowledge base's ``.npy`` arrays) are summed whole
(:func:`file_sha256`); the sums go into a sealed JSON object that names them.

Large JSON texts (heta's ``report.json``) are sealed as bytes, without parsing them again:
``seal_text`` appends a last member ``"_sha256"`` holding the sha256 of the text without it,
and ``unseal_text`` checks and removes it. Readers that ignore unknown keys (heta-framework
writes this layout and never reads it back) see one more key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SUM_KEY = "_sha256"
NO_SUM = "no checksum"


def _digest(obj: dict[str, Any]) -> str:
    body = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(body.encode("ascii")).hexdigest()


def seal(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with the sha256 of its canonical JSON under ``_sha256`` (JSON round-trips
    floats exactly, so a reader recomputes the same sum)."""
    clean = json.loads(json.dumps({k: v for k, v in obj.items() if k != SUM_KEY}, default=str))
    return {**clean, SUM_KEY: _digest(clean)}


def unseal(text: str | bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The object in sealed JSON ``text`` and None, or None and what is wrong with it."""
    try:
        obj = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"not valid JSON ({exc})"
    if not isinstance(obj, dict):
        return None, "not a JSON object"
    given = obj.pop(SUM_KEY, None)
    if given is None:
        return obj, NO_SUM
    if given != _digest(obj):
        return None, "its checksum does not match its content"
    return obj, None


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes (read in 1 MiB blocks: a large array is never held)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# the last member; what follows its closing brace is not data (a newline), so not checked
_TEXT_SUM = re.compile(rb',\n  "_sha256": "([0-9a-f]{64})"\n}[\s\S]{0,4}\Z')


def seal_text(text: str) -> str:
    """JSON object text written with an indent of 2 (it ends in ``\\n}``), with its sum as
    its last member."""
    body = text.rstrip()
    if not body.endswith("\n}"):
        raise ValueError("seal_text takes a JSON object written with indent=2")
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return f'{body[:-2]},\n  "{SUM_KEY}": "{digest}"\n}}\n'


def damaged_sum_key(keys: Iterable[str]) -> bool:
    """Whether one of ``keys`` is ``_sha256`` or one changed character from it: the sum member
    of a sealed text that ``unseal_text`` could not read (a flipped bit in its key or digest)."""
    return any(
        len(key) == len(SUM_KEY) and sum(a != b for a, b in zip(key, SUM_KEY, strict=True)) <= 1
        for key in keys
    )


def unseal_text(data: bytes) -> tuple[bytes, str | None]:
    """``data`` without its sum member and None when the sum holds; ``data`` and NO_SUM when
    it has none (written before sums, or by heta-framework); ``data`` and the problem when
    the sum does not match."""
    found = _TEXT_SUM.search(data, max(0, len(data) - 128))
    if found is None:
        return data, NO_SUM
    body = data[: found.start()] + b"\n}"
    if hashlib.sha256(body).hexdigest() != found.group(1).decode("ascii"):
        return data, "its checksum does not match its content"
    return body, None


__all__ = [
    "NO_SUM",
    "SUM_KEY",
    "damaged_sum_key",
    "file_sha256",
    "seal",
    "seal_text",
    "unseal",
    "unseal_text",
]
