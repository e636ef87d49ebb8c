"""How a generated benchmark was made: the manifest saved beside it as ``generation.json``.

Method, seed, parameters, the corpus fingerprint, model and prompt hash (LLM methods), and the
filter counts (generated, kept, dropped per reason, every drop with its reason), plus the
review's counts once a person has looked. No clock time is stored, so the same seed writes the
same bytes. ``run_identity`` is the runner's hook: runs on a generated benchmark carry the
manifest's hash in their fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import Field

from heta_notebook.schema._records import Record

MANIFEST_FILE = "generation.json"
REVIEW_FILE = "review.json"


class GenerationManifest(Record):
    """What made a generated benchmark and what its filters kept; saved as ``generation.json``."""

    method: str
    seed: int
    parameters: dict[str, Any] = Field(default_factory=dict)
    corpus_fingerprint: str
    documents: int
    model: str | None = None
    prompt_hash: str | None = None
    counts: dict[str, Any] = Field(default_factory=dict)
    drops: tuple[dict[str, Any], ...] = ()
    usage: dict[str, Any] = Field(default_factory=dict)
    review: dict[str, int] = Field(default_factory=dict)

    @property
    def digest(self) -> str:
        """A hash of everything above: two manifests with one digest made the same benchmark."""
        return hashlib.sha256(canonical_json(self.to_dict()).encode("utf-8")).hexdigest()

    def with_review(
        self, decisions: Mapping[str, Mapping[str, Any]], cases: int
    ) -> GenerationManifest:
        """This manifest counting a review's ``decisions`` over ``cases`` generated cases."""
        tally = Counter(str(d.get("decision")) for d in decisions.values())
        edited = sum(1 for d in decisions.values() if d.get("query"))
        review = {
            "accepted": tally.get("accept", 0),
            "rejected": tally.get("reject", 0),
            "edited": edited,
            "pending": cases - tally.get("accept", 0) - tally.get("reject", 0),
        }
        return self.model_copy(update={"review": review})


def counts_of(generated: int, kept: int, drops: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"generated", "kept", "dropped": {reason: n}}``; generated = kept + every drop."""
    by_reason = Counter(str(d["reason"]) for d in drops)
    return {"generated": generated, "kept": kept, "dropped": dict(sorted(by_reason.items()))}


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces-dependent floats: the bytes hashes are made of."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def text_hash(text: str) -> str:
    """sha256 of ``text`` (prompts, corpora), as hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def corpus_fingerprint(documents: Iterable[tuple[str, str]]) -> str:
    """A hash of the corpus's ``(document id, text)`` pairs, independent of their order."""
    digest = hashlib.sha256()
    for document_id, text in sorted(documents):
        digest.update(f"{len(document_id)}:{document_id}{len(text)}:{text}".encode())
    return digest.hexdigest()


def run_identity(manifest: Any) -> dict[str, Any]:
    """The runner's fingerprint hook: ``{"generated": digest}`` for a generated benchmark."""
    generation = getattr(manifest, "metadata", {}).get("generation")
    if not isinstance(generation, Mapping):
        return {}
    return {"generated": hashlib.sha256(canonical_json(dict(generation)).encode()).hexdigest()}


__all__ = [
    "MANIFEST_FILE",
    "REVIEW_FILE",
    "GenerationManifest",
    "canonical_json",
    "corpus_fingerprint",
    "counts_of",
    "run_identity",
    "text_hash",
]
