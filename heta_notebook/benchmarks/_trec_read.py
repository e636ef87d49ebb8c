"""Strict readers of outside TREC files: runs, and qrels in TREC or BEIR TSV layout.

Reading rule (what trec_eval's C reader accepts, minus what it would silently misread):

- the file is bytes; lines end at ``\\n`` (a trailing ``\\r`` is dropped); fields are separated
  by ASCII whitespace (space, tab, ``\\v``, ``\\f``), as trec_eval splits them; each field must
  be UTF-8, else the error names the file, the line and the byte's column;
- a run line is ``qid Q0 doc rank score tag`` (6 fields); the score is a decimal number in
  full (``[+-]digits[.digits][e[+-]digits]``, ASCII digits; what C's ``strtod`` reads when it
  reads the whole field) and finite. ``1_0``, ``0x1p3``, ``inf``, ``nan`` and non-ASCII digits
  are refused: Python's ``float`` would read ``1_0`` as 10 where trec_eval reads 1;
- a TREC qrels line is ``qid iter doc grade`` (4 fields), a BEIR qrels line
  ``query-id<TAB>corpus-id<TAB>score`` (3 fields, optional header); the grade is an integer in
  full (``[+-]digits``): ``1e3``, ``1.0`` and ``1_0`` are refused (trec_eval's ``atol``
  would read 1);
- a document listed twice for one query is an error (pytrec_eval refuses it too).

Every refusal is a ``TrecFormatError`` (a ``BenchmarkFormatError``, so a ValueError with
``file`` and ``line``) whose message starts ``file:line:``; a file in another layout is named
as such ("looks like a TREC run file"). The grade rule (:func:`qrels_grade`) is the one every
qrels reader uses: this one, BEIR's loader and the label sets' ``.qrels`` files.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from pathlib import Path

from heta_notebook.benchmarks._io import BenchmarkFormatError

PathArg = str | os.PathLike[str]
SCORE = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
GRADE = re.compile(rb"[+-]?[0-9]+")
QRELS_FORMATS = ("auto", "trec", "beir")
_LAYOUTS = {
    6: "a TREC run file (qid Q0 doc rank score tag)",
    4: "a TREC qrels file (qid iter doc grade)",
    3: "a BEIR qrels TSV (query-id corpus-id score)",
}


class TrecFormatError(BenchmarkFormatError):
    """A TREC (or BEIR qrels) file that cannot be read as its format says; names file:line."""


def read_trec_run(path: PathArg) -> dict[str, dict[str, float]]:
    """Read a TREC run into ``{query id: {document id: score}}`` (strict; module docstring)."""
    file = Path(path)
    run: dict[str, dict[str, float]] = {}
    for number, fields in _fields(file, "TREC run"):
        if len(fields) != 6:
            raise TrecFormatError(_layout(fields, 6, "a TREC run line"), file=file, line=number)
        qid, _, doc, _, score, _ = fields
        value = _score(file, number, score)
        query = _text(file, number, qid)
        docs = run.setdefault(query, {})
        name = _text(file, number, doc)
        if name in docs:
            raise TrecFormatError(
                f"document {name!r} listed twice for query {query!r}", file=file, line=number
            )
        docs[name] = value
    if not run:
        raise TrecFormatError("the TREC run file has no lines", file=file)
    return run


def read_trec_qrels(
    path: PathArg,
    format: str = "auto",  # noqa: A002
    *,
    allow_empty: bool = False,
) -> dict[str, dict[str, int]]:
    """Read qrels into ``{query id: {document id: grade}}``: TREC (``qid iter doc grade``) or
    BEIR TSV (``query-id corpus-id score``, optional header); ``format="auto"`` tells them
    apart by the first line, and a file of another layout is an error naming it. A file with
    no judgments is an error unless ``allow_empty`` (a label set with no labels yet)."""
    if format not in QRELS_FORMATS:
        raise ValueError(f"format must be one of {', '.join(QRELS_FORMATS)} (got {format!r})")
    file = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    width = None if format == "auto" else (4 if format == "trec" else 3)
    for number, fields in _fields(file, "qrels"):
        if width is None and _is_beir_header(fields):
            width = 3
            continue
        if width == 3 and not qrels and _is_beir_header(fields):
            continue
        if width is None:
            width = len(fields) if len(fields) in (3, 4) else 4
        if len(fields) != width:
            what = "a TREC qrels line" if width == 4 else "a BEIR qrels line"
            raise TrecFormatError(_layout(fields, width, what), file=file, line=number)
        qid, doc, grade = (fields[0], fields[2], fields[3]) if width == 4 else fields
        query = _text(file, number, qid)
        docs = qrels.setdefault(query, {})
        name = _text(file, number, doc)
        if name in docs:
            raise TrecFormatError(
                f"document {name!r} judged twice for query {query!r}", file=file, line=number
            )
        docs[name] = qrels_grade(grade, file, number)
    if not qrels and not allow_empty:
        raise TrecFormatError("the qrels file has no judgments", file=file)
    return qrels


# --------------------------------------------------------------------------- the rule


def _fields(file: Path, what: str) -> Iterator[tuple[int, list[bytes]]]:
    """(line number, ASCII-whitespace fields) of every non-blank line."""
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"no {what} file at {file}") from None
    except IsADirectoryError:
        raise TrecFormatError(f"is a folder, not a {what} file", file=file) from None
    for number, line in enumerate(data.split(b"\n"), start=1):
        line = line.removesuffix(b"\r")
        fields = line.split()
        if fields:
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise TrecFormatError(
                    f"the line is not UTF-8 (byte 0x{line[exc.start]:02x} at "
                    f"column {exc.start + 1}): {line[:80]!r}",
                    file=file,
                    line=number,
                ) from None
            yield number, fields


def _text(file: Path, number: int, field: bytes) -> str:
    try:
        return field.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TrecFormatError(
            f"field {field[:40]!r} is not UTF-8 "
            f"(byte 0x{field[exc.start]:02x} at position {exc.start + 1} of the field)",
            file=file,
            line=number,
        ) from None


def _score(file: Path, number: int, field: bytes) -> float:
    if not SCORE.fullmatch(field):
        raise TrecFormatError(
            f"score {_shown(field)} is not a number as trec_eval reads one "
            "(a decimal: digits, an optional '.', an optional exponent)",
            file=file,
            line=number,
        )
    value = float(field)
    if not math.isfinite(value):
        raise TrecFormatError(f"score {_shown(field)} is not finite", file=file, line=number)
    return value


def qrels_grade(field: bytes | str, file: str | Path, line: int) -> int:
    """A qrels grade read as trec_eval reads one, in full: ``[+-]`` ASCII digits; ``1e3``,
    ``1.0``, ``1_0`` and non-ASCII digits are a ``TrecFormatError`` naming file and line
    (Python's ``int``/``float`` would take some of them, ``atol`` reads them otherwise)."""
    raw = field.encode("utf-8", "surrogatepass") if isinstance(field, str) else field
    if not GRADE.fullmatch(raw):
        raise TrecFormatError(
            f"relevance grade {_shown(raw)} is not an integer "
            "(qrels grades are whole numbers such as 0, 1, 2)",
            file=file,
            line=line,
        )
    return int(raw)


def _shown(field: bytes) -> str:
    return repr(field[:40].decode("utf-8", "backslashreplace"))


def _layout(fields: list[bytes], width: int, what: str) -> str:
    looks = _LAYOUTS.get(len(fields))
    if len(fields) == 3 and not (_beir_like(fields) or _is_beir_header(fields)):
        looks = None
    hint = f"; the line looks like {looks}" if looks and len(fields) != width else ""
    text = b" ".join(fields)[:80].decode("utf-8", "backslashreplace")
    return f"{what} has {width} fields, got {len(fields)}{hint}: {text!r}"


def _beir_like(fields: list[bytes]) -> bool:
    return bool(GRADE.fullmatch(fields[-1]))


def _is_beir_header(fields: list[bytes]) -> bool:
    names = [f.lower().replace(b"_", b"-") for f in fields]
    return names == [b"query-id", b"corpus-id", b"score"]


__all__ = ["QRELS_FORMATS", "TrecFormatError", "qrels_grade", "read_trec_qrels", "read_trec_run"]
