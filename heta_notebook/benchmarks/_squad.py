"""A question-answering benchmark from a SQuAD 1.1 or 2.0 JSON file (the official layout).

How SQuAD becomes documents and cases:

- **Documents**: each paragraph (``context``), id ``{title}_p{index}`` (title made a safe path
  part), ``metadata``: ``title``, ``article_index``, ``paragraph_index``.
- **Cases**: each question (``qas[]``), ``case_id`` its ``id``; ``expected.answers`` the
  answer texts (duplicates among the crowd answers dropped, order kept); expected evidence
  the paragraph it was asked about (``reference_id`` = the document id, with the answers'
  character offsets in ``metadata.answer_starts``). Version 2 questions carry
  ``expected.metadata.abstain`` (true for ``is_impossible``; their ``plausible_answers``
  stay in ``case.metadata``).
- **Labels**: ``answerable`` = ``has_answer`` / ``no_answer`` (SQuAD's HasAns / NoAns split, for
  ``summary(by="answerable")``) and ``title``.
- **Default evaluators**: official exact match and F1, evidence recall@5, and for 2.0 the
  abstention score (:mod:`heta_notebook.evaluators._squad`).
- **Bad input** raises ``BenchmarkFormatError`` naming the file and the field path, e.g.
  ``data[0].paragraphs[3].qas[1].question``.

The version is the file's ``"version"`` (``v2.0`` → 2) or, without one, 2 when any question
has ``is_impossible``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from heta_notebook.benchmarks._base import InMemoryBenchmark, Parsed
from heta_notebook.benchmarks._io import BenchmarkFormatError, check_no_surrogates, require_file
from heta_notebook.schema._abstain import ABSTAIN_EXPECTED
from heta_notebook.schema._records import (
    BenchmarkCase,
    BenchmarkDocument,
    BenchmarkEvidence,
    BenchmarkExpected,
    BenchmarkManifest,
)

SQUAD_HOMEPAGE = "https://rajpurkar.github.io/SQuAD-explorer/"
SQUAD2_CITATION = (
    "Rajpurkar, Jia and Liang (2018). Know What You Don't Know: Unanswerable Questions for SQuAD."
)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class SquadBenchmark(InMemoryBenchmark):
    """SQuAD 1.1 / 2.0 JSON: paragraphs → documents, questions → cases, answers → expected."""

    def __init__(
        self,
        path: str | Path,
        *,
        name: str = "squad",
        split: str = "dev",
        version: str | None = None,
        evaluators: Sequence[Any] | None = None,
        evidence_k: int = 5,
        manifest_fields: Mapping[str, Any] | None = None,
    ):
        self.path = Path(path)
        self.evidence_k = evidence_k
        self.squad_version: int | None = None
        fields = {
            "homepage": SQUAD_HOMEPAGE,
            "license": "CC BY-SA 4.0",
            "metadata": {"file": self.path.name},
            **dict(manifest_fields or {}),
        }
        manifest = BenchmarkManifest(
            name=name,
            version=version or "local",
            split=split,
            task_type="question_answering",
            **fields,
        )
        super().__init__(
            manifest,
            evaluators=evaluators,
            default_evaluators=self._defaults,
            root_dir=self.path.parent,
        )

    @classmethod
    def sample(cls, **options: Any) -> SquadBenchmark:
        """The SQuAD 2.0 sample shipped with the package (2 dev articles, 626 questions)."""
        options.setdefault("name", "squad2_sample")
        options.setdefault("version", "2.0")
        options.setdefault("manifest_fields", {"citation": SQUAD2_CITATION})
        return cls(squad2_sample_path(), **options)

    def _defaults(self) -> tuple[Any, ...]:
        from heta_notebook.evaluators._squad import squad_default_evaluators

        self._loaded()
        return squad_default_evaluators(self.squad_version or 2, k=self.evidence_k)

    def _parse(self) -> Parsed:
        path = require_file(self.path, "SQuAD file")
        try:
            text = path.read_text(encoding="utf-8")
            root = json.loads(text)
        except json.JSONDecodeError as exc:
            problem = f"malformed JSON: {exc.msg}"
            raise BenchmarkFormatError(problem, file=path, line=exc.lineno) from exc
        except UnicodeDecodeError as exc:
            raise BenchmarkFormatError(f"not UTF-8 text: {exc.reason}", file=path) from exc
        except (ValueError, RecursionError) as exc:  # huge integers, absurd nesting
            raise BenchmarkFormatError(f"unreadable JSON: {exc}", file=path) from None
        check_no_surrogates(text, root, file=path)
        if not isinstance(root, dict):
            raise BenchmarkFormatError("the top level must be an object with 'data'", file=path)
        articles = _list(root, "data", "", path)
        version = _version(root, articles, path)
        self.squad_version = version
        reader = _Reader(path, version)
        for a, article in enumerate(articles):
            reader.article(article, f"data[{a}]", a)
        if not reader.cases:
            raise BenchmarkFormatError("no cases: 'data' holds no questions ('qas')", file=path)
        facts = {
            "squad_version": version,
            "articles": len(articles),
            "has_answer": reader.counts["has_answer"],
            "no_answer": reader.counts["no_answer"],
        }
        return reader.documents, reader.cases, facts


class _Reader:
    """Walks articles → paragraphs → questions, naming the field path of any problem."""

    def __init__(self, path: Path, version: int):
        self.path = path
        self.version = version
        self.documents: list[BenchmarkDocument] = []
        self.cases: list[BenchmarkCase] = []
        self.counts = {"has_answer": 0, "no_answer": 0}
        self.case_where: dict[str, str] = {}
        self.doc_ids: set[str] = set()

    def article(self, article: Any, where: str, index: int) -> None:
        _object(article, where, self.path)
        title = _text(article, "title", where, self.path)
        for p, paragraph in enumerate(_list(article, "paragraphs", where, self.path)):
            self.paragraph(paragraph, f"{where}.paragraphs[{p}]", title, index, p)

    def paragraph(self, paragraph: Any, where: str, title: str, article: int, index: int) -> None:
        _object(paragraph, where, self.path)
        context = _text(paragraph, "context", where, self.path, strip=False)
        document_id = f"{_UNSAFE.sub('_', title).strip('._') or 'article'}_p{index}"
        if document_id in self.doc_ids:  # two articles with the same title
            document_id = f"{document_id}_a{article}"
        self.doc_ids.add(document_id)
        metadata = {"title": title, "article_index": article, "paragraph_index": index}
        self.documents.append(
            BenchmarkDocument(
                document_id=document_id, name=f"{document_id}.txt", text=context, metadata=metadata
            )
        )
        for q, qa in enumerate(_list(paragraph, "qas", where, self.path)):
            self.question(qa, f"{where}.qas[{q}]", document_id, title, context)

    def question(self, qa: Any, where: str, document_id: str, title: str, context: str) -> None:
        _object(qa, where, self.path)
        case_id = _text(qa, "id", where, self.path)
        if case_id in self.case_where:
            raise BenchmarkFormatError(
                f"{where}.id: duplicate question id {case_id!r} "
                f"(first at {self.case_where[case_id]})",
                file=self.path,
            )
        self.case_where[case_id] = where
        impossible = qa.get("is_impossible", False)
        if not isinstance(impossible, bool):
            raise BenchmarkFormatError(
                f"{where}.is_impossible must be true or false, got {impossible!r}", file=self.path
            )
        answers = self.answers(qa, "answers", where, context)
        if not impossible and not answers:
            problem = "has no answers" + ("" if self.version >= 2 else " (SQuAD 1.1)")
            raise BenchmarkFormatError(
                f"{where}.answers {problem}; set is_impossible for unanswerable questions",
                file=self.path,
            )
        if impossible and answers:
            raise BenchmarkFormatError(
                f"{where}: is_impossible is true but answers are given", file=self.path
            )
        texts = tuple(dict.fromkeys(a["text"] for a in answers))
        evidence = BenchmarkEvidence(
            reference_id=document_id,
            metadata={"answer_starts": [a["answer_start"] for a in answers]},
        )
        expected_meta: dict[str, Any] = {"answers_given": len(answers)}
        if self.version >= 2:
            expected_meta[ABSTAIN_EXPECTED] = impossible
        label = "no_answer" if impossible else "has_answer"
        self.counts[label] += 1
        metadata: dict[str, Any] = {"squad_id": case_id, "document_id": document_id}
        plausible = self.answers(qa, "plausible_answers", where, context)
        if plausible:
            metadata["plausible_answers"] = list(dict.fromkeys(a["text"] for a in plausible))
        self.cases.append(
            BenchmarkCase(
                case_id=case_id,
                query=_text(qa, "question", where, self.path),
                expected=BenchmarkExpected(
                    answers=texts, evidence=(evidence,), metadata=expected_meta
                ),
                labels={"answerable": label, "title": title},
                metadata=metadata,
            )
        )

    def answers(self, qa: Mapping[str, Any], key: str, where: str, context: str) -> list[dict]:
        """``qa[key]`` as ``[{"text", "answer_start"}]``, each checked (missing key → [])."""
        if qa.get(key) is None:
            return []
        found = []
        for i, answer in enumerate(_list(qa, key, where, self.path)):
            at = f"{where}.{key}[{i}]"
            _object(answer, at, self.path)
            text = _text(answer, "text", at, self.path, strip=False)
            start = answer.get("answer_start")
            if start is not None and (
                isinstance(start, bool) or not isinstance(start, int) or start < 0
            ):
                raise BenchmarkFormatError(
                    f"{at}.answer_start must be a non-negative integer, got {start!r}",
                    file=self.path,
                )
            if start is not None:
                _check_span(context, text, start, at, self.path)
            found.append({"text": text.strip(), "answer_start": start})
        return found


def _check_span(context: str, text: str, start: int, at: str, path: Path) -> None:
    """The answer must be the context's text at ``answer_start`` (spaces aside)."""
    if start + len(text) > len(context):
        raise BenchmarkFormatError(
            f"{at}.answer_start {start} + its {len(text)} characters is past the end of the "
            f"context ({len(context)} characters)",
            file=path,
        )
    span = context[start : start + len(text)]
    if span != text and span.split() != text.split():
        raise BenchmarkFormatError(
            f"{at}.text {text[:40]!r} is not the context's text at answer_start {start} "
            f"({span[:40]!r})",
            file=path,
        )


def squad2_sample_path() -> Path:
    """Where the packaged SQuAD 2.0 sample lives (``dev-sample.json``, with its README)."""
    return Path(
        str(files("heta_notebook") / "benchmarks" / "data" / "squad2_sample" / "dev-sample.json")
    )


def _version(root: Mapping[str, Any], articles: list[Any], path: Path) -> int:
    declared = root.get("version")
    if declared is not None:
        match = re.fullmatch(r"v?(\d+)(\.\d+)?", str(declared).strip())
        if not match or match.group(1) not in ("1", "2"):
            raise BenchmarkFormatError(
                f"version: expected 'v2.0' or '1.1', got {declared!r}", file=path
            )
        return int(match.group(1))
    return 2 if any("is_impossible" in qa for qa in _questions(articles)) else 1


def _questions(articles: list[Any]) -> Any:
    """Every question object, skipping malformed parts (the reader reports those)."""
    for article in articles:
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        for paragraph in paragraphs if isinstance(paragraphs, list) else ():
            qas = paragraph.get("qas") if isinstance(paragraph, dict) else None
            for qa in qas if isinstance(qas, list) else ():
                if isinstance(qa, dict):
                    yield qa


def _object(value: Any, where: str, path: Path) -> None:
    if not isinstance(value, dict):
        raise BenchmarkFormatError(
            f"{where} must be an object, got {type(value).__name__}", file=path
        )


def _list(parent: Mapping[str, Any], key: str, where: str, path: Path) -> list[Any]:
    field = f"{where}.{key}" if where else key
    value = parent.get(key)
    if not isinstance(value, list):
        found = "missing" if value is None else f"a {type(value).__name__}"
        raise BenchmarkFormatError(f"{field} must be a list, got {found}", file=path)
    return value


def _text(
    parent: Mapping[str, Any], key: str, where: str, path: Path, *, strip: bool = True
) -> str:
    value = parent.get(key)
    if not isinstance(value, str) or not value.strip():
        found = "missing" if value is None else ("empty" if value == "" else repr(value)[:40])
        raise BenchmarkFormatError(f"{where}.{key} must be non-empty text, got {found}", file=path)
    return value.strip() if strip else value


__all__ = ["SquadBenchmark", "squad2_sample_path"]
