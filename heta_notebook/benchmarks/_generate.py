"""No labels yet? ``generate_benchmark`` makes a benchmark from a corpus, offline or with a model.

The result is written as a BEIR folder (``corpus.jsonl`` as the index should see it,
``queries.jsonl``, ``qrels/test.tsv``) plus ``generation.json`` (the manifest: how it was made,
what the filters kept and dropped) and is a :class:`GeneratedBenchmark`, a ``BeirBenchmark``
over that folder, so it runs like any other and ``BeirBenchmark.from_folder`` reads it back.
No clock time or absolute path is written: the same seed gives a byte-identical folder.

Review decisions (``benchmark.review()``) live in ``review.json`` beside the manifest;
``GeneratedBenchmark`` leaves rejected cases out and asks edited queries as edited.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from heta_notebook._util.paths import atomic_write_text, temp_folder
from heta_notebook.benchmarks._base import Parsed
from heta_notebook.benchmarks._beir import BeirBenchmark, benchmark_document_id
from heta_notebook.benchmarks._generate_offline import METHODS, CorpusDoc, Generated
from heta_notebook.benchmarks._generation_manifest import (
    MANIFEST_FILE,
    REVIEW_FILE,
    GenerationManifest,
    corpus_fingerprint,
    counts_of,
)
from heta_notebook.benchmarks._io import BenchmarkFormatError, mapping_field, read_jsonl, text_field
from heta_notebook.schema._records import BenchmarkCase, BenchmarkDocument

OFFLINE_METHODS = tuple(METHODS)
LLM_METHODS = ("llm", "llm_multihop")


def generate_benchmark(
    corpus: Any,
    n: int = 200,
    *,
    method: str = "known_item",
    seed: int = 0,
    folder: str | os.PathLike[str] | None = None,
    **parameters: Any,
) -> GeneratedBenchmark:
    """A benchmark of ``n`` generated queries over ``corpus`` (documents, a BEIR/JSONL folder or
    a benchmark), saved as a BEIR folder with its manifest; deterministic for a given ``seed``.

    ``method``: ``known_item`` (``length``, ``noise``, ``term_model``), ``title``
    (``strip_title``), ``inverse_cloze`` (``min_words``, ``keep_rate``), or ``llm`` /
    ``llm_multihop`` (``model``, ``base_url``; see ``generate_llm_cases``).
    """
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    docs = corpus_documents(corpus)
    rng = np.random.default_rng(seed)
    extra: dict[str, Any] = {}
    if method in METHODS:
        generated, seen = METHODS[method](docs, n, rng, **parameters)
        drops: list[dict[str, Any]] = []
        produced = len(generated)
    elif method in LLM_METHODS:
        from heta_notebook.benchmarks._generate_llm import generate_llm_cases

        outcome = generate_llm_cases(docs, n, rng, multihop=method == "llm_multihop", **parameters)
        generated, seen, drops, produced = outcome.kept, list(docs), outcome.drops, outcome.produced
        extra = outcome.manifest_fields
        parameters = outcome.parameters
    else:
        known = ", ".join(OFFLINE_METHODS + LLM_METHODS)
        raise ValueError(f"unknown method {method!r}; expected one of {known}")
    manifest = GenerationManifest(
        method=method,
        seed=int(seed),
        parameters={"n": n, **parameters},
        corpus_fingerprint=corpus_fingerprint((d.document_id, d.text) for d in docs),
        documents=len(docs),
        counts=counts_of(produced, len(generated), drops),
        drops=tuple(drops),
        **extra,
    )
    target = Path(folder) if folder is not None else temp_folder("generated", manifest.digest[:20])
    write_folder(target, seen, generated, manifest)
    return GeneratedBenchmark(target)


class GeneratedBenchmark(BeirBenchmark):
    """A generated BEIR folder: ``generation`` says how it was made; reviews apply."""

    def __init__(self, folder: str | os.PathLike[str], split: str = "test", **options: Any):
        folder = Path(folder)
        manifest = read_generation(folder)
        if manifest is None:
            raise BenchmarkFormatError(
                "not a generated benchmark (no manifest)", file=folder / MANIFEST_FILE
            )
        options.setdefault("dataset", f"generated_{manifest.method}")
        options.setdefault("version", manifest.digest[:12])
        super().__init__(folder, split, **options)

    @classmethod
    def from_folder(
        cls, path: str | Path, split: str = "test", **options: Any
    ) -> GeneratedBenchmark:
        """Read a folder ``generate_benchmark`` (or ``save``) wrote, with its review."""
        return cls(path, split, **options)

    @property
    def generation(self) -> GenerationManifest:
        """The manifest, counting the review's decisions so far."""
        manifest = read_generation(self.folder)
        assert manifest is not None
        queries = sum(1 for _ in read_jsonl(self.folder / "queries.jsonl"))
        return manifest.with_review(self.decisions(), queries)

    def decisions(self) -> dict[str, dict[str, Any]]:
        """The review's decisions by case id (``decision``: accept/reject, ``reason``, ``query``)."""
        path = self.folder / REVIEW_FILE
        if not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise BenchmarkFormatError(f"malformed review: {exc}", file=path) from None
        if not isinstance(data, dict) or not isinstance(data.get("decisions", {}), dict):
            raise BenchmarkFormatError('expected {"decisions": {case_id: {...}}}', file=path)
        return {str(k): dict(v) for k, v in data.get("decisions", {}).items()}

    def save_decisions(self, decisions: Mapping[str, Mapping[str, Any]]) -> None:
        """Write the review's ``decisions`` beside the manifest (survives a kernel restart)."""
        for case_id, decision in decisions.items():
            if decision.get("decision") not in ("accept", "reject", None):
                raise ValueError(f"case {case_id}: decision must be 'accept' or 'reject'")
        body = {"decisions": {k: dict(v) for k, v in sorted(decisions.items())}}
        atomic_write_text(
            self.folder / REVIEW_FILE, json.dumps(body, indent=1, sort_keys=True) + "\n"
        )
        self._parsed = None

    def generated_inputs(self) -> tuple[list[BenchmarkDocument], list[BenchmarkCase]]:
        """The documents and every generated case, before the review (what a reviewer sees)."""
        documents, cases, _ = BeirBenchmark._parse(self)
        return documents, cases

    def review(self, **options: Any) -> Any:
        """The review widget: page through cases, accept / reject with a reason / edit queries."""
        from heta_notebook.display._review import ReviewWidget

        return ReviewWidget(self, **options)

    def save(self, folder: str | os.PathLike[str]) -> GeneratedBenchmark:
        """Copy this benchmark's folder (byte for byte) to ``folder``; return it read from there."""
        target = Path(folder)
        if target.resolve() != self.folder.resolve():
            for name in ("corpus.jsonl", "queries.jsonl", MANIFEST_FILE, REVIEW_FILE, "qrels"):
                source = self.folder / name
                if source.is_dir():
                    shutil.copytree(source, target / name, dirs_exist_ok=True)
                elif source.is_file():
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, target / name)
                else:  # no review here: none there either
                    (target / name).unlink(missing_ok=True)
        return type(self)(target, self.split)

    def _case(self, query_id: str, query: dict[str, Any], *args: Any) -> BenchmarkCase:
        case = super()._case(query_id, query, *args)
        answer = query["metadata"].get("answer")
        if not isinstance(answer, str) or not answer.strip():
            return case
        expected = case.expected.model_copy(update={"answers": (answer.strip(),)})
        return case.model_copy(update={"expected": expected})

    def _parse(self) -> Parsed:
        documents, cases, facts = super()._parse()
        decisions = self.decisions()
        kept = [_reviewed(case, decisions.get(case.case_id)) for case in cases]
        chosen = [case for case in kept if case is not None]
        return documents, chosen, {**facts, "review_rejected": len(cases) - len(chosen)}


def _reviewed(case: BenchmarkCase, decision: Mapping[str, Any] | None) -> BenchmarkCase | None:
    if not decision:
        return case
    if decision.get("decision") == "reject":
        return None
    if decision.get("query"):
        metadata = {**case.metadata, "generated_query": case.query}
        return case.model_copy(update={"query": str(decision["query"]), "metadata": metadata})
    return case


def read_generation(folder: Path) -> GenerationManifest | None:
    """The manifest in ``folder`` (None when there is none); the BEIR loader's hook."""
    path = Path(folder) / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        return GenerationManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BenchmarkFormatError(f"unreadable generation manifest: {exc}", file=path) from None


# --------------------------------------------------------------------------- the folder


def write_folder(
    folder: Path,
    corpus: Sequence[CorpusDoc],
    cases: Sequence[Generated],
    manifest: GenerationManifest,
) -> None:
    """Write the BEIR files and the manifest; every byte depends only on the arguments."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels").mkdir(exist_ok=True)
    text = json.dumps(manifest.to_dict(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    previous = folder / MANIFEST_FILE
    if not previous.is_file() or previous.read_text(encoding="utf-8") != text:
        (folder / REVIEW_FILE).unlink(missing_ok=True)  # another benchmark: not its review
    rows = (
        {"_id": d.document_id, "title": d.title, "text": d.body, "metadata": d.metadata}
        for d in corpus
    )
    _write_jsonl(folder / "corpus.jsonl", rows)
    width = max(4, len(str(len(cases))))
    ids = [f"{manifest.method}-{i:0{width}d}" for i in range(1, len(cases) + 1)]
    queries = (
        {"_id": case_id, "text": case.query, "metadata": _query_metadata(case)}
        for case_id, case in zip(ids, cases, strict=True)
    )
    _write_jsonl(folder / "queries.jsonl", queries)
    qrels = "".join(
        f"{case_id}\t{document_id}\t1\n"
        for case_id, case in zip(ids, cases, strict=True)
        for document_id in (case.document_id, *case.also)
    )
    atomic_write_text(folder / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\n" + qrels)
    atomic_write_text(folder / MANIFEST_FILE, text)


def _query_metadata(case: Generated) -> dict[str, Any]:
    evidence: dict[str, Any] = {"document_id": case.document_id}
    if case.passage is not None:
        evidence.update(start=case.passage[0], end=case.passage[1])
    return {"evidence": evidence, **case.metadata}


def _write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    lines = (json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    atomic_write_text(path, "".join(lines))


# --------------------------------------------------------------------------- the corpus


def corpus_documents(corpus: Any) -> list[CorpusDoc]:
    """Documents from a list (documents, dicts, texts), a BEIR/JSONL folder or a benchmark,
    sorted by id so the corpus's order does not change what a seed draws."""
    if isinstance(corpus, (str, os.PathLike)):
        docs = _folder_documents(Path(corpus))
    elif hasattr(corpus, "prepare") or hasattr(corpus, "documents"):
        docs = [_from_document(d) for d in _benchmark_documents(corpus)]
    elif isinstance(corpus, Iterable):
        docs = [_from_item(item, i) for i, item in enumerate(corpus)]
    else:
        raise TypeError(
            "corpus must be a list of documents (BenchmarkDocument, dict or text), a BEIR or "
            f"JSONL folder, or a benchmark; got {type(corpus).__name__}"
        )
    seen: dict[str, int] = {}
    for i, doc in enumerate(docs):
        if seen.setdefault(doc.document_id, i) != i:
            raise ValueError(
                f"corpus: duplicate document id {doc.document_id!r} (items {seen[doc.document_id]} and {i})"
            )
    if not docs or not any(d.text.strip() for d in docs):
        raise ValueError("corpus has no text to generate queries from")
    return sorted(docs, key=lambda d: d.document_id)


def _folder_documents(folder: Path) -> list[CorpusDoc]:
    if (folder / "corpus.jsonl").is_file():
        path = folder / "corpus.jsonl"
        docs = []
        for line, row in read_jsonl(path):
            beir_id = text_field(row, "_id", file=path, line=line)
            metadata = mapping_field(row, "metadata", file=path, line=line)
            docs.append(
                CorpusDoc(
                    benchmark_document_id(beir_id),
                    str(row.get("title") or "").strip(),
                    str(row.get("text") or "").strip(),
                    metadata,
                )
            )
        return docs
    if (folder / "documents.jsonl").is_file():
        from heta_notebook.benchmarks._jsonl import JsonlBenchmark

        return [_from_document(d) for d in JsonlBenchmark.from_folder(folder).load().documents]
    raise BenchmarkFormatError(
        "no corpus.jsonl (BEIR) or documents.jsonl (JSONL) here", file=folder
    )


def _benchmark_documents(corpus: Any) -> list[BenchmarkDocument]:
    if hasattr(corpus, "prepare"):
        from heta_notebook.benchmarks._protocol import load_benchmark_sync

        return list(load_benchmark_sync(corpus).documents)
    return list(corpus.documents)


_OWN_KEYS = ("title", "beir_doc_id", "beir_document_id")


def _from_document(doc: BenchmarkDocument) -> CorpusDoc:
    text = doc.read_text()
    title = str(doc.metadata.get("title") or "").strip()
    body = text[len(title) :].lstrip("\n") if title and text.startswith(title + "\n\n") else text
    if title and body == text:
        title = ""  # the title is not part of the indexed text: keep the text as it is
    metadata = {k: v for k, v in doc.metadata.items() if k not in _OWN_KEYS}
    return CorpusDoc(benchmark_document_id(doc.document_id), title, body.strip(), metadata)


def _from_item(item: Any, index: int) -> CorpusDoc:
    if isinstance(item, BenchmarkDocument):
        return _from_document(item)
    if isinstance(item, str):
        return CorpusDoc(f"doc-{index:06d}", "", item.strip(), {})
    if isinstance(item, Mapping):
        raw_id = item.get("_id", item.get("id", item.get("document_id", f"doc-{index:06d}")))
        metadata = item.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise ValueError(f"corpus item {index}: metadata must be an object")
        return CorpusDoc(
            benchmark_document_id(str(raw_id)),
            str(item.get("title") or "").strip(),
            str(item.get("text") or "").strip(),
            dict(metadata),
        )
    raise TypeError(
        f"corpus item {index}: expected a document, a dict or text, got {type(item).__name__}"
    )


__all__ = ["GeneratedBenchmark", "corpus_documents", "generate_benchmark", "read_generation"]
