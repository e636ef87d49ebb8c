"""A label set: the original qrels, never modified, plus added labels with provenance.

Files (``LabelSet.save(path)`` writes both, atomically; ``LabelSet.load(path)`` reads them):

- ``{path}.qrels``: TREC qrels, ``query_id 0 doc_id grade`` per line, the labels in force
  (every original row, then each added label for a pair the original did not judge);
- ``{path}.labels.json``: the sidecar, ``{"format": "heta_notebook.labels", "version": 1,
  "name", "original": {"pairs", "sha256"}, "added": [label, ...]}``. Each added label is
  ``{"query_id", "doc_id", "grade", "source": "human" | "judge", "who", "model",
  "prompt_hash", "time", "reason"}`` (the last four may be null), in the order made.

A set opened with a path (``LabelSet.open``, ``load(autosave=True)``) appends every label to
``{path}.journal.jsonl`` as it is made (one flushed line, the sidecar's label object), so a
crash or a kernel restart loses nothing; ``save`` folds the journal into the two files.

Rules: an added label never replaces an original one in the labels in force (it is kept, for
agreement); among added labels for one pair a human's wins over a judge's, then the later
one. Loading checks the qrels file against the sidecar (the original's hash, every label in
force) and names the file, line and field of anything that does not fit. ``save`` writes only
over a label set's own files: where ``{path}.qrels`` or the sidecar exists, they must be a
save (sidecar and qrels agreeing) of a set on the same original qrels, else it refuses naming
the file; and never over the file the original was read from (``LabelSet.from_qrels``). So
the original qrels (a benchmark's, anyone's) are never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from heta_notebook._util.paths import atomic_write_text
from heta_notebook.benchmarks._io import BenchmarkFormatError, require_file
from heta_notebook.benchmarks._trec_read import read_trec_qrels as strict_qrels

Qrels = dict[str, dict[str, int]]
Source = Literal["human", "judge"]
SOURCES: tuple[Source, ...] = ("human", "judge")
FORMAT, VERSION = "heta_notebook.labels", 1
_FIELDS = ("query_id", "doc_id", "grade", "source", "who", "model", "prompt_hash", "time", "reason")


def now() -> str:
    """The time a label is made: UTC, ISO 8601, seconds."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Label:
    """One added relevance label and where it came from (a person's or a judge's)."""

    query_id: str
    doc_id: str
    grade: int
    source: Source
    who: str
    model: str | None = None
    prompt_hash: str | None = None
    time: str = field(default_factory=now)
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {self.source!r}")
        if type(self.grade) is not int:
            raise ValueError(f"grade must be an integer, got {self.grade!r}")
        for name in ("query_id", "doc_id", "who"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{name} must be a non-empty string, got {getattr(self, name)!r}")

    @property
    def pair(self) -> tuple[str, str]:
        """``(query_id, doc_id)``."""
        return self.query_id, self.doc_id


class LabelSet:
    """Original qrels (read-only) plus added labels; ``qrels()`` are the labels in force."""

    def __init__(
        self,
        original: Mapping[str, Mapping[str, int]],
        added: Iterable[Label] = (),
        *,
        name: str = "labels",
        path: str | Path | None = None,
        origin: str | Path | None = None,
    ) -> None:
        frozen = {str(q): {str(d): int(g) for d, g in docs.items()} for q, docs in original.items()}
        self._original = MappingProxyType({q: MappingProxyType(d) for q, d in frozen.items()})
        self._added: list[Label] = []
        self._force: Qrels = {q: dict(d) for q, d in frozen.items()}
        self._winner: dict[tuple[str, str], Label] = {}
        self.name = name
        self.path = None if path is None else Path(path)
        self.origin = None if origin is None else Path(origin)  # the original's file, never written
        for label in added:
            self._add(label)

    @classmethod
    def from_qrels(cls, path: str | Path, **kw: Any) -> LabelSet:
        """A set whose original is the qrels file at ``path`` (TREC, or BEIR TSV); the set
        remembers the file as its ``origin`` and never saves over it."""
        kw.setdefault("name", Path(path).stem)
        return cls(strict_qrels(path), origin=path, **kw)

    # -- reading ---------------------------------------------------------------------

    @property
    def original(self) -> Mapping[str, Mapping[str, int]]:
        """The qrels the set started from, read-only."""
        return self._original

    @property
    def added(self) -> tuple[Label, ...]:
        """Every added label, in the order made (superseded ones included)."""
        return tuple(self._added)

    def qrels(self) -> Qrels:
        """The labels in force, ``{query_id: {doc_id: grade}}`` (a copy)."""
        return {q: dict(d) for q, d in self._force.items()}

    def judged(self, query_id: str, doc_id: str) -> bool:
        """Whether the pair has a label in force."""
        return doc_id in self._force.get(query_id, ())

    def grade(self, query_id: str, doc_id: str) -> int | None:
        """The grade in force for a pair, or None when unjudged."""
        return self._force.get(query_id, {}).get(doc_id)

    def labels(self, source: Source | None = None) -> dict[tuple[str, str], Label]:
        """The last added label per pair (a human's over a judge's), optionally of one source."""
        out: dict[tuple[str, str], Label] = {}
        for label in self._added:
            if source is not None and label.source != source:
                continue
            old = out.get(label.pair)
            if old is None or source is not None or _rank(label) >= _rank(old):
                out[label.pair] = label
        return out

    def fingerprint(self) -> str:
        """sha256 of the labels in force: reports scored on different label sets differ."""
        return _hash(self._force)

    def original_fingerprint(self) -> str:
        """sha256 of the original qrels."""
        return _hash(self._original)

    def __len__(self) -> int:
        return sum(len(d) for d in self._force.values())

    def __repr__(self) -> str:
        counts = {s: sum(1 for x in self.labels().values() if x.source == s) for s in SOURCES}
        original = sum(len(d) for d in self._original.values())
        return (
            f"<LabelSet {self.name!r}: {original} original labels, {counts['judge']} by a judge, "
            f"{counts['human']} by people; {len(self)} in force; {self.fingerprint()[:12]}>"
        )

    # -- adding ----------------------------------------------------------------------

    def add(self, label: Label) -> Label:
        """Add one label (journaled at once when the set has a ``path``)."""
        self._add(label)
        if self.path is not None:
            journal = journal_of(self.path)
            with journal.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(asdict(label), ensure_ascii=False) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
        return label

    def undo(self, label: Label) -> None:
        """Take back an added label (the last one equal to ``label``); a set with a ``path``
        is saved again at once."""
        index = max((i for i, x in enumerate(self._added) if x == label), default=None)
        if index is None:
            raise ValueError(f"not an added label of this set: {label!r}")
        kept = self._added[:index] + self._added[index + 1 :]
        self._added, self._winner = [], {}
        self._force = {q: dict(d) for q, d in self._original.items()}
        for old in kept:
            self._add(old)
        if self.path is not None:
            self.save(self.path)

    def extend(self, labels: Iterable[Label]) -> None:
        """Add many labels (saved once at the end when the set has a ``path``)."""
        for label in labels:
            self._add(label)
        if self.path is not None:
            self.save(self.path)

    def _add(self, label: Label) -> None:
        self._added.append(label)
        if label.doc_id in self._original.get(label.query_id, ()):
            return  # never replaces an original label
        old = self._winner.get(label.pair)
        if old is None or _rank(label) >= _rank(old):
            self._winner[label.pair] = label
            self._force.setdefault(label.query_id, {})[label.doc_id] = label.grade

    # -- files -----------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write ``{path}.qrels`` and ``{path}.labels.json`` (see the module docstring); refuse
        (``FileExistsError`` naming the file) to write over files that are not a save of a set
        on the same original qrels, or over the file the original was read from."""
        qrels_path, sidecar = files_of(path)
        self._check_target(qrels_path, sidecar)
        lines = [f"{q} 0 {d} {g}\n" for q, docs in self._force.items() for d, g in docs.items()]
        atomic_write_text(qrels_path, "".join(lines))
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "original": {
                "pairs": [[q, d, g] for q, docs in self._original.items() for d, g in docs.items()],
                "sha256": self.original_fingerprint(),
            },
            "added": [asdict(label) for label in self._added],
        }
        atomic_write_text(sidecar, json.dumps(meta, ensure_ascii=False, indent=1) + "\n")
        journal_of(path).unlink(missing_ok=True)  # folded into the sidecar
        return qrels_path

    @classmethod
    def load(cls, path: str | Path, *, autosave: bool = False) -> LabelSet:
        """Read a saved set; ``autosave=True`` saves every later ``add`` to the same files."""
        labels = _read_saved(*files_of(path))
        journal = journal_of(path)
        if journal.exists():
            for line, raw in enumerate(journal.read_text(encoding="utf-8").splitlines(), 1):
                if raw.strip():
                    labels._add(_label_of(_json_line(raw, journal, line), journal, line - 1))
        labels.path = Path(path) if autosave else None
        return labels

    @classmethod
    def open(
        cls, path: str | Path, original: Mapping[str, Mapping[str, int]], **kw: Any
    ) -> LabelSet:
        """The set saved at ``path`` if it exists (its original must be ``original``), else a
        new one there (refused when a ``{path}.qrels`` that no set saved is in the way); every
        ``add`` is saved as it is made."""
        if files_of(path)[1].exists():
            labels = cls.load(path, autosave=True)
            if labels.original_fingerprint() != _hash(original):
                raise ValueError(f"{files_of(path)[1]}: saved for other original qrels")
            return labels
        labels = cls(original, path=path, **kw)
        labels.save(path)
        return labels

    def _check_target(self, qrels_path: Path, sidecar: Path) -> None:
        """Raise unless ``save`` may write ``qrels_path`` and ``sidecar``: both absent, or a
        save of a set on this set's original qrels; never the file the original came from."""
        advice = "label sets never write over qrels they did not save: choose another path"
        for target in (qrels_path, sidecar):
            if self.origin is not None and _same_file(target, self.origin):
                raise FileExistsError(
                    f"{target}: is the file this label set's original qrels were read from; "
                    f"the original is never overwritten: choose another path"
                )
        if not qrels_path.exists() and not sidecar.exists():
            return
        if not sidecar.exists():
            raise FileExistsError(
                f"{qrels_path}: exists and no {sidecar.name} says a label set saved it "
                f"(the benchmark's original qrels?); {advice}"
            )
        try:
            saved = _read_saved(qrels_path, sidecar)
        except BenchmarkFormatError as exc:
            raise FileExistsError(f"{exc} (it is not a label set's save); {advice}") from None
        if saved.original_fingerprint() != self.original_fingerprint():
            raise FileExistsError(
                f"{sidecar}: a label set saved for other original qrels; {advice}"
            )


def _read_saved(qrels_path: Path, sidecar: Path) -> LabelSet:
    """The set saved in ``qrels_path`` and ``sidecar`` (journal not replayed), each file
    checked against the other."""
    meta = _read_sidecar(sidecar)
    original = _original_of(meta, sidecar)
    added = [_label_of(row, sidecar, i) for i, row in enumerate(meta["added"])]
    labels = LabelSet(original, added, name=str(meta.get("name") or "labels"))
    _check_qrels(read_trec_qrels(qrels_path), labels, qrels_path)
    return labels


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (a path that does not exist names none)."""
    try:
        return a.samefile(b)
    except OSError:
        return False


def _rank(label: Label) -> int:
    return 1 if label.source == "human" else 0


def _hash(qrels: Mapping[str, Mapping[str, int]]) -> str:
    rows = sorted((q, d, int(g)) for q, docs in qrels.items() for d, g in docs.items())
    return hashlib.sha256(json.dumps(rows).encode("utf-8")).hexdigest()


def files_of(path: str | Path) -> tuple[Path, Path]:
    """``({path}.qrels, {path}.labels.json)``."""
    path = Path(path)
    return path.with_name(path.name + ".qrels"), path.with_name(path.name + ".labels.json")


def journal_of(path: str | Path) -> Path:
    """``{path}.journal.jsonl``: labels made since the last ``save``."""
    path = Path(path)
    return path.with_name(path.name + ".journal.jsonl")


def _json_line(raw: str, path: Path, line: int) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BenchmarkFormatError(f"not JSON: {exc.msg}", file=path, line=line) from None


def read_trec_qrels(path: str | Path) -> Qrels:
    """A label set's TREC qrels (``query 0 doc grade``) → ``{query: {doc: grade}}``, read by
    the one strict qrels reader (``benchmarks._trec_read``: bytes checked as UTF-8, grades
    whole numbers as trec_eval reads them); an empty file is an empty set. Any refusal is a
    ``BenchmarkFormatError`` (its ``TrecFormatError``) naming the file and line."""
    path = require_file(Path(path), "qrels")
    return strict_qrels(path, format="trec", allow_empty=True)


def _read_sidecar(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise BenchmarkFormatError("label set sidecar not found", file=path)
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BenchmarkFormatError(f"not JSON: {exc.msg}", file=path, line=exc.lineno) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise BenchmarkFormatError(f'field "format" must be {FORMAT!r}', file=path)
    if meta.get("version") != VERSION:
        raise BenchmarkFormatError(
            f'field "version" is {meta.get("version")!r}; this library reads {VERSION}', file=path
        )
    if not isinstance(meta.get("added"), list):
        raise BenchmarkFormatError('field "added" must be a list of labels', file=path)
    return meta


def _original_of(meta: dict[str, Any], path: Path) -> Qrels:
    block = meta.get("original")
    pairs = block.get("pairs") if isinstance(block, dict) else None
    if not isinstance(block, dict) or not isinstance(pairs, list):
        raise BenchmarkFormatError('field "original.pairs" must be a list', file=path)
    original: Qrels = {}
    for i, row in enumerate(pairs):
        if not (isinstance(row, list) and len(row) == 3 and type(row[2]) is int):
            raise BenchmarkFormatError(
                f'"original.pairs[{i}]" must be [query_id, doc_id, integer grade]', file=path
            )
        original.setdefault(str(row[0]), {})[str(row[1])] = row[2]
    if _hash(original) != block.get("sha256"):
        raise BenchmarkFormatError('"original.sha256" does not match "original.pairs"', file=path)
    return original


def _label_of(row: Any, path: Path, index: int) -> Label:
    if not isinstance(row, dict):
        raise BenchmarkFormatError(f'"added[{index}]" must be an object', file=path)
    unknown = set(row) - set(_FIELDS)
    if unknown:
        raise BenchmarkFormatError(
            f'"added[{index}]" has unknown fields {sorted(unknown)}', file=path
        )
    try:
        return Label(**row)
    except (TypeError, ValueError) as exc:
        raise BenchmarkFormatError(f'"added[{index}]": {exc}', file=path) from None


def _check_qrels(qrels: Qrels, labels: LabelSet, path: Path) -> None:
    expected = labels.qrels()
    if qrels != expected:
        pairs = {(q, d) for q, docs in qrels.items() for d in docs}
        wanted = {(q, d) for q, docs in expected.items() for d in docs}
        diff = sorted(pairs ^ wanted) or sorted(
            (q, d) for q, d in pairs if qrels[q][d] != expected[q][d]
        )
        raise BenchmarkFormatError(
            f"does not match its sidecar (first differing pair {diff[0]}): edit neither by hand",
            file=path,
        )


__all__ = ["Label", "LabelSet", "files_of", "read_trec_qrels"]
