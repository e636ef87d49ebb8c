"""A benchmark from in-memory records: a list of dicts or a pandas DataFrame.

Three row shapes are understood (mix freely):

- **Heta case**: ``{"case_id", "query", "expected": {...}, "labels", "metadata"}``.
- **Flat**: ``{"id", "query" | "question" | "input", "answer" | "answers",
  "evidence" | "contexts" | "reference_ids", "labels", "metadata"}``.
- **HoneyHive datapoint**: ``{"inputs": {...}, "ground_truth": {...}}``. The query comes from
  ``inputs["query" | "question" | "input"]``; answers from ``ground_truth["answer" | "answers"]``;
  evidence from ``ground_truth["evidence" | "contexts" | "reference_ids"]``. The original dicts
  are kept in ``case.metadata["inputs"]`` / ``["ground_truth"]`` so decorated evaluators see
  them unchanged. A plain string ``inputs`` is the query, a plain string
  ``ground_truth`` the answer; flattened DataFrame columns (``inputs.question``) are folded back.

Evidence items: dicts are evidence records; strings under ``reference_ids`` are reference ids,
under ``contexts`` texts, and under ``evidence`` a reference id when it names a known document,
else a text. Case ids come from ``case_id``/``id`` (also inside ``inputs``), else ``case_{row}``.

Documents: pass ``documents=`` (dicts in the JSONL layout, ``BenchmarkDocument``\\ s or a
DataFrame). Without them the corpus is every distinct context/evidence text, one document each
(id ``ctx_<sha1[:12]>``), and those evidence items also get that ``reference_id``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from hashlib import sha1
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from heta_notebook.benchmarks._base import InMemoryBenchmark, Parsed, default_answer_evaluators
from heta_notebook.benchmarks._io import (
    BenchmarkFormatError,
    IdRegistry,
    check_evidence_grades,
    mapping_field,
    validation_problem,
)
from heta_notebook.benchmarks._jsonl import as_manifest, case_from_row, document_from_row
from heta_notebook.schema._records import BenchmarkCase, BenchmarkDocument, BenchmarkManifest

QUERY_KEYS = ("query", "question", "input")
ANSWER_KEYS = ("answers", "answer")
EVIDENCE_KEYS = ("evidence", "contexts", "reference_ids")
SOURCE = "<records>"


class RecordsBenchmark(InMemoryBenchmark):
    """Cases (and optionally documents) from Python records or DataFrames."""

    def __init__(
        self,
        records: Any,
        *,
        documents: Any = None,
        manifest: BenchmarkManifest | Mapping[str, Any] | str = "records",
        evaluators: Sequence[Any] | None = None,
        root_dir: str | Path | None = None,
    ):
        self._records = _rows(records)
        self._document_rows = None if documents is None else _rows(documents)
        super().__init__(
            as_manifest(manifest),
            evaluators=evaluators,
            default_evaluators=default_answer_evaluators,
            root_dir=Path(root_dir) if root_dir is not None else None,
        )

    def _parse(self) -> Parsed:
        documents = _documents(self._document_rows, self._root_dir or Path.cwd())
        known = {d.document_id for d in documents}
        ids = IdRegistry("case_id", SOURCE)
        cases: list[Any] = []
        contexts: dict[str, Any] = {}
        for row_number, row in enumerate(self._records, start=1):
            case = case_from_record(row, row_number, known_documents=known, contexts=contexts)
            ids.add(case.case_id, row_number)
            cases.append(case)
        if not cases:
            raise BenchmarkFormatError("no cases: the records list is empty", file=SOURCE)
        if self._document_rows is None:
            documents = [
                BenchmarkDocument(document_id=doc_id, name=f"{doc_id}.txt", text=text)
                for text, doc_id in contexts.items()
            ]
        return (
            documents,
            cases,
            {"source": "records", "documents_from_contexts": self._document_rows is None},
        )


def case_from_record(
    row: Mapping[str, Any],
    row_number: int,
    *,
    known_documents: set[str] = frozenset(),  # type: ignore[assignment]
    contexts: dict[str, str] | None = None,
) -> BenchmarkCase:
    """One record (Heta case, flat row, or HoneyHive datapoint) → ``BenchmarkCase``."""
    if not isinstance(row, Mapping):
        raise BenchmarkFormatError(
            f"record must be a dict, got {type(row).__name__}", file=SOURCE, line=row_number
        )
    row = _nest({k: v for k, v in row.items() if not _missing(v)})
    if "expected" in row and "ground_truth" not in row:
        row.setdefault("case_id", row.get("id", f"case_{row_number}"))
        return case_from_row(row, file=SOURCE, line=row_number)
    inputs = _dict(row, "inputs", row_number, text_key="query")
    truth = _dict(row, "ground_truth", row_number, text_key="answer")
    flat = {**row, **inputs} if inputs else row
    fields: dict[str, Any] = {
        "case_id": _first(flat, ("case_id", "id"))
        or _first(truth, ("case_id", "id"))
        or f"case_{row_number}",
        "query": _first(flat, QUERY_KEYS),
        "expected": _expected({**row, **truth}, row_number, known_documents, contexts),
        "labels": mapping_field(row, "labels", file=SOURCE, line=row_number),
        "metadata": mapping_field(row, "metadata", file=SOURCE, line=row_number),
    }
    fields["case_id"] = str(fields["case_id"])
    if fields["query"] is None:
        where = "inputs" if inputs else "record"
        problem = f"no query: looked for {where}[{' | '.join(map(repr, QUERY_KEYS))}]"
        raise BenchmarkFormatError(problem, file=SOURCE, line=row_number)
    if "inputs" in row or "ground_truth" in row:
        fields["metadata"].update(
            inputs=row.get("inputs", {}), ground_truth=row.get("ground_truth", {})
        )
    try:
        return BenchmarkCase(**fields)
    except ValidationError as exc:
        raise BenchmarkFormatError(validation_problem(exc), file=SOURCE, line=row_number) from None


def _expected(
    source: Mapping[str, Any], row_number: int, known: set[str], contexts: dict[str, str] | None
) -> dict[str, Any]:
    answers = _first(source, ANSWER_KEYS)
    if isinstance(answers, (str, int, float)):
        answers = [answers]
    elif answers is not None and not isinstance(answers, (list, tuple)):
        problem = f"answers must be text or a list of texts, got {type(answers).__name__}"
        raise BenchmarkFormatError(problem, file=SOURCE, line=row_number)
    evidence = []
    for key in EVIDENCE_KEYS:
        for item in _as_list(source.get(key)):
            evidence.append(_evidence(key, item, known, contexts, row_number))
    check_evidence_grades(evidence, file=SOURCE, line=row_number)
    expected: dict[str, Any] = {"answers": [str(a) for a in answers or ()], "evidence": evidence}
    if source.get("value") is not None:
        expected["value"] = source["value"]
    return expected


def _evidence(
    key: str, item: Any, known: set[str], contexts: dict[str, str] | None, row_number: int
) -> Any:
    if isinstance(item, Mapping):
        return dict(item)
    if not isinstance(item, (str, int)):
        problem = f"{key} items must be strings or dicts, got {type(item).__name__}"
        raise BenchmarkFormatError(problem, file=SOURCE, line=row_number)
    text = str(item)
    if key == "reference_ids" or (key == "evidence" and text in known):
        return {"reference_id": text}
    if contexts is None or known:
        return {"text": text}
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        problem = f"{key} holds a lone UTF-16 surrogate that no text can hold"
        raise BenchmarkFormatError(problem, file=SOURCE, line=row_number) from None
    doc_id = contexts.setdefault(text, "ctx_" + sha1(data).hexdigest()[:12])
    return {"reference_id": doc_id, "text": text}


def _documents(rows: list[Any] | None, root_dir: Path) -> list[BenchmarkDocument]:
    if rows is None:
        return []
    ids = IdRegistry("document_id", SOURCE + " documents")
    documents = []
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, BenchmarkDocument):
            row = {k: v for k, v in dict(row).items() if not _missing(v)}
            if "document_id" not in row and "id" in row:
                row["document_id"] = row.pop("id")
            row = document_from_row(row, root_dir, file=SOURCE + " documents", line=number)
        ids.add(row.document_id, number)
        documents.append(row)
    return documents


def _rows(records: Any) -> list[Any]:
    """A list of rows from a list/iterable of dicts or a pandas DataFrame."""
    if hasattr(records, "to_dict") and hasattr(records, "columns"):
        return list(records.to_dict(orient="records"))
    if isinstance(records, (str, bytes, Mapping)):
        raise TypeError("records must be a list of dicts or a pandas DataFrame")
    return list(records)


def _nest(row: dict[str, Any]) -> dict[str, Any]:
    """Fold flattened columns (``inputs.question``, ``ground_truth.answer``) back into dicts."""
    for key in [
        k for k in row if isinstance(k, str) and k.startswith(("inputs.", "ground_truth."))
    ]:
        head, _, tail = key.partition(".")
        if isinstance(row.setdefault(head, {}), dict):
            row[head] = {**row[head], tail: row.pop(key)}
    return row


def _dict(row: Mapping[str, Any], key: str, row_number: int, *, text_key: str) -> dict[str, Any]:
    """``row[key]`` as a dict; a plain string stands for ``{text_key: string}``."""
    value = row.get(key)
    if value is None:
        return {}
    if isinstance(value, str):
        return {text_key: value}
    if not isinstance(value, Mapping):
        problem = f"{key!r} must be a dict, got {type(value).__name__}"
        raise BenchmarkFormatError(problem, file=SOURCE, line=row_number)
    return dict(value)


def _first(row: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        if not _missing(row.get(key)):
            return row[key]
    return None


def _as_list(value: Any) -> list[Any]:
    if _missing(value):
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _missing(value: Any) -> bool:
    """None or a DataFrame's NaN cell."""
    return value is None or (isinstance(value, float) and math.isnan(value))


__all__ = ["RecordsBenchmark", "case_from_record"]
