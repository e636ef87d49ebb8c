"""A benchmark from two JSONL files in heta-framework's layout (documents + cases).

documents.jsonl, one object per line::

    {"document_id": "d1", "name": "d1.txt", "media_type": "text/plain",
     "text": "..." | "data_base64": "..." | "path": "relative/or/absolute" | "source_uri": "...",
     "metadata": {...}}

cases.jsonl::

    {"case_id": "q1", "query": "...",
     "expected": {"answers": [...], "evidence": [{"reference_id", "locator", "text", "metadata"}],
                  "value": ..., "metadata": {...}},
     "labels": {...}, "metadata": {...}}

``name`` defaults to ``document.txt`` and ``media_type`` to ``text/plain``; everything else
is checked, and any problem raises ``BenchmarkFormatError`` naming the file and line.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from heta_notebook.benchmarks._base import InMemoryBenchmark, Parsed, default_answer_evaluators
from heta_notebook.benchmarks._io import (
    BenchmarkFormatError,
    IdRegistry,
    check_evidence_grades,
    mapping_field,
    read_jsonl,
    require_file,
    require_some_text,
    text_field,
    validation_problem,
)
from heta_notebook.schema._records import (
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkManifest,
    _one_line,
)

_CONTENT_KEYS = ("text", "data_base64", "path", "source_uri")


def as_manifest(manifest: BenchmarkManifest | Mapping[str, Any] | str) -> BenchmarkManifest:
    """Accept a manifest, a dict of its fields, or just a benchmark name."""
    if isinstance(manifest, BenchmarkManifest):
        return manifest
    if isinstance(manifest, str):
        return BenchmarkManifest(name=manifest)
    if not isinstance(manifest, Mapping):
        raise TypeError(
            f"manifest must be a BenchmarkManifest, a dict of its fields or a name, "
            f"got {type(manifest).__name__}"
        )
    try:
        return BenchmarkManifest.model_validate(dict(manifest))
    except ValidationError as exc:  # one line naming the fields, not pydantic's page
        fields = sorted(BenchmarkManifest.model_fields)
        raise ValueError(
            f"bad benchmark manifest: {_one_line(exc)} (fields: {', '.join(fields)})"
        ) from None


class JsonlBenchmark(InMemoryBenchmark):
    """heta-framework's JSONL benchmark layout; default evaluators: evidence recall@5, answer-contains."""

    def __init__(
        self,
        documents_jsonl: str | Path,
        cases_jsonl: str | Path,
        manifest: BenchmarkManifest | Mapping[str, Any] | str,
        *,
        evaluators: Sequence[Any] | None = None,
        root_dir: str | Path | None = None,
    ):
        self.documents_jsonl = Path(documents_jsonl)
        self.cases_jsonl = Path(cases_jsonl)
        root = Path(root_dir) if root_dir is not None else self.documents_jsonl.parent
        super().__init__(
            as_manifest(manifest),
            evaluators=evaluators,
            default_evaluators=default_answer_evaluators,
            root_dir=root,
        )

    @classmethod
    def from_folder(
        cls,
        folder: str | Path,
        manifest: BenchmarkManifest | Mapping[str, Any] | str | None = None,
        **kw: Any,
    ) -> JsonlBenchmark:
        """``folder/documents.jsonl`` + ``folder/cases.jsonl``; the manifest name defaults to the folder's."""
        folder = Path(folder)
        return cls(
            folder / "documents.jsonl", folder / "cases.jsonl", manifest or folder.name, **kw
        )

    def _parse(self) -> Parsed:
        documents_path = require_file(self.documents_jsonl, "documents_jsonl")
        cases_path = require_file(self.cases_jsonl, "cases_jsonl")
        documents = read_documents(documents_path, self._root_dir or documents_path.parent)
        require_some_text(documents, file=documents_path)
        cases = read_cases(cases_path)
        if not cases:
            raise BenchmarkFormatError("no cases: the file has no JSON lines", file=cases_path)
        facts = {"documents_jsonl": str(documents_path), "cases_jsonl": str(cases_path)}
        return documents, cases, facts


def read_documents(path: Path, root_dir: Path) -> list[BenchmarkDocument]:
    """Parse documents.jsonl; paths in rows are relative to ``root_dir``."""
    ids = IdRegistry("document_id", path)
    documents = []
    for line, row in read_jsonl(path):
        document = document_from_row(row, root_dir, file=path, line=line)
        ids.add(document.document_id, line)
        documents.append(document)
    return documents


def document_from_row(
    row: Mapping[str, Any], root_dir: Path, *, file: Any, line: int | None
) -> BenchmarkDocument:
    """One document row → ``BenchmarkDocument`` (exactly one of text/data_base64/path/source_uri)."""
    document_id = text_field(row, "document_id", file=file, line=line)
    present = [key for key in _CONTENT_KEYS if row.get(key) is not None]
    if len(present) != 1:
        problem = f"document {document_id!r} must set exactly one of {', '.join(_CONTENT_KEYS)}"
        raise BenchmarkFormatError(f"{problem} (got {present or 'none'})", file=file, line=line)
    fields: dict[str, Any] = {
        "document_id": document_id,
        "metadata": mapping_field(row, "metadata", file=file, line=line),
        **{key: row[key] for key in ("name", "media_type") if row.get(key) is not None},
    }
    fields.update(_content(present[0], row[present[0]], root_dir, file=file, line=line))
    try:
        return BenchmarkDocument(**fields)
    except ValidationError as exc:
        raise BenchmarkFormatError(validation_problem(exc), file=file, line=line) from None


def _content(key: str, value: Any, root_dir: Path, *, file: Any, line: int | None) -> dict:
    if key == "text":
        return {"text": str(value)}
    if key == "source_uri":
        return {"source_uri": str(value)}
    if key == "data_base64":
        try:
            return {"data": base64.b64decode(str(value), validate=True)}
        except (binascii.Error, ValueError) as exc:
            raise BenchmarkFormatError(
                f"data_base64 is not base64: {exc}", file=file, line=line
            ) from None
    target = Path(str(value))
    target = target if target.is_absolute() else root_dir / target
    if not target.is_file():
        raise BenchmarkFormatError(
            f"path {str(value)!r} not found ({target})", file=file, line=line
        )
    return {"path": target}


def read_cases(path: Path) -> list[BenchmarkCase]:
    """Parse cases.jsonl."""
    ids = IdRegistry("case_id", path)
    cases = []
    for line, row in read_jsonl(path):
        case = case_from_row(row, file=path, line=line)
        ids.add(case.case_id, line)
        cases.append(case)
    return cases


def case_from_row(row: Mapping[str, Any], *, file: Any, line: int | None) -> BenchmarkCase:
    """One case row → ``BenchmarkCase``; ``expected.answers`` may be a single string."""
    case_id = text_field(row, "case_id", file=file, line=line)
    query = text_field(row, "query", file=file, line=line)
    expected = mapping_field(row, "expected", file=file, line=line)
    answers = expected.get("answers")
    if answers is not None:
        answers = [answers] if isinstance(answers, (str, int, float)) else answers
        if not isinstance(answers, list):
            raise BenchmarkFormatError("expected.answers must be a list", file=file, line=line)
        expected["answers"] = [str(a) if isinstance(a, (int, float)) else a for a in answers]
    if expected.get("evidence") is not None and not isinstance(expected["evidence"], list):
        raise BenchmarkFormatError("expected.evidence must be a list", file=file, line=line)
    if expected.get("evidence"):
        expected["evidence"] = [
            dict(e) if isinstance(e, Mapping) else e for e in expected["evidence"]
        ]
        check_evidence_grades(expected["evidence"], file=file, line=line)
    try:
        return BenchmarkCase(
            case_id=case_id,
            query=query,
            expected=expected,
            labels=mapping_field(row, "labels", file=file, line=line),
            metadata=mapping_field(row, "metadata", file=file, line=line),
        )
    except ValidationError as exc:
        problem = f"case {case_id!r}: {validation_problem(exc)}"
        raise BenchmarkFormatError(problem, file=file, line=line) from None


__all__ = ["JsonlBenchmark", "as_manifest", "read_cases", "read_documents"]
