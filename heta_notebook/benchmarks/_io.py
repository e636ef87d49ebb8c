"""Reading benchmark files with errors that name the file, the line and the problem.

Shared by the JSONL, BEIR and records loaders so every bad input is reported the same way:
``BenchmarkFormatError`` (a ``ValueError``) with ``file`` and ``line`` attributes, and
``BenchmarkWarning`` for problems a loader tolerates (e.g. qrels naming unknown ids).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

T = TypeVar("T")


class BenchmarkFormatError(ValueError):
    """A benchmark input that cannot be read; ``file`` and ``line`` say where (when known)."""

    def __init__(self, problem: str, *, file: str | Path | None = None, line: int | None = None):
        self.problem = problem
        self.file = str(file) if file is not None else None
        self.line = line
        where = self.file or ""
        if line is not None:
            where = f"{where}:{line}" if where else f"line {line}"
        super().__init__(f"{where}: {problem}" if where else problem)


class BenchmarkWarning(UserWarning):
    """A tolerated problem in benchmark input (rows were skipped); the message gives a count."""


def require_file(path: Path, what: str) -> Path:
    """Return ``path`` if it is an existing file, else raise ``BenchmarkFormatError`` naming it."""
    if not path.is_file():
        problem = "is a directory, not a file" if path.is_dir() else "file not found"
        raise BenchmarkFormatError(f"{what} {problem}", file=path)
    return path


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)``; bytes that are not UTF-8 raise naming line and byte offset."""
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                problem = (
                    f"not UTF-8: byte {raw[exc.start]:#04x} at byte offset {offset + exc.start} "
                    f"(column {exc.start + 1}); save the file as UTF-8"
                )
                raise BenchmarkFormatError(problem, file=path, line=number) from None
            offset += len(raw)
            yield number, text


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; malformed lines raise."""
    for number, line in read_lines(path):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BenchmarkFormatError(
                f"malformed JSON: {exc.msg} (column {exc.colno})", file=path, line=number
            ) from None
        except (ValueError, RecursionError) as exc:  # huge integers, absurd nesting
            raise BenchmarkFormatError(f"unreadable JSON: {exc}", file=path, line=number) from None
        if not isinstance(value, dict):
            kind = type(value).__name__
            raise BenchmarkFormatError(
                f"each line must be a JSON object, got {kind}", file=path, line=number
            )
        check_no_surrogates(line, value, file=path, line=number)
        yield number, value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def check_no_surrogates(text: str, value: Any, *, file: Any, line: int | None = None) -> None:
    """Refuse a lone UTF-16 surrogate (``"\\ud800"`` in JSON): no UTF-8 text can hold it, so
    ids and texts made of it fail later, far from the file (pairs decode to one character)."""
    if not _SURROGATE_ESCAPE.search(text):
        return
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = f"\\u{ord(exc.object[exc.start]):04x}"
        problem = f"a lone UTF-16 surrogate escape ({bad}) that no text can hold"
        raise BenchmarkFormatError(problem, file=file, line=line) from None


def relevance_grade(value: Any, *, field: str, file: Any, line: int | None) -> int:
    """An integer relevance grade; ``2.0`` and ``"2"`` are accepted, ``2.7``/``"high"`` refused.

    Refusing (rather than rounding) keeps a benchmark's scores what its author meant.
    """
    grade = value
    if isinstance(value, str):
        try:
            grade = float(value.strip())
        except ValueError:
            grade = None
    if isinstance(grade, float) and grade.is_integer():
        grade = int(grade)
    if type(grade) is not int:
        problem = f"{field} must be an integer grade (0, 1, 2, ...), got {value!r}"
        raise BenchmarkFormatError(problem, file=file, line=line)
    return grade


def check_evidence_grades(evidence: Any, *, file: Any, line: int | None) -> None:
    """Make every ``metadata.relevance`` in a list of evidence dicts an int, or raise."""
    for index, item in enumerate(evidence or ()):
        metadata = item.get("metadata") if isinstance(item, Mapping) else None
        if isinstance(metadata, Mapping) and "relevance" in metadata:
            field = f"expected.evidence[{index}].metadata.relevance"
            grade = relevance_grade(metadata["relevance"], field=field, file=file, line=line)
            item["metadata"] = {**metadata, "relevance": grade}


def require_some_text(documents: Any, *, file: Any) -> None:
    """Refuse a corpus whose documents are all empty text: there would be nothing to search."""
    texts = [d.text for d in documents]
    if texts and all(t is not None and not t.strip() for t in texts):
        problem = f"all {len(texts)} documents are empty: there is nothing to search"
        raise BenchmarkFormatError(problem, file=file)


def validation_problem(exc: ValidationError) -> str:
    """A one-line summary of a pydantic error: ``field: message; ...``."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error.get("loc", ())) or "record"
        parts.append(f"{field}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)


class IdRegistry:
    """Remembers where each id was first seen so a duplicate names both places."""

    def __init__(self, what: str, file: str | Path):
        self.what = what
        self.file = file
        self.seen: dict[str, int] = {}

    def add(self, identifier: str, line: int) -> None:
        """Record ``identifier`` at ``line``; raise if it was seen before."""
        first = self.seen.setdefault(identifier, line)
        if first != line:
            raise BenchmarkFormatError(
                f"duplicate {self.what} {identifier!r} (first seen on line {first})",
                file=self.file,
                line=line,
            )


def text_field(row: Mapping[str, Any], key: str, *, file: Any, line: int | None) -> str:
    """``row[key]`` as stripped text (numbers allowed), or a ``BenchmarkFormatError``."""
    value = row.get(key)
    if value is None or isinstance(value, (dict, list, bool)):
        found = "missing" if value is None else f"not text ({type(value).__name__})"
        raise BenchmarkFormatError(f"field {key!r} is {found}", file=file, line=line)
    text = str(value).strip()
    if not text:
        raise BenchmarkFormatError(f"field {key!r} is empty", file=file, line=line)
    return text


def mapping_field(row: Mapping[str, Any], key: str, *, file: Any, line: int | None) -> dict:
    """``row[key]`` as a dict (missing/None → ``{}``), or a ``BenchmarkFormatError``."""
    value = row.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problem = f"field {key!r} must be an object, got {type(value).__name__}"
        raise BenchmarkFormatError(problem, file=file, line=line)
    return dict(value)
