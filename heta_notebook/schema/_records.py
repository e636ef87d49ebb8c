"""Plain-data records of one evaluation: benchmark inputs, query responses, scores, reports.

Field names and JSON layout follow heta-framework's ``report.json`` (schema_version "1"),
so a report written by either library loads in the other. Records are frozen pydantic
models that validate on construction and name the offending field; unknown fields from
newer writers are kept (``extra="allow"``) and written back out unchanged.

NaN/inf policy (one rule, so a saved report always loads back): a score value must be
finite (mark an unscorable case ``metadata.skipped`` / ``metadata.error`` instead); any
other non-finite number becomes "no value" on construction (a result's ``score`` and
``latency_ms`` → None, a ``score_summary`` entry is dropped) and NaN/inf inside metadata
is written as JSON ``null``. A report whose ``schema_version`` is newer than
``EVALUATION_SCHEMA_VERSION`` is refused with a message saying so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_core import to_json as dump_json

from heta_notebook._util.redaction import redact, redact_strings, redact_text
from heta_notebook._util.sums import seal_text
from heta_notebook.schema._abstain import ABSTAIN_REASON, ABSTAINED, abstention_of
from heta_notebook.schema._headline import headline_first
from heta_notebook.schema._status import judge_reason, status_name

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

EVALUATION_SCHEMA_VERSION = "1"


def check_schema_version(value: Any, *, where: str = "report") -> None:
    """Refuse a report whose ``schema_version`` is newer than this library knows."""
    try:
        newer = int(str(value)) > int(EVALUATION_SCHEMA_VERSION)
    except ValueError:
        newer = False  # not a number: left to field validation
    if newer:
        raise ValueError(
            f"{where}: schema_version {value!r} is newer than this heta-notebook knows "
            f"({EVALUATION_SCHEMA_VERSION!r}); upgrade heta-notebook to read it"
        )


def _finite_or_none(value: float | None) -> float | None:
    """NaN/inf policy outside scores: a non-finite number is stored as "no value" (None)."""
    return value if value is None or math.isfinite(value) else None


def _strip_required(value: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ValueError("must not be empty or only whitespace")
    return stripped


# Constraints checked in pydantic-core (no Python call per field): loading a 100k-case
# report stays fast. An empty or blank value fails with "at least 1 character".
RequiredText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
OptionalText = Annotated[str | None, StringConstraints(strip_whitespace=True, min_length=1)]
JsonDict = dict[str, Any]


class Record(BaseModel):
    """Base of every record: frozen, validated, keeps unknown fields from newer writers."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-friendly dict (unknown fields included)."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]):  # noqa: ANN206 - returns cls
        """Build from a dict, e.g. one read from JSON."""
        return cls.model_validate(dict(data))


# --------------------------------------------------------------------------- benchmark inputs


class BenchmarkManifest(Record):
    """Stable identity of one benchmark split (name, version, split, task type)."""

    name: RequiredText
    version: RequiredText = "1"
    split: RequiredText = "test"
    task_type: RequiredText = "retrieval"
    build_scope: Literal["corpus", "group", "case"] = "corpus"
    homepage: OptionalText = None
    license: OptionalText = None
    citation: OptionalText = None
    metadata: JsonDict = Field(default_factory=dict)

    @property
    def key(self) -> str:
        """``name:version:split``, the identity two reports must share to be compared."""
        return f"{self.name}:{self.version}:{self.split}"


class BenchmarkDocument(Record):
    """One source document of a benchmark corpus; exactly one of text, data, path is set."""

    document_id: RequiredText
    name: RequiredText = "document.txt"
    media_type: RequiredText = "text/plain"
    text: str | None = None
    data: bytes | None = None
    path: Path | None = None
    source_uri: OptionalText = None
    metadata: JsonDict = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _file_name(cls, value: str) -> str:
        if Path(value).name != value or "\\" in value:
            raise ValueError(f"must be a file name, not a path: {value!r}")
        return value

    @model_validator(mode="after")
    def _one_location(self) -> BenchmarkDocument:
        set_ = [n for n in ("text", "data", "path", "source_uri") if getattr(self, n) is not None]
        if len(set_) != 1:
            raise ValueError(
                f"document {self.document_id!r}: exactly one of text, data, path, source_uri "
                f"must be set (got {set_ or 'none'})"
            )
        return self

    def read_text(self) -> str:
        """Return the document's text, decoding bytes or reading the file as UTF-8."""
        if self.text is not None:
            return self.text
        if self.data is not None:
            return self.data.decode("utf-8", errors="replace")
        if self.path is not None:
            return Path(self.path).read_text(encoding="utf-8", errors="replace")
        raise ValueError(
            f"document {self.document_id!r} is remote ({self.source_uri}); fetch it first"
        )

    def raw_key(self, manifest: BenchmarkManifest) -> str:
        """heta-framework's ObjectStore key for this document."""
        return f"raw/benchmarks/{manifest.name}/{manifest.split}/{self.document_id}/{self.name}"


def evidence_grade(metadata: Mapping[str, Any]) -> int:
    """The graded relevance an evidence's ``metadata`` gives: ``int(metadata["relevance"])``,
    1 when not given or not a number (the one rule scoring, misses and displays read)."""
    try:
        return int(metadata.get("relevance", 1))
    except (TypeError, ValueError):
        return 1


class BenchmarkEvidence(Record):
    """One gold evidence item: where (locator), which reference, or what text must be retrieved."""

    reference_id: OptionalText = None
    locator: JsonDict = Field(default_factory=dict)
    text: OptionalText = None
    metadata: JsonDict = Field(default_factory=dict)

    @model_validator(mode="after")
    def _something_to_match(self) -> BenchmarkEvidence:
        if self.reference_id is None and not self.locator and self.text is None:
            raise ValueError("evidence must set at least one of reference_id, locator, or text")
        return self

    @property
    def relevance(self) -> int:
        """Graded relevance (``metadata.relevance``): see :func:`evidence_grade`."""
        return evidence_grade(self.metadata)

    def label(self) -> str:
        """A short human-readable identifier for tables and widgets."""
        if self.reference_id is not None:
            return self.reference_id
        if self.locator:
            return ", ".join(f"{k}={v}" for k, v in self.locator.items())
        text = self.text or ""
        return text if len(text) <= 60 else text[:57] + "..."


class BenchmarkExpected(Record):
    """What a good response contains: answers, evidence, an expected value."""

    answers: tuple[RequiredText, ...] = ()
    evidence: tuple[BenchmarkEvidence, ...] = ()
    value: Any = None
    metadata: JsonDict = Field(default_factory=dict)


class BenchmarkCase(Record):
    """One query of a benchmark with its expectations."""

    case_id: RequiredText
    query: RequiredText
    expected: BenchmarkExpected = Field(default_factory=BenchmarkExpected)
    labels: JsonDict = Field(default_factory=dict)
    metadata: JsonDict = Field(default_factory=dict)

    @field_validator("case_id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


# --------------------------------------------------------------------------- query responses


class QueryResult(Record):
    """One retrieved item (usually a chunk) with its provenance in ``source``."""

    id: RequiredText
    text: str = ""
    score: float | None = None
    kind: RequiredText = "chunk"
    source: JsonDict = Field(default_factory=dict)
    metadata: JsonDict = Field(default_factory=dict)

    _score_finite = field_validator("score")(classmethod(lambda cls, v: _finite_or_none(v)))


class QueryCitation(Record):
    """A citation the answer makes, pointing at a result or a source."""

    id: RequiredText
    result_id: OptionalText = None
    source: JsonDict = Field(default_factory=dict)
    text: OptionalText = None
    metadata: JsonDict = Field(default_factory=dict)


class QueryTraceEvent(Record):
    """One step of how the query was served (retrieve, rerank, generate, ...)."""

    stage: RequiredText
    message: RequiredText
    metadata: JsonDict = Field(default_factory=dict)


class QueryResponse(Record):
    """What ``kb.query(...)`` returns: ranked results, optional answer, citations, trace.

    An **abstention** (the system chose not to answer, which is the right answer to an
    unanswerable question) is ``answer=None`` with ``metadata["abstained"] = True`` and an
    optional ``metadata["abstain_reason"]``: kept in ``metadata`` so heta-framework's
    ``report.json`` layout is unchanged. :meth:`abstention` builds one; systems return
    ``Abstain(reason)`` (see ``heta_notebook.systems``).
    """

    mode: RequiredText
    results: tuple[QueryResult, ...] = ()
    answer: str | None = None
    citations: tuple[QueryCitation, ...] = ()
    trace: tuple[QueryTraceEvent, ...] = ()
    metadata: JsonDict = Field(default_factory=dict)

    @field_serializer("results", mode="wrap")
    def _results_as_tuple(self, results: Any, handler: Any) -> Any:
        # The embedded KB's results are a ``LazyResults`` (a tuple held as columns).
        return handler(results if type(results) is tuple else tuple(results))

    @model_validator(mode="after")
    def _abstention_has_no_answer(self) -> QueryResponse:
        if self.metadata.get(ABSTAINED) is True and self.answer is not None:
            raise ValueError(
                "an abstention has no answer: set answer=None (or drop metadata.abstained)"
            )
        return self

    @property
    def abstained(self) -> bool:
        """Whether the response abstains (no answer, on purpose): see :func:`abstention_of`."""
        return abstention_of(self.metadata)[0]

    @property
    def abstain_reason(self) -> str | None:
        """Why the response abstained (None when it did not, or gave no reason)."""
        return abstention_of(self.metadata)[1]

    @classmethod
    def abstention(
        cls,
        mode: str,
        reason: str | None = None,
        results: Sequence[QueryResult] = (),
        **metadata: Any,
    ) -> QueryResponse:
        """A response that abstains (no answer, flagged), keeping whatever was retrieved."""
        flag = {ABSTAINED: True, **({ABSTAIN_REASON: str(reason)} if reason else {})}
        return cls(mode=mode, results=tuple(results), metadata={**metadata, **flag})


# --------------------------------------------------------------------------- scores and results


class EvaluationScore(Record):
    """One evaluator's verdict on one response.

    ``metadata`` carries matched/missing evidence and judge reasons. Two conventions make
    aggregation honest: ``metadata["skipped"]`` (truthy) marks a case the evaluator could not
    score (no qrels, no expected answer) and ``metadata["error"]`` (a dict with ``message``
    and ``error_type``) marks an evaluator failure. Neither counts towards a mean.
    """

    name: RequiredText
    value: bool | float | str
    passed: bool | None = None
    metadata: JsonDict = Field(default_factory=dict)

    @field_validator("value")
    @classmethod
    def _finite_or_text(cls, value: bool | float | str) -> bool | float | str:
        if isinstance(value, str):
            return _strip_required(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(
                "must be a finite number; mark unscorable cases with metadata.skipped "
                "or metadata.error instead of NaN/inf"
            )
        return value

    @property
    def status(self) -> Literal["scored", "skipped", "error"]:
        """``error`` if the evaluator failed, ``skipped`` if it had nothing to score, else ``scored``."""
        return status_name(self.metadata)  # the one rule

    @property
    def numeric(self) -> float | None:
        """The value as a float for averaging (bool → 1/0), None for text or unscored values."""
        if self.status != "scored" or isinstance(self.value, str):
            return None
        return float(self.value)

    @property
    def reason(self) -> str | None:
        """The judge's reason (``reason``, ``reasoning`` or ``explanation`` in metadata)."""
        return judge_reason(self.metadata)

    @classmethod
    def error_score(cls, name: str, exc: BaseException, **metadata: Any) -> EvaluationScore:
        """A score recording that evaluator ``name`` failed with ``exc``."""
        message = redact_text(str(exc)) or type(exc).__name__
        error = {"message": message, "error_type": type(exc).__name__}
        return cls(name=name, value=0.0, passed=None, metadata={**metadata, "error": error})

    @classmethod
    def skipped_score(cls, name: str, reason: str, **metadata: Any) -> EvaluationScore:
        """A score recording that evaluator ``name`` had nothing to score, and why."""
        return cls(
            name=name,
            value=0.0,
            passed=None,
            metadata={**metadata, "skipped": True, "skip_reason": reason},
        )


class EvaluationError(Record):
    """A non-fatal failure of one case: the query raised or timed out."""

    message: RequiredText
    error_type: RequiredText
    retryable: bool = False
    metadata: JsonDict = Field(default_factory=dict)

    _redacted = field_validator("message", "metadata")(
        classmethod(lambda cls, v: redact_text(v) if isinstance(v, str) else redact(v))
    )

    @classmethod
    def from_exception(cls, exc: BaseException, **metadata: Any) -> EvaluationError:
        """Record ``exc`` (type and message); timeouts are marked retryable."""
        retryable = isinstance(exc, (TimeoutError, ConnectionError))
        return cls(
            message=redact_text(str(exc)) or type(exc).__name__,
            error_type=type(exc).__name__,
            retryable=retryable,
            metadata=metadata,
        )


class EvaluationCaseResult(Record):
    """The outcome of one benchmark case under one query mode: a response or an error."""

    case_id: RequiredText
    query: RequiredText
    query_mode: RequiredText
    scores: tuple[EvaluationScore, ...] = ()
    response: QueryResponse | None = None
    latency_ms: float | None = Field(default=None, ge=0)
    error: EvaluationError | None = None
    metadata: JsonDict = Field(default_factory=dict)

    _latency_finite = field_validator("latency_ms", mode="before")(
        classmethod(lambda cls, v: _finite_or_none(v) if isinstance(v, float) else v)
    )

    @field_serializer("scores", mode="wrap")
    def _scores_as_tuple(self, scores: Any, handler: Any) -> Any:
        # A batch-scored case holds a ``LazyScores`` (its row of the batch's score columns).
        return handler(scores if type(scores) is tuple else tuple(scores))

    @model_validator(mode="after")
    def _response_or_error(self) -> EvaluationCaseResult:
        if self.response is None and self.error is None:
            raise ValueError(
                f"case {self.case_id!r} ({self.query_mode}): either response or error must be set"
            )
        return self

    def score(self, name: str) -> EvaluationScore | None:
        """The score called ``name``, or None."""
        for score in self.scores:
            if score.name == name:
                return score
        return None


# --------------------------------------------------------------------------- the report


class _FramesBox:
    """Holds a report's cached frames; equal to any other box, so caching never changes ``==``."""

    __slots__ = ("frames",)

    def __init__(self, frames: Any = None) -> None:
        self.frames = frames

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _FramesBox)

    __hash__ = object.__hash__


# What stays as it is in a stored case result: the data (queries, document and answer texts,
# ids, values); everything else (errors, metadata, sources, citations, traces, reasons) is what
# systems, endpoints and evaluators said, and has its credentials hidden. The columnar store
# applies the same split to its columns (``reports._tables._REDACTED_COLUMNS``).
_CASE_DATA = frozenset({"case_id", "query", "query_mode", "latency_ms", "response", "scores"})
_RESPONSE_DATA = frozenset({"mode", "answer", "results"})
_RESULT_DATA = frozenset({"id", "text", "score"})
_SCORE_DATA = frozenset({"name", "value", "passed", "status"})


def _redacted_case(case: dict[str, Any]) -> dict[str, Any]:
    """One dumped case result with credentials hidden outside its data fields."""
    out = _redacted_outside(case, _CASE_DATA)
    response = case.get("response")
    if isinstance(response, dict):
        out["response"] = _redacted_outside(response, _RESPONSE_DATA)
        out["response"]["results"] = [
            _redacted_outside(r, _RESULT_DATA) for r in response.get("results") or ()
        ]
    out["scores"] = [_redacted_outside(s, _SCORE_DATA) for s in case.get("scores") or ()]
    return out


def _redacted_outside(fields: dict[str, Any], data: frozenset[str]) -> dict[str, Any]:
    return {k: v if k in data else redact(v) for k, v in fields.items()}


# Validation context of a report whose metadata its run redacted already by this policy
# (``runner._plan``: thousands of its own numbers, not walked twice). Compared by identity:
# a loaded file, or any other caller, is redacted as always.
METADATA_REDACTED: dict[str, bool] = {"metadata_redacted": True}


class EvaluationReport(Record):
    """One recipe evaluated on one benchmark: manifests, per-case results and a summary.

    A report is plain data. Tables, charts and explorers are derived from it by
    ``heta_notebook.analysis`` and ``heta_notebook.display``.
    """

    schema_version: RequiredText = EVALUATION_SCHEMA_VERSION
    report_id: RequiredText
    report_key: OptionalText = None
    benchmark: BenchmarkManifest
    knowledge_base_name: RequiredText
    knowledge_base_manifest: JsonDict | list[JsonDict] = Field(default_factory=dict)
    recipe_manifest: JsonDict = Field(default_factory=dict)
    query_modes: tuple[RequiredText, ...] = ()
    score_summary: dict[str, float] = Field(default_factory=dict)
    case_results: tuple[EvaluationCaseResult, ...] = ()
    started_at: RequiredText
    finished_at: RequiredText
    metadata: JsonDict = Field(default_factory=dict)
    _frames: _FramesBox = PrivateAttr(default_factory=lambda: _FramesBox())

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, value: str) -> str:
        check_schema_version(value)
        return value

    @field_validator("knowledge_base_manifest", "recipe_manifest", "metadata")
    @classmethod
    def _redacted_header(cls, value: Any, info: ValidationInfo) -> Any:
        # the one policy: shown as it is stored; a run's own metadata comes redacted already
        if info.field_name == "metadata" and info.context is METADATA_REDACTED:
            return value
        return redact(value)

    @field_validator("score_summary", mode="before")
    @classmethod
    def _finite_summary(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        return {
            k: v for k, v in value.items() if not (isinstance(v, float) and not math.isfinite(v))
        }

    @field_validator("case_results", mode="wrap")
    @classmethod
    def _lazy_or_tuple(cls, value: Any, handler: Any) -> Any:
        from heta_notebook.reports._stored import LazyCaseResults

        return value if isinstance(value, LazyCaseResults) else handler(value)

    @field_serializer("case_results", mode="wrap")
    def _materialized(self, value: Any, handler: Any) -> Any:
        from heta_notebook.reports._stored import LazyCaseResults

        return handler(value.materialize() if isinstance(value, LazyCaseResults) else value)

    # -- persistence ---------------------------------------------------------------------

    @classmethod
    def load(cls, source: str | bytes | PathLike[str] | Mapping[str, Any]) -> EvaluationReport:
        """Load a report from a ``report.json`` path, a columnar report folder (or its
        ``header.json``), JSON text/bytes, or a dict.

        Reports written by heta-framework load unchanged; columnar ones open lazily.
        Errors name the file and field.
        """
        from heta_notebook.reports._resolve import resolve_report  # the one decider

        return resolve_report(source)

    def to_json(self, *, indent: int | None = 2) -> str:
        """Serialise to JSON text (the ``report.json`` layout)."""
        return self.model_dump_json(indent=indent)

    def stored_json(self) -> str:
        """``to_json()`` as written to disk: credentials hidden in every string outside the
        case results (manifests, metadata, label), as in the columnar header, and in what
        systems, endpoints and evaluators said inside them, as in the columnar tables."""
        data = json.loads(self.to_json())
        cases = [_redacted_case(case) for case in data.pop("case_results", [])]
        clean = {**redact_strings(data), "case_results": cases}
        # pydantic_core's writer: json.dumps with an indent is pure Python (6x slower here);
        # the same JSON values, non-ASCII written as UTF-8 and floats in shortest form.
        # Sealed: its last member is the sum of the rest, so a changed byte is caught on read
        return seal_text(dump_json(clean, indent=2, inf_nan_mode="null").decode("utf-8"))

    def save(self, path: str | PathLike[str], *, format: str = "heta") -> Path:  # noqa: A002
        """Write the report to ``path`` and return the path: ``format="heta"`` writes
        heta-framework's ``report.json`` (atomically); ``"columnar"`` a report folder."""
        target = Path(path)
        if format == "columnar":
            from heta_notebook.reports._folder import write_report

            write_report(target, self)
            return target
        if format != "heta":
            raise ValueError(f"format must be 'heta' or 'columnar', got {format!r}")
        from heta_notebook._util.paths import atomic_write_text

        atomic_write_text(target, self.stored_json())  # credentials never stored
        return target

    def to_trec(
        self,
        path: str | PathLike[str],
        mode: str | None = None,
        run_tag: str | None = None,
        ties: str = "trec_eval",
    ) -> Path:
        """Write one query mode as a TREC run file (rank-consistent scores: trec_eval keeps
        the order the metrics rank under ``ties``, so it reproduces the report's numbers)."""
        from heta_notebook.benchmarks._trec import write_trec_run

        return write_trec_run(self, path, mode=mode, run_tag=run_tag, ties=ties)

    def to_trec_qrels(self, path: str | PathLike[str]) -> Path:
        """Write the qrels the cases carried (their expected evidence) as a TREC qrels file."""
        from heta_notebook.benchmarks._trec import write_trec_qrels

        return write_trec_qrels(self, path)

    # -- convenience views ----------------------------------------------------------------

    @property
    def label(self) -> str:
        """A short name for legends and columns: the recipe name, else the KB name."""
        name = self.recipe_manifest.get("name") if isinstance(self.recipe_manifest, dict) else None
        return str(self.metadata.get("label") or name or self.knowledge_base_name)

    @property
    def score_names(self) -> tuple[str, ...]:
        """Every score name in the report, in first-seen order."""
        if not isinstance(self.case_results, tuple):  # columnar: names from the scores table
            return tuple(self.frames().score_names)
        seen: dict[str, None] = {}
        for result in self.case_results:
            for score in result.scores:
                seen.setdefault(score.name, None)
        return tuple(seen)

    @property
    def is_partial(self) -> bool:
        """True when the run was interrupted before every case finished."""
        return bool(self.metadata.get("partial"))

    def frames(self) -> Any:
        """Tidy DataFrames derived from this report, built once and shared by the card,
        plots, explorer, ``summary()`` and ``compare()`` (summary, cases, scores, ...)."""
        from heta_notebook.analysis._frames import ReportFrames

        cached = self._frames.frames
        if cached is None or not cached.belongs_to(self):  # a model_copy shares the box
            cached = ReportFrames(self)
            self.__pydantic_private__["_frames"] = _FramesBox(cached)  # type: ignore[index]
        return cached

    def summary(self, by: Any = None) -> pd.DataFrame:
        """Per query mode and score: mean, n, std, 95% CI, pass rate, skipped and errors.

        ``by="topic"`` (a case label or metadata key) gives the same per slice.
        """
        return self.frames().summary(by=by)

    def misses(self, level: str = "class", *, k: int | None = None, by: Any = None) -> pd.DataFrame:
        """Why expected evidence was missed: counts per recipe × mode × class (found, beyond k,
        split, not retrieved, ...); ``level="evidence"`` gives one row per evidence item."""
        return self.frames().misses(level=level, k=k, by=by)

    def card(
        self, by: Any = None, scores: Any = None, *, corrected: Any = None, labels: Any = None
    ) -> Any:
        """The report card; ``by="topic"`` adds a per-slice table of ``scores`` (headline score);
        ``corrected`` / ``labels``: corrected means from people's labels (docs/labels.md)."""
        from heta_notebook.display._card import ReportCard

        return ReportCard(self, by=by, scores=scores, corrected=corrected, labels=labels)

    @property
    def plot(self) -> Any:
        """Plotly figures of this report: ``report.plot.metrics()``, ``.at_k("ndcg")``, ..."""
        from heta_notebook.display._figures import ReportPlots

        return ReportPlots(self)

    def explore(
        self,
        *,
        mode: str | None = None,
        label: str | None = None,
        score: str | None = None,
        min_value: float | None = None,
        max_value: float | None = None,
        verdict: str = "any",
        errors_only: bool = False,
        search: str = "",
        miss_class: str | None = None,
        sort_by: str = "report order",
        descending: bool = True,
        page_size: int = 15,
        max_cases: int | None = 20_000,
    ) -> Any:
        """The case explorer (filters, a paged case list, a detail pane), opened on the cases
        that pass the filters: ``mode``; ``label`` (``"qlen=short"``); ``score`` with
        ``min_value``/``max_value`` and ``verdict`` (``"passed"``/``"failed"``, scores with a
        threshold); ``errors_only``; ``search`` (queries, ids, evidence, reasons);
        ``miss_class`` (cases with an evidence item of that class, e.g. ``"beyond k"``, see ``report.misses()``). Sorted by
        ``sort_by`` (a score, ``"latency"``, ``"report order"``). An option the report does not
        have raises ``ExplorerOptionError`` (a ValueError) naming what it has."""
        from heta_notebook.display._explorer import ReportExplorer

        options = {k: v for k, v in locals().items() if k not in ("self", "ReportExplorer")}
        return ReportExplorer(self, **options)

    def to_html(self, path: str | PathLike[str] | None = None, **options: Any) -> Any:
        """A self-contained offline page (card, charts, case explorer): written to ``path``,
        whose Path is returned; without a path, the page (``HtmlPage``: a str that displays as a
        short note and has ``save(path)``). Options: ``max_cases``, ``figures``, ``title``."""
        from heta_notebook.display._export import report_to_html

        return report_to_html(self, path, **options)

    def to_latex(self, scores: Sequence[str] | None = None, **options: Any) -> str:
        """The summary (query modes × scores, best bold) as a booktabs LaTeX table."""
        from heta_notebook.display._tables import summary_table

        return summary_table(self, scores, **options).to_latex()

    def to_markdown(self, scores: Sequence[str] | None = None, **options: Any) -> str:
        """The summary (query modes × scores, best bold) as a Markdown table."""
        from heta_notebook.display._tables import summary_table

        return summary_table(self, scores, **options).to_markdown()

    def _repr_html_(self) -> str:
        from heta_notebook.display._card import report_card_html

        return report_card_html(self)

    def __repr__(self) -> str:
        modes = ", ".join(self.query_modes) or "-"
        errors = self.frames().case_counts()["n_errors"]
        items = headline_first(self.score_summary)
        head = ", ".join(f"{k}={v:.4f}" for k, v in items[:3])
        partial = " PARTIAL" if self.is_partial else ""
        return (
            f"<EvaluationReport {self.report_id!r}{partial} benchmark={self.benchmark.key} "
            f"kb={self.knowledge_base_name!r} modes=[{modes}] cases={len(self.case_results)} "
            f"errors={errors}{' ' + head if head else ''}>"
        )

    __str__ = __repr__


class ReportFormatError(ValueError):
    """A ``report.json`` that cannot be read: one line naming the file and the first fields wrong."""

    def __init__(self, file: str | PathLike[str] | None, error: Exception):
        self.file = None if file is None else str(file)
        self.error = error
        where = f"{self.file}: " if self.file else ""
        super().__init__(f"{where}not a valid evaluation report: {_one_line(error)}")


def _one_line(error: Exception, limit: int = 3) -> str:
    """``field.path: message; ...`` for a pydantic error (first ``limit``), else the message."""
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return " ".join(str(error).split()) or type(error).__name__
    items = errors(include_url=False)
    parts = [
        f"{'.'.join(map(str, e.get('loc', ()))) or 'report'}: {e.get('msg', 'invalid')}"
        for e in items[:limit]
    ]
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return "; ".join(parts) + more


KNOWLEDGE_BASES = ("_heta", "knowledge_bases")  # a store's folder of knowledge bases


def report_folder(knowledge_base_name: str, report_id: str | None = None) -> tuple[str, ...]:
    """The one spelling of a report's folder in a store (heta-framework's key layout), as
    path parts; without ``report_id``, the folder that holds a knowledge base's reports."""
    from heta_notebook._util.paths import safe_name

    kb = safe_name(knowledge_base_name, what="knowledge_base_name")
    parts = (*KNOWLEDGE_BASES, kb, "evaluations")
    return parts if report_id is None else (*parts, safe_name(report_id, what="report_id"))


def report_key(knowledge_base_name: str, report_id: str) -> str:
    """heta-framework's store key of a report: ``_heta/knowledge_bases/{kb}/evaluations/{id}/report.json``."""
    return "/".join((*report_folder(knowledge_base_name, report_id), "report.json"))


__all__ = [
    "EVALUATION_SCHEMA_VERSION",
    "BenchmarkCase",
    "BenchmarkDocument",
    "BenchmarkEvidence",
    "BenchmarkExpected",
    "BenchmarkManifest",
    "EvaluationCaseResult",
    "EvaluationError",
    "EvaluationReport",
    "EvaluationScore",
    "METADATA_REDACTED",
    "QueryCitation",
    "QueryResponse",
    "QueryResult",
    "QueryTraceEvent",
    "Record",
    "ReportFormatError",
    "check_schema_version",
    "report_folder",
    "report_key",
]
