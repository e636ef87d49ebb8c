"""Which retrieved result matches which expected evidence, and which document a chunk came from.

The one place for evidence matching and chunk → document mapping. Evaluators,
frames and explorers all call these functions so a report is read the same way everywhere.

Matching an evidence item against one result tries, in order:

1. **locator** (``document_id``, ``source_key`` / ``object_key``, ``source_key_prefix``,
   ``page_index``, ``chunk_id`` or any other source field, singular or Heta's plural forms such
   as ``document_ids``, ``page_indices``, ``chunk_ids``). A locator *decides* when the result
   carries every field it names: all equal → match, any different → no match. When the result
   lacks some of those fields the locator cannot decide and the next rule is tried.
2. **reference_id**: the result's id or a document/source key it names (``matched_by``
   ``"reference_id"``), or the benchmark document the chunk maps to (``"document"``).
3. **text**: casefolded, whitespace-normalised containment in either direction.

A result maps to a document the same way for every metric: ``benchmark_document_id`` /
``beir_document_id`` / a raw key / ``document_id`` in its source or metadata, else its id
when that names a benchmark document, else ``doc`` for a ``doc#n`` chunk id
(:func:`id_document`). ``systems`` stamps such results with ``benchmark_document_id`` before
they are scored; BEIR metrics and evidence matching also read unstamped ones that way.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal

import numpy as np

from heta_notebook.reports._lazy_results import LazyResults
from heta_notebook.schema._records import BenchmarkEvidence, QueryResult

MatchedBy = Literal["locator", "reference_id", "text", "document"]

_DOCUMENT_ID_KEYS = ("benchmark_document_id", "beir_document_id")
_RAW_KEY_FIELDS = ("source_key", "object_key")
_OTHER_ID_FIELDS = frozenset(
    ("beir_document_id", "benchmark_document_ids", "beir_document_ids", "origin")
)
_PLURALS = {
    "document_id": ("document_ids",),
    "source_key": ("source_keys", "object_key", "object_keys"),
    "object_key": ("object_keys", "source_key", "source_keys"),
    "page_index": ("page_indices", "page_indexes", "pages"),
    "chunk_id": ("chunk_ids",),
}


@dataclass(frozen=True)
class EvidenceMatch:
    """How one expected evidence item fared against a ranked result list."""

    index: int
    label: str
    matched: bool
    rank: int | None
    result_id: str | None
    matched_by: MatchedBy | None
    relevance: int
    reference_id: str | None = None


# --------------------------------------------------------------------------- chunk → document


def document_ids(result: QueryResult) -> tuple[str, ...]:
    """The benchmark document ids a result comes from (usually one), most specific first.

    ``benchmark_document_id`` / ``beir_document_id`` (and plurals) in ``source``, its
    ``origin`` or ``metadata``; else the document id parsed from a Heta raw key
    ``raw/benchmarks/{name}/{split}/{document_id}/{file}`` in ``source_key`` / ``object_key``;
    else ``document_id``. Empty when the result names no document.
    """
    fast = _only_document_id(result)
    if fast is not None:
        return (fast,)
    candidates = _candidates(result)
    found = _collect(candidates, _DOCUMENT_ID_KEYS, parse=None)
    if not found:
        found = _collect(candidates, _RAW_KEY_FIELDS, parse=_document_id_from_raw_key)
    if not found:
        found = _collect(candidates, ("document_id",), parse=None)
    return tuple(found)


def ranked_document_ids(
    results: Iterable[QueryResult], k: int | None = None, judged: Mapping[str, Any] | None = None
) -> list[str]:
    """Document ids in rank order, each kept at its first (best) rank, at most ``k`` of them.

    Results that name no document through their source/metadata keys are skipped (as
    heta-framework does), unless ``judged`` (the case's qrels) is given: then such a result is
    the judged document its id names (the id itself, or ``doc`` for a ``doc#n`` chunk id), as
    evidence matching reads it, else the document its id is (unjudged, so not relevant, but
    it holds its rank as it does in trec_eval's run).
    """
    seen: dict[str, None] = {}  # an ordered set: first (best) rank wins
    limit = float("inf") if k is None else k
    only_benchmark_id = _OTHER_ID_FIELDS.isdisjoint
    for result in results:
        # _only_document_id inlined (the hot loop of batch scoring: one pass per chunk)
        source = result.source
        doc_id = source.get("benchmark_document_id")
        if doc_id.__class__ is str and not result.metadata and only_benchmark_id(source):
            doc_id = doc_id.strip()
            if doc_id:
                if doc_id not in seen:
                    if len(seen) >= limit:
                        break
                    seen[doc_id] = None
                continue
        named = document_ids(result)
        if not named and judged is not None:
            named = (id_document(result.id, judged) or result.id,)
        for doc_id in named:
            if doc_id not in seen:
                if len(seen) >= limit:
                    return list(seen)
                seen[doc_id] = None
    return list(seen)


def document_scores(
    results: Iterable[QueryResult], judged: Mapping[str, Any] | None = None
) -> tuple[list[str], list[float] | None]:
    """Each document once, in order of first appearance, with the best score of its results.

    The chunk → document collapse of a scored run: a document's score is its best chunk's,
    as a ``{doc: score}`` run given to trec_eval would hold it. Scores are None when any
    result has no score (the returned order is then all there is). With ``judged`` (the
    case's qrels), a result that names no document is the one its id names, as in
    :func:`ranked_document_ids`.
    """
    if isinstance(results, LazyResults):  # the embedded KB's array results: no records built
        return results.columns.document_scores()
    best: dict[str, float] = {}
    get = best.get
    only_benchmark_id = _OTHER_ID_FIELDS.isdisjoint
    scored = True
    for result in results:
        # the fast path of _only_document_id, inlined (the hot loop of batch scoring)
        fields = result.__dict__
        source, score = fields["source"], fields["score"]
        if score is None:
            scored, score = False, -math.inf
        doc = source.get("benchmark_document_id")
        if doc.__class__ is str and not fields["metadata"] and only_benchmark_id(source):
            doc = doc.strip()
            docs: Iterable[str] = (doc,) if doc else ()
        else:
            docs = document_ids(result)
            if not docs and judged is not None:
                docs = (id_document(result.id, judged) or result.id,)
        for doc in docs:
            previous = get(doc)
            if previous is None or score > previous:
                best[doc] = score
    return list(best), (list(best.values()) if scored else None)


def id_document(result_id: str, documents: Collection[str]) -> str | None:
    """The document a result id names among ``documents``: the id, or ``doc`` of ``doc#n``."""
    if result_id in documents:
        return result_id
    head, sep, _ = result_id.rpartition("#")
    return head if sep and head in documents else None


def _only_document_id(result: QueryResult) -> str | None:
    """Fast path: the id when ``source.benchmark_document_id`` is the only document reference
    (no other id field, no ``origin``, no metadata), the common case of our own knowledge base."""
    source = result.source
    value = source.get("benchmark_document_id")
    if value.__class__ is not str or result.metadata or not _OTHER_ID_FIELDS.isdisjoint(source):
        return None
    return value.strip() or None


def _candidates(result: QueryResult) -> list[Mapping[str, Any]]:
    source = result.source
    candidates: list[Mapping[str, Any]] = [source]
    origin = source.get("origin")
    if isinstance(origin, Mapping):
        candidates.append(origin)
    if result.metadata:
        candidates.append(result.metadata)
        origin_key = result.metadata.get("origin_source_key")
        if origin_key is not None:
            candidates.append({"object_key": origin_key})
    return candidates


def _collect(candidates: list[Mapping[str, Any]], keys: Sequence[str], parse: Any) -> list[str]:
    found: list[str] = []
    for candidate in candidates:
        for key in keys:
            for name in (key, key + "s"):
                value = candidate.get(name)
                if value is None:
                    continue
                for item in _as_values(value):
                    text = parse(item) if parse else _text(item)
                    if text and text not in found:
                        found.append(text)
    return found


def _document_id_from_raw_key(value: object) -> str | None:
    """``raw/benchmarks/{name}/{split}/{document_id}/...`` (or a ``beir/{name}/{id}`` key) → id."""
    parts = [part for part in str(value).split("/") if part]
    if len(parts) >= 5 and parts[0] == "raw" and parts[1] == "benchmarks":
        return parts[4]
    if "beir" in parts:
        index = parts.index("beir")
        if len(parts) > index + 2:
            return parts[index + 2]
    return None


def _as_values(value: object) -> tuple[object, ...]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple, set, frozenset)):
        return tuple(value)
    return (value,)


def _text(value: object) -> str | None:
    text = str(value).strip()
    return text or None


# --------------------------------------------------------------------------- evidence matching


def match_evidence(
    evidence: Sequence[BenchmarkEvidence], results: Sequence[QueryResult], k: int | None = None
) -> list[EvidenceMatch]:
    """Match each expected evidence item against the top ``k`` results (all when None).

    The best (lowest) rank that matches wins; ``matched_by`` says which rule matched. Items
    matched by reference id alone (qrels) read one table of first ranks, built once per list.
    """
    by_reference = bool(evidence) and all(
        not e.locator and e.text is None and e.reference_id for e in evidence
    )
    if by_reference and isinstance(results, LazyResults):
        keys = results.columns.reference_keys()[:k]  # array results: no record built
        firsts = _FirstRanks([rid for rid, _, _ in keys], [(d, n) for _, d, n in keys])
        return [firsts.match(index, item) for index, item in enumerate(evidence)]
    top = list(results if k is None else results[:k])
    lazy: _FirstRanks | None = None
    out = []
    for index, item in enumerate(evidence):
        if item.locator or item.text is not None or item.reference_id is None:
            out.append(_match_one(index, item, top))
            continue
        lazy = lazy or _FirstRanks([r.id for r in top], map(reference_keys, top))
        out.append(lazy.match(index, item))
    return out


def reference_keys(result: QueryResult) -> tuple[frozenset[str], tuple[str, ...]]:
    """What the reference rule reads of a result besides its id: the keys a reference id
    equals directly (document id / source key fields) and the documents it names."""
    direct = _collect(_candidates(result), ("document_id", "source_key", "object_key"), parse=None)
    return frozenset(direct), document_ids(result)


class _FirstRanks:
    """The first rank at which each key matches by ``reference_id`` and by ``document``, over a
    ranked list: :func:`_reference_match` tried rank by rank, for many items at once."""

    def __init__(
        self, ids: Sequence[str], keys: Iterable[tuple[Collection[str], Sequence[str]]]
    ) -> None:
        self.ids = ids
        self.by_ref: dict[str, int] = {}
        self.by_doc: dict[str, int] = {}
        for rank, (rid, (direct, named)) in enumerate(zip(ids, keys, strict=True), start=1):
            self.by_ref.setdefault(rid, rank)
            for key in direct:
                self.by_ref.setdefault(key, rank)
            for key in named:
                self.by_doc.setdefault(key, rank)
            head, sep, _ = rid.rpartition("#")
            if not named and sep:
                self.by_doc.setdefault(head, rank)  # a ``doc#n`` chunk id names ``doc``

    def match(self, index: int, item: BenchmarkEvidence) -> EvidenceMatch:
        ref = item.reference_id
        by_ref, by_doc = self.by_ref.get(ref), self.by_doc.get(ref)  # type: ignore[arg-type]
        if by_ref is not None and (by_doc is None or by_ref <= by_doc):
            rank, how = by_ref, "reference_id"
        elif by_doc is not None:
            rank, how = by_doc, "document"
        else:
            return _evidence_match(index, item, None, None, None)
        return _evidence_match(index, item, rank, self.ids[rank - 1], how)  # type: ignore[arg-type]


def _match_one(
    index: int, evidence: BenchmarkEvidence, results: list[QueryResult]
) -> EvidenceMatch:
    for rank, result in enumerate(results, start=1):
        matched_by = match_result(evidence, result)
        if matched_by is not None:
            return _evidence_match(index, evidence, rank, result.id, matched_by)
    return _evidence_match(index, evidence, None, None, None)


def _evidence_match(
    index: int,
    evidence: BenchmarkEvidence,
    rank: int | None,
    result_id: str | None,
    matched_by: MatchedBy | None,
) -> EvidenceMatch:
    return EvidenceMatch(
        index=index,
        label=evidence.label(),
        matched=matched_by is not None,
        rank=rank,
        result_id=result_id,
        matched_by=matched_by,
        relevance=evidence.relevance,
        reference_id=evidence.reference_id,
    )


def match_result(evidence: BenchmarkEvidence, result: QueryResult) -> MatchedBy | None:
    """Which rule (locator → reference_id → text) matches ``result`` to ``evidence``, or None."""
    if evidence.locator:
        decided = _locator_decides(evidence.locator, result)
        if decided is True:
            return "locator"
        if decided is False:
            return None
    if evidence.reference_id is not None:
        by_reference = _reference_match(evidence.reference_id, result)
        if by_reference is not None:
            return by_reference
    if evidence.text is not None and _text_matches(evidence.text, result.text):
        return "text"
    return None


def _locator_decides(locator: Mapping[str, Any], result: QueryResult) -> bool | None:
    """True/False when the result carries every locator field, None when it cannot tell."""
    unknown = False
    for key, expected in locator.items():
        actual = _locator_values(key, result)
        if not actual:
            unknown = True
            continue
        if not _locator_value_matches(key, expected, actual):
            return False
    return None if unknown else True


def _locator_values(key: str, result: QueryResult) -> set[str]:
    if key == "source_key_prefix":
        key = "source_key"
    keys = (key, key + "s", *_PLURALS.get(key, ()))
    values = {
        text
        for c in _candidates(result)
        for k in keys
        for v in _as_values(c.get(k))
        if (text := _text(v))
    }
    if key == "chunk_id":
        values.add(result.id)
    if key == "document_id":
        values.update(document_ids(result))
    return values


def _locator_value_matches(key: str, expected: object, actual: set[str]) -> bool:
    if key == "source_key_prefix":
        return any(value.startswith(str(expected)) for value in actual)
    return any(str(item) in actual for item in _as_values(expected))


def _reference_match(reference_id: str, result: QueryResult) -> MatchedBy | None:
    if reference_id == result.id:
        return "reference_id"
    direct, named = reference_keys(result)
    if reference_id in direct:
        return "reference_id"
    if reference_id in named:
        return "document"
    if not named and id_document(result.id, (reference_id,)) is not None:
        return "document"  # a ``doc#n`` chunk id of the expected document
    return None


def stored_keys(source: str | None, metadata: str | None) -> tuple[tuple[str, ...], frozenset[str]]:
    """A stored result's document ids and the keys a reference id matches directly, from its
    ``source`` and ``metadata`` JSON (all the reference rules read), once per distinct pair.
    Metadata that names none of the keys the rules read (most: a rank, a method, a title,
    distinct per hit) is read as absent, so each distinct source is parsed once."""
    if metadata is not None and not names_a_key(metadata):
        metadata = None
    return _stored_keys(source, metadata)


# every key the rules read from a result's metadata contains one of these (``document_id``,
# ``document_ids``, ``benchmark_document_id``, ``beir_document_id``(s), ``source_key``(s),
# ``origin_source_key``, ``object_key``(s)); a backslash may spell one with escapes
_METADATA_KEY_PARTS = ("document_id", "source_key", "object_key", "\\")


def names_a_key(metadata: str) -> bool:
    """Whether a result's metadata JSON may hold a key the matching rules read."""
    return any(part in metadata for part in _METADATA_KEY_PARTS)


def key_positions(texts: str, sep: str = "\n") -> list[int]:
    """Where ``names_a_key`` finds a key in ``texts``, many metadata JSON texts joined by
    ``sep`` (which none holds), at most once per text: ``str.find`` scans in C, so a report's
    texts are searched in a few passes instead of a call each."""
    found = []
    for part in _METADATA_KEY_PARTS:
        at = texts.find(part)
        while at >= 0:
            found.append(at)
            end = texts.find(sep, at)  # the rest of this text is decided
            at = texts.find(part, end) if end >= 0 else -1
    return found


def keyed_only(codes: np.ndarray, metas: Sequence[str | None]) -> np.ndarray:
    """Metadata codes with each text naming no key the reference rules read set to -1 (no
    metadata, as ``stored_keys`` reads it): hits whose metadata differs only in a
    rank or a title then share one (source, metadata) pair, read once. The texts are searched
    joined, by ``key_positions`` (a call per text was most of this step's time)."""
    if not len(metas):
        return codes
    texts = ["" if m is None else m for m in metas]
    ends = np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)) + 1)
    found = key_positions("\n".join(texts))
    named = np.zeros(len(texts), dtype=bool)
    named[np.searchsorted(ends, found, side="right")] = True
    return np.where((codes >= 0) & named[np.maximum(codes, 0)], codes, -1)


@functools.lru_cache(maxsize=1 << 17)
def _stored_keys(
    source: str | None, metadata: str | None
) -> tuple[tuple[str, ...], frozenset[str]]:
    parsed = json.loads(source) if source is not None else {}
    meta = json.loads(metadata) if metadata is not None else {}
    result: Any = SimpleNamespace(source=parsed, metadata=meta)  # read as a QueryResult
    direct = _collect(_candidates(result), ("document_id", "source_key", "object_key"), parse=None)
    return document_ids(result), frozenset(direct)


def match_stored(
    evidence: Sequence[BenchmarkEvidence],
    ids: Sequence[str],
    sources: Sequence[str | None],
    metadatas: Sequence[str | None],
) -> list[EvidenceMatch]:
    """:func:`match_evidence` over a stored report's result columns (ids, source and metadata
    JSON in rank order), for evidence matched by ``reference_id`` (the rule a report's
    columns can decide without building records): the same ranks and ``matched_by``."""
    if not evidence:
        return []
    keys = (stored_keys(s, m)[::-1] for s, m in zip(sources, metadatas, strict=True))
    firsts = _FirstRanks(ids, keys)
    return [
        firsts.match(index, item)
        if item.reference_id is not None
        else _evidence_match(index, item, None, None, None)
        for index, item in enumerate(evidence)
    ]


def normalize_text(text: str) -> str:
    """Casefold and collapse whitespace: the normal form used for text matching."""
    return " ".join(text.casefold().split())


def _text_matches(expected: str, actual: str) -> bool:
    expected_norm, actual_norm = normalize_text(expected), normalize_text(actual)
    if not expected_norm or not actual_norm:
        return False
    return expected_norm in actual_norm or actual_norm in expected_norm


def qrels_of(evidence: Iterable[BenchmarkEvidence]) -> dict[str, int]:
    """Document-level qrels ``{reference_id: relevance}`` from evidence (max grade per id).

    Every judged document is kept, including relevance 0 and negative labels: trec_eval
    counts ``relevance > 0`` as relevant, and judged non-relevant documents still matter.
    """
    qrels: dict[str, int] = {}
    for item in evidence:
        doc = item.reference_id
        if doc is None:
            continue
        grade = item.metadata.get("relevance", 1)
        if type(grade) is not int:
            grade = item.relevance
        previous = qrels.get(doc)
        qrels[doc] = grade if previous is None or grade > previous else previous
    return qrels


__all__ = [
    "EvidenceMatch",
    "MatchedBy",
    "document_ids",
    "document_scores",
    "id_document",
    "match_evidence",
    "match_result",
    "match_stored",
    "normalize_text",
    "qrels_of",
    "ranked_document_ids",
    "stored_keys",
]
