"""Fingerprint of a corpus, so a cached knowledge base is reused only for the same documents."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from heta_notebook.schema._records import BenchmarkDocument


def corpus_hash(documents: Iterable[BenchmarkDocument]) -> str:
    """16 hex digits over every document's id, name, text and metadata, in order."""
    digest = hashlib.sha256()
    for document in documents:
        header = json.dumps(
            [document.document_id, document.name, document.metadata],
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        text = document.read_text()
        for part in (header, str(len(text)), text):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
    return digest.hexdigest()[:16]


__all__ = ["corpus_hash"]
