"""A benchmark from a local BEIR folder: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/{split}.tsv``.

How BEIR data becomes documents and cases (the same choices heta-framework's adapter makes):

- **Documents** index ``title + "\\n\\n" + text`` (BEIR's evaluations search title and text;
  an empty part is left out). ``metadata`` keeps ``title``, ``beir_doc_id`` (the corpus
  ``_id``), ``beir_document_id`` and the corpus row's own ``metadata`` fields. The document id
  is the corpus ``_id`` when it is a safe path part (letters, digits, ``._-``), else
  heta-framework's sanitised form with a short hash.
- **Cases**: only queries with at least one qrels row (as BEIR evaluates). Each judged document
  with a grade > 0 becomes evidence ``reference_id=<document id>``, ``metadata.relevance=grade``
  (grade ≤ 0 is "judged, not relevant": not evidence, but kept as judged in
  ``expected.metadata.judged_nonrelevant`` ``{document id: grade}`` and counted in ``judged``).
- **Bad input** raises ``BenchmarkFormatError`` (file, line, problem): missing files, malformed
  lines, duplicate ``_id``\\ s, duplicate qrels pairs, non-integer grades. **Qrels rows naming
  an unknown query or document are dropped with one ``BenchmarkWarning`` giving the count**
  (BEIR's own loader tolerates them; the counts are in ``prepared.metadata``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from hashlib import sha1
from importlib.resources import files
from pathlib import Path
from typing import Any

from heta_notebook._util.warn import user_stacklevel
from heta_notebook.benchmarks._base import InMemoryBenchmark, Parsed
from heta_notebook.benchmarks._io import (
    BenchmarkFormatError,
    BenchmarkWarning,
    IdRegistry,
    mapping_field,
    read_jsonl,
    read_lines,
    require_file,
    require_some_text,
    text_field,
)
from heta_notebook.benchmarks._labels import LabelSource, read_labels
from heta_notebook.schema._records import (
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkManifest,
)

Qrels = dict[str, dict[str, int]]
CRANFIELD_HOMEPAGE = "http://ir.dcs.gla.ac.uk/resources/test_collections/cran/"


def beir_default_evaluators() -> tuple[Any, ...]:
    """BEIR's usual metrics: nDCG, MAP, recall, precision, MRR at k = 1, 3, 5, 10, 100."""
    from heta_notebook.evaluators._retrieval import beir_default_metrics

    return tuple(beir_default_metrics())


class BeirBenchmark(InMemoryBenchmark):
    """One split of a BEIR dataset in a local folder; default evaluators: ``beir_default_metrics()``."""

    def __init__(
        self,
        folder: str | Path,
        split: str = "test",
        *,
        dataset: str | None = None,
        version: str = "local",
        evaluators: Sequence[Any] | None = None,
        manifest_fields: Mapping[str, Any] | None = None,
        labels: LabelSource | None = None,
        keep_unjudged: bool = False,
    ):
        """``labels``: a labels file (JSONL/TSV/CSV) or mapping query id → case labels.
        ``keep_unjudged=True`` keeps queries without qrels rows (as cases without evidence)."""
        self.folder = Path(folder)
        self.split = split
        self.labels_source = labels
        self.keep_unjudged = keep_unjudged
        self.dataset = (dataset or self.folder.name or "beir").lower()
        manifest = BenchmarkManifest(
            name=f"beir_{self.dataset}",
            version=version,
            split=split,
            task_type="information_retrieval",
            **{
                "metadata": _generated_metadata(self.folder, self.dataset),
                **dict(manifest_fields or {}),
            },
        )
        super().__init__(
            manifest,
            evaluators=evaluators,
            default_evaluators=beir_default_evaluators,
            root_dir=self.folder,
        )

    @classmethod
    def from_folder(cls, path: str | Path, split: str = "test", **options: Any) -> BeirBenchmark:
        """Read ``path/corpus.jsonl``, ``path/queries.jsonl`` and ``path/qrels/{split}.tsv``."""
        return cls(path, split, **options)

    @classmethod
    def cranfield(cls, **options: Any) -> BeirBenchmark:
        """The Cranfield collection shipped with the package (1,400 docs, 225 graded queries)."""
        fields = {
            "homepage": CRANFIELD_HOMEPAGE,
            "citation": "Cleverdon, C. W. (1967). The Cranfield tests on index language devices.",
            "metadata": {
                "dataset": "cranfield",
                "description": "aeronautics abstracts, graded qrels 1-4",
            },
        }
        options.setdefault("manifest_fields", fields)
        return cls(cranfield_folder(), "test", dataset="cranfield", version="1", **options)

    def _parse(self) -> Parsed:
        corpus = require_file(self.folder / "corpus.jsonl", "BEIR corpus")
        queries_path = require_file(self.folder / "queries.jsonl", "BEIR queries")
        qrels_path = require_file(self.folder / "qrels" / f"{self.split}.tsv", "BEIR qrels")
        documents, doc_ids = read_corpus(corpus)
        require_some_text(documents, file=corpus)
        queries = read_queries(queries_path)
        qrels, dropped = read_qrels(qrels_path, queries, doc_ids)
        extra = {} if self.labels_source is None else read_labels(self.labels_source, queries)
        unjudged = warn_unjudged(queries_path, qrels_path, queries, qrels, self.keep_unjudged)
        judged = qrels if not self.keep_unjudged else {q: qrels.get(q, {}) for q in queries}
        cases = [
            self._case(qid, queries[qid], labels, doc_ids, extra.get(qid))
            for qid, labels in _in_order(queries, judged)
        ]
        if not cases:
            problem = "no cases: no qrels row names a query of " + str(queries_path)
            raise BenchmarkFormatError(problem, file=qrels_path)
        facts = {"qrels_dropped": dropped, "split": self.split, "unjudged_queries": unjudged}
        return documents, cases, facts

    def _case(
        self,
        query_id: str,
        query: dict[str, Any],
        labels: dict[str, int],
        doc_ids: dict[str, str],
        case_labels: Mapping[str, Any] | None = None,
    ) -> BenchmarkCase:
        evidence = tuple(
            BenchmarkEvidence(
                reference_id=doc_ids[beir_id],
                metadata={
                    "relevance": grade,
                    "beir_doc_id": beir_id,
                    "beir_document_id": doc_ids[beir_id],
                },
            )
            for beir_id, grade in labels.items()
            if grade > 0
        )
        expected_meta = {
            "beir_query_id": query_id,
            "positive_qrels": len(evidence),
            "judged": len(labels),
        }
        nonrelevant = {doc_ids[b]: grade for b, grade in labels.items() if grade <= 0}
        if nonrelevant:  # judged, not relevant: judged@k and condensed scores need them
            expected_meta["judged_nonrelevant"] = nonrelevant
        return BenchmarkCase(
            case_id=query_id,
            query=query["text"],
            expected=BenchmarkExpected(evidence=evidence, metadata=expected_meta),
            labels={"dataset": self.dataset, "split": self.split, **(case_labels or {})},
            metadata={**query["metadata"], "beir_query_id": query_id, "dataset": self.dataset},
        )


def cranfield_folder() -> Path:
    """Where the packaged Cranfield copy lives (BEIR layout)."""
    return Path(str(files("heta_notebook") / "benchmarks" / "data" / "cranfield"))


def read_corpus(path: Path) -> tuple[list[BenchmarkDocument], dict[str, str]]:
    """Corpus rows → documents, plus a map corpus ``_id`` → document id."""
    ids = IdRegistry("corpus _id", path)
    documents, doc_ids = [], {}
    for line, row in read_jsonl(path):
        beir_id = text_field(row, "_id", file=path, line=line)
        ids.add(beir_id, line)
        document_id = benchmark_document_id(beir_id)
        title = str(row.get("title") or "").strip()
        body = str(row.get("text") or "").strip()
        metadata = {**mapping_field(row, "metadata", file=path, line=line), "title": title}
        metadata.update(beir_doc_id=beir_id, beir_document_id=document_id)
        documents.append(
            BenchmarkDocument(
                document_id=document_id,
                name=f"{document_id}.txt",
                text="\n\n".join(part for part in (title, body) if part),
                metadata=metadata,
            )
        )
        doc_ids[beir_id] = document_id
    return documents, doc_ids


def read_queries(path: Path) -> dict[str, dict[str, Any]]:
    """Query rows → ``{_id: {"text", "metadata"}}`` in file order."""
    ids = IdRegistry("query _id", path)
    queries: dict[str, dict[str, Any]] = {}
    for line, row in read_jsonl(path):
        query_id = text_field(row, "_id", file=path, line=line)
        ids.add(query_id, line)
        queries[query_id] = {
            "text": text_field(row, "text", file=path, line=line),
            "metadata": mapping_field(row, "metadata", file=path, line=line),
        }
    return queries


def read_qrels(
    path: Path, queries: Mapping[str, Any], doc_ids: Mapping[str, str]
) -> tuple[Qrels, dict[str, int]]:
    """``query-id<TAB>corpus-id<TAB>score`` rows (optional header) → ``{qid: {corpus_id: grade}}``.

    Rows naming an unknown query or document are dropped with one warning giving the counts.
    """
    qrels: Qrels = {}
    first_line: dict[tuple[str, str], int] = {}
    unknown: dict[str, list[int]] = {"query": [], "document": []}
    rows = 0
    for line, raw in read_lines(path):
        parts = raw.rstrip("\r\n").split("\t")
        if not raw.strip() or (line == 1 and _is_header(parts)):
            continue
        rows += 1
        query_id, beir_id, grade = _qrels_row(parts, path, line)
        pair = (query_id, beir_id)
        if pair in first_line:
            problem = (
                f"duplicate qrels row {query_id!r} → {beir_id!r} (first on line {first_line[pair]})"
            )
            raise BenchmarkFormatError(problem, file=path, line=line)
        first_line[pair] = line
        if query_id not in queries or beir_id not in doc_ids:
            unknown["query" if query_id not in queries else "document"].append(line)
            continue
        qrels.setdefault(query_id, {})[beir_id] = grade
    if rows == 0:
        warnings.warn(
            f"{path}: no qrels rows, so no query is judged",
            BenchmarkWarning,
            stacklevel=user_stacklevel(),
        )
    _warn_unknown(path, unknown)
    return qrels, {f"unknown_{kind}": len(lines) for kind, lines in unknown.items()}


def _qrels_row(parts: list[str], path: Path, line: int) -> tuple[str, str, int]:
    if len(parts) != 3:
        problem = f"expected 3 tab-separated fields (query-id, corpus-id, score), got {len(parts)}"
        if len("\t".join(parts).split()) == 4:  # qid iter doc grade
            problem += "; the line looks like a TREC qrels line (read it with read_trec_qrels)"
        raise BenchmarkFormatError(problem, file=path, line=line)
    query_id, beir_id, score = (part.strip() for part in parts)
    if not query_id or not beir_id:
        raise BenchmarkFormatError("empty query-id or corpus-id", file=path, line=line)
    try:
        grade = float(score)
    except ValueError:
        raise BenchmarkFormatError(
            f"score {score!r} is not a number", file=path, line=line
        ) from None
    if not grade.is_integer():
        raise BenchmarkFormatError(f"score {score!r} is not an integer grade", file=path, line=line)
    return query_id, beir_id, int(grade)


def _is_header(parts: list[str]) -> bool:
    names = [part.strip().lower().replace("_", "-") for part in parts[:3]]
    return names == ["query-id", "corpus-id", "score"]


def _warn_unknown(path: Path, unknown: dict[str, list[int]]) -> None:
    if not any(unknown.values()):
        return
    pieces = [
        f"{len(lines)} naming an unknown {kind} (lines {', '.join(map(str, lines[:5]))}{', ...' if len(lines) > 5 else ''})"
        for kind, lines in unknown.items()
        if lines
    ]
    message = f"{path}: dropped qrels rows: {'; '.join(pieces)}"
    warnings.warn(message, BenchmarkWarning, stacklevel=user_stacklevel())


def warn_unjudged(
    queries_path: Path, qrels_path: Path, queries: Mapping[str, Any], qrels: Qrels, keep: bool
) -> int:
    """Say, once, how many queries have no qrels row (left out unless ``keep``); return it."""
    count = sum(1 for qid in queries if qid not in qrels)
    if count and not keep:
        message = (
            f"{queries_path}: {count} of {len(queries)} queries have no judgments in "
            f"{qrels_path.name} and were left out (keep_unjudged=True keeps them)"
        )
        warnings.warn(message, BenchmarkWarning, stacklevel=user_stacklevel())
    return count


def _generated_metadata(folder: Path, dataset: str) -> dict[str, Any]:
    """``{"dataset"}``, plus ``generation`` (its manifest) for a generated benchmark's folder."""
    from heta_notebook.benchmarks._generate import read_generation

    manifest = read_generation(folder)
    generation = {"generation": manifest.to_dict()} if manifest is not None else {}
    return {"dataset": dataset, **generation}


def _in_order(queries: Mapping[str, Any], qrels: Qrels):
    return ((qid, qrels[qid]) for qid in queries if qid in qrels)


def benchmark_document_id(value: str) -> str:
    """heta-framework's benchmark document id: the id itself when safe, else sanitised + hash."""
    safe = "".join(char if char.isalnum() or char in "._-" else "_" for char in value.strip())
    safe = "_".join(part for part in safe.split("_") if part) or "document"
    if safe == value and len(safe) <= 96 and safe not in {".", ".."}:
        return safe
    digest = sha1(value.encode("utf-8")).hexdigest()[:12]
    stem = safe[:83].strip("._-")
    return f"{stem}_{digest}" if stem else f"document_{digest}"


__all__ = ["BeirBenchmark", "benchmark_document_id", "cranfield_folder", "read_qrels"]
