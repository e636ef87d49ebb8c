"""Stages: what each step of a pipeline ranked for one query (retrieve → rerank → generate).

A system reports them with :class:`Stages` and returns ``stages.response(...)`` (or puts
``stages.to_metadata()`` under a response's ``metadata["stages"]``). The record is small on
purpose, one entry per stage in pipeline order::

    {"stages": [{"name": "retrieve", "ids": ["d3", "d7", ...]},
                {"name": "rerank", "ids": ["d7", "d3", ...], "scores": [0.9, 0.4, ...]}]}

``ids`` are ranked result ids (best first); ``scores`` (optional) align with them. Each stage
is also kept as a trace event, so explorers already list them. A later analysis ("where
evidence is lost") reads ``response_stages(response)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from heta_notebook.schema._records import QueryResponse, QueryTraceEvent


@dataclass(frozen=True)
class Stage:
    """One pipeline step: its name and the ids it ranked (best first), scores optional."""

    name: str
    ids: tuple[str, ...]
    scores: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"a stage needs a non-empty name, got {self.name!r}")
        if self.scores is not None and len(self.scores) != len(self.ids):
            raise ValueError(
                f"stage {self.name!r}: {len(self.scores)} scores for {len(self.ids)} ids"
            )

    def to_dict(self) -> dict[str, Any]:
        """The stage as kept in ``metadata["stages"]``."""
        out: dict[str, Any] = {"name": self.name, "ids": list(self.ids)}
        if self.scores is not None:
            out["scores"] = list(self.scores)
        return out


@dataclass
class Stages:
    """Collects a query's stages in pipeline order: ``stages.add("retrieve", ids)``."""

    stages: list[Stage] = field(default_factory=list)

    def add(self, name: str, ids: Iterable[Any], scores: Sequence[float] | None = None) -> Stages:
        """Record stage ``name`` ranking ``ids`` (result ids, or objects with ``.id``)."""
        ranked = tuple(str(getattr(i, "id", i)) for i in ids)
        kept = None if scores is None else tuple(float(s) for s in scores)
        self.stages.append(Stage(name, ranked, kept))
        return self

    def to_metadata(self) -> list[dict[str, Any]]:
        """The list kept under a response's ``metadata["stages"]``."""
        return [stage.to_dict() for stage in self.stages]

    def attach(self, response: QueryResponse) -> QueryResponse:
        """``response`` with these stages in ``metadata["stages"]`` and as trace events."""
        trace = tuple(
            QueryTraceEvent(
                stage=s.name, message=f"{s.name}: {len(s.ids)} ranked", metadata=s.to_dict()
            )
            for s in self.stages
        )
        return response.model_copy(
            update={
                "metadata": {**response.metadata, "stages": self.to_metadata()},
                "trace": (*response.trace, *trace),
            }
        )

    def response(self, results: Any = (), answer: str | None = None, **extra: Any) -> dict:
        """What a system returns: ``{"answer", "results", "metadata": {"stages": ...}}``."""
        return {
            "answer": answer,
            "results": list(results),
            "metadata": {**extra, "stages": self.to_metadata()},
        }


def response_stages(response: QueryResponse) -> list[Stage]:
    """The stages a response recorded (empty when it recorded none)."""
    found = response.metadata.get("stages") or []
    return [
        Stage(str(s["name"]), tuple(s.get("ids", ())), _scores(s.get("scores")))
        for s in found
        if isinstance(s, dict) and s.get("name")
    ]


def _scores(value: Any) -> tuple[float, ...] | None:
    return None if value is None else tuple(float(v) for v in value)


__all__ = ["Stage", "Stages", "response_stages"]
