"""Offline query generators: known-item, title/heading and inverse-cloze. No model, no weights.

- **known-item** (Azzopardi, de Rijke & Balog, SIGIR 2007): pick a document, draw a query
  length from a Poisson, draw each term from the document's term model with probability
  ``1 - noise`` and from the collection model otherwise. Term models: ``discriminative``
  (p(t|d) ∝ b(t,d) / p(t), the paper's best), ``popular`` (∝ tf) or ``random`` (uniform).
- **title/heading**: a document's title (or a Markdown ``#`` heading) is the query; the title
  is taken out of what the index sees (``strip_title``) so the query is not a copy of the text.
- **inverse-cloze** (Lee, Chang & Toutanova 2019): one sentence of a document is the query
  and is removed from the document the index sees (``keep_rate`` keeps it in that share); a
  sentence that also appears elsewhere in the document (a title repeated in the text) is
  never chosen, so the removed sentence is really gone.

Each generator takes the corpus (``CorpusDoc``\\ s sorted by id) and a numpy ``Generator`` and
returns ``Generated`` cases plus the corpus the index sees. One query per document.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any

import numpy as np

TOKEN = re.compile(r"(?u)\b\w\w+\b")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


@dataclass(frozen=True)
class CorpusDoc:
    """One corpus document as BEIR keeps it: id, title, body, metadata."""

    document_id: str
    title: str
    body: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """What the index sees: ``title + "\\n\\n" + body`` (empty parts left out), as BEIR."""
        return "\n\n".join(part for part in (self.title, self.body) if part)


@dataclass(frozen=True)
class Generated:
    """One generated case: the query, its source document, the passage offsets in that
    document's indexed text (None for a whole document), facts for the case metadata, and
    ``also``: further relevant documents (a multi-hop question's second source)."""

    query: str
    document_id: str
    passage: tuple[int, int] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    also: tuple[str, ...] = ()


# bm25s's English list (``bm25s.stopwords.STOPWORDS_EN``), which the embedded BM25 removes;
# spelled out because importing bm25s costs seconds (a test keeps the two equal).
STOPWORDS_EN = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
     "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
     "these", "they", "this", "to", "was", "will", "with"]
)  # fmt: skip


def stopwords() -> frozenset[str]:
    """The stopwords the embedded BM25 removes (bm25s's English list)."""
    return STOPWORDS_EN


def tokens(text: str, stop: frozenset[str]) -> list[str]:
    """Lower-cased ``\\w\\w+`` runs minus ``stop`` (the embedded BM25's tokens)."""
    return [t for t in TOKEN.findall(text.lower()) if t not in stop]


# --------------------------------------------------------------------------- known-item


def known_item(
    docs: Sequence[CorpusDoc],
    n: int,
    rng: np.random.Generator,
    *,
    length: float = 6.0,
    noise: float = 0.1,
    term_model: str = "discriminative",
    min_terms: int = 5,
) -> tuple[list[Generated], list[CorpusDoc]]:
    """``n`` known-item queries (Azzopardi et al. 2007); the corpus is left as it is."""
    if term_model not in ("discriminative", "popular", "random"):
        raise ValueError(
            f"term_model must be 'discriminative', 'popular' or 'random', got {term_model!r}"
        )
    if not 0 <= noise <= 1:
        raise ValueError(f"noise must be between 0 and 1, got {noise}")
    stop = stopwords()
    token_lists = [tokens(d.text, stop) for d in docs]
    collection = Counter(chain.from_iterable(token_lists))  # counted in C
    vocab = sorted(collection)
    index = {term: i for i, term in enumerate(vocab)}
    cf = np.array([collection[t] for t in vocab], dtype=np.float64)
    p_collection = cf / cf.sum()
    cumulative = np.cumsum(p_collection)
    eligible = [i for i, t in enumerate(token_lists) if len(set(t)) >= min_terms]
    chosen = _choose(eligible, n, rng)
    out = []
    for doc_index in chosen:
        counts = Counter(token_lists[doc_index])
        terms = sorted(counts)
        ids = np.array([index[t] for t in terms])
        if term_model == "discriminative":
            weights = 1.0 / p_collection[ids]
        elif term_model == "popular":
            weights = np.array([counts[t] for t in terms], dtype=np.float64)
        else:
            weights = np.ones(len(terms))
        size = max(1, int(rng.poisson(length)))
        from_doc = rng.random(size) >= noise
        picked = rng.choice(len(terms), size=size, p=weights / weights.sum())
        noise_terms = np.searchsorted(cumulative, rng.random(size) * cumulative[-1])
        words = [
            terms[p] if d else vocab[min(q, len(vocab) - 1)]
            for p, q, d in zip(picked, noise_terms, from_doc, strict=True)
        ]
        query = " ".join(dict.fromkeys(words))  # distinct, in drawing order
        facts = {"query_terms": len(query.split()), "noise_terms": int((~from_doc).sum())}
        out.append(Generated(query, docs[doc_index].document_id, None, facts))
    return out, list(docs)


# --------------------------------------------------------------------------- titles and headings


def titles(
    docs: Sequence[CorpusDoc],
    n: int,
    rng: np.random.Generator,
    *,
    strip_title: bool = True,
    min_words: int = 2,
) -> tuple[list[Generated], list[CorpusDoc]]:
    """A document's title (else its first Markdown heading) as its query."""
    stop = stopwords()
    candidates: list[tuple[int, str, str]] = []  # (doc index, query, kind)
    for i, doc in enumerate(docs):
        title = doc.title.strip()
        kind = "title"
        if not title:
            heading = HEADING.search(doc.body)
            title, kind = (heading.group(2).strip(), "heading") if heading else ("", "")
        if title and len(tokens(title, stop)) >= min_words:
            candidates.append((i, title, kind))
    chosen = set(_choose(range(len(candidates)), n, rng))
    corpus, out = list(docs), []
    for position in sorted(chosen, key=lambda c: candidates[c][0]):
        i, title, kind = candidates[position]
        doc = docs[i]
        if strip_title:
            doc = _without_title(doc, title, kind)
            corpus[i] = doc
        passage = _section(doc, title) if kind == "heading" and not strip_title else None
        out.append(Generated(title.rstrip(" ."), doc.document_id, passage, {"source": kind}))
    return out, corpus


def _without_title(doc: CorpusDoc, title: str, kind: str) -> CorpusDoc:
    body = doc.body
    if kind == "heading":
        body = HEADING.sub(lambda m: "" if m.group(2).strip() == title else m.group(0), body, 1)
    elif body.startswith(title):  # BEIR corpora often repeat the title in the text
        body = body[len(title) :].lstrip(" .:;-")
    return replace(doc, title="", body=body.strip())


def _section(doc: CorpusDoc, heading: str) -> tuple[int, int] | None:
    text = doc.text
    match = next((m for m in HEADING.finditer(text) if m.group(2).strip() == heading), None)
    if match is None:
        return None
    after = HEADING.search(text, match.end())
    return match.start(), after.start() if after else len(text)


# --------------------------------------------------------------------------- inverse cloze


def inverse_cloze(
    docs: Sequence[CorpusDoc],
    n: int,
    rng: np.random.Generator,
    *,
    min_words: int = 6,
    keep_rate: float = 0.0,
) -> tuple[list[Generated], list[CorpusDoc]]:
    """One sentence of a document as the query, removed from what the index sees."""
    if not 0 <= keep_rate <= 1:
        raise ValueError(f"keep_rate must be between 0 and 1, got {keep_rate}")
    stop = stopwords()
    sentences: dict[int, list[tuple[int, int]]] = {}
    for i, doc in enumerate(docs):
        spans = _sentences(doc.body)
        text = doc.text
        good = [
            s
            for s in spans
            if len(tokens(doc.body[s[0] : s[1]], stop)) >= min_words
            and text.count(doc.body[s[0] : s[1]].strip()) == 1  # not also the title, say
        ]
        if len(spans) >= 2 and good:
            sentences[i] = good
    chosen = _choose(sorted(sentences), n, rng)
    corpus, out = list(docs), []
    for i in chosen:
        doc = docs[i]
        start, end = sentences[i][int(rng.integers(len(sentences[i])))]
        sentence = doc.body[start:end]
        kept = bool(rng.random() < keep_rate)
        offset = len(doc.text) - len(doc.body)  # where the body starts in the indexed text
        if not kept:
            body = (doc.body[:start].rstrip() + " " + doc.body[end:].lstrip()).strip()
            corpus[i] = replace(doc, body=body)
        facts = {"sentence_removed": not kept}  # passage: offsets in the original text
        passage = (offset + start, offset + end)
        out.append(Generated(sentence.strip(), doc.document_id, passage, facts))
    return out, corpus


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in SENTENCE_END.finditer(text):
        if text[start : match.start()].strip():
            spans.append((start, match.start()))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


# --------------------------------------------------------------------------- shared


def _choose(eligible: Sequence[int] | range, n: int, rng: np.random.Generator) -> list[int]:
    """``n`` distinct items of ``eligible`` drawn by ``rng`` (all of them when fewer)."""
    items = list(eligible)
    if not items:
        raise ValueError("no document qualifies for this method (see its min_words/min_terms)")
    if n >= len(items):
        return items
    return [items[i] for i in rng.choice(len(items), size=n, replace=False)]


Method = Callable[..., tuple[list[Generated], list[CorpusDoc]]]
METHODS: dict[str, Method] = {
    "known_item": known_item,
    "title": titles,
    "inverse_cloze": inverse_cloze,
}

__all__ = ["METHODS", "CorpusDoc", "Generated", "inverse_cloze", "known_item", "titles"]
