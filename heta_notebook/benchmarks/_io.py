"""Reading benchmark files with errors that name the file, the line and the problem.

Shared by the JSONL, BEIR and records loaders so every bad input is reported the same way:
``BenchmarkFormatError`` (a ``ValueError``) with ``file`` and ``line`` attributes, and
``BenchmarkWarning`` for problems a loader tolerates (e.g. qrels naming unknown ids).
"""

from __future__ import annotations

import json
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


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; malformed lines raise."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BenchmarkFormatError(
                    f"malformed JSON: {exc.msg}", file=path, line=number
                ) from exc
            if not isinstance(value, dict):
                kind = type(value).__name__
                raise BenchmarkFormatError(
                    f"each line must be a JSON object, got {kind}", file=path, line=number
                )
            yield number, value


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
