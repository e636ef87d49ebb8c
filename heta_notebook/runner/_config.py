"""BenchmarkRunConfig: how one run queries, scores, checkpoints and persists."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class BenchmarkRunConfig(BaseModel):
    """Settings of one benchmark run (heta-framework's field names, plus ours).

    ``top_k``, ``query_options``, ``trace``, ``persist_report``, ``max_concurrent_queries``,
    ``report_id`` and ``metadata`` mean what they mean in heta-framework. ``query_timeout``
    and ``evaluator_timeout`` (seconds) bound each call; ``checkpoint_every`` and
    ``checkpoint_interval`` say how often finished cases are appended to the store.
    ``force_resume`` resumes a checkpoint whose settings cannot be checked (its
    ``checkpoint.json`` is missing, empty or corrupt), which is refused otherwise.
    ``preflight_queries`` is the size of the dry run that checks a user's system before the
    run (its output shape and id coverage; up to 4x as many when none of the first maps, 0
    turns the check off); the dry run's answers are reused, so it changes no result.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    top_k: int = Field(default=10, gt=0)
    query_options: dict[str, Any] = Field(default_factory=dict)
    trace: bool = False
    persist_report: bool = True
    max_concurrent_queries: int = Field(default=8, gt=0)
    report_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    query_timeout: float | None = Field(default=None, gt=0)
    evaluator_timeout: float | None = Field(default=None, gt=0)
    seed: int = 0
    checkpoint_every: int = Field(default=25, gt=0)
    checkpoint_interval: float = Field(default=2.0, ge=0)
    bootstrap_resamples: int = Field(default=1000, ge=0)
    force_resume: bool = False
    preflight_queries: int = Field(default=5, ge=0)

    @field_validator("report_id")
    @classmethod
    def _report_id_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("report_id must not be empty")
        return value

    def fingerprint_fields(self) -> dict[str, Any]:
        """The settings that change results (used to recognise a run to resume)."""
        return self.model_dump(mode="json", include={"top_k", "query_options", "trace", "seed"})


def coerce_config(config: BenchmarkRunConfig | Any | None, **overrides: Any) -> BenchmarkRunConfig:
    """Our config from None, our config, a dict, or heta-framework's dataclass config."""
    if config is None:
        base: dict[str, Any] = {}
    elif isinstance(config, BenchmarkRunConfig):  # only what was set: an unset top_k stays unset
        base = config.model_dump(include=set(config.model_fields_set))
    elif isinstance(config, dict):
        base = dict(config)
    else:  # heta-framework's frozen dataclass has the same field names
        names = (
            "top_k",
            "query_options",
            "trace",
            "persist_report",
            "max_concurrent_queries",
            "report_id",
            "metadata",
        )
        base = {name: getattr(config, name) for name in names if hasattr(config, name)}
        base["query_options"] = dict(base.get("query_options") or {})
        base["metadata"] = dict(base.get("metadata") or {})
    base.update({k: v for k, v in overrides.items() if v is not None})
    return BenchmarkRunConfig(**base)
