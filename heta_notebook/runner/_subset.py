"""Run economically: which cases of a benchmark a run takes (``limit``, ``sample``, ``case_ids``,
``labels``), applied in that order of precedence: ids and labels filter, ``sample`` draws
``N`` of what is left (seeded, kept in benchmark order), ``limit`` keeps the first ``N``.

The subset is part of a run's fingerprint: resuming a report with another subset is refused
like any other change of settings.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from heta_notebook.benchmarks._loader import LoadedBenchmark, RunUnit
from heta_notebook.schema._records import BenchmarkCase


@dataclass(frozen=True)
class CaseSubset:
    """Which cases to run; all of them when nothing is set."""

    limit: int | None = None
    sample: int | None = None
    seed: int = 0
    case_ids: tuple[str, ...] | None = None
    labels: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        for name in ("limit", "sample"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value <= 0
            ):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if isinstance(self.case_ids, str):
            raise TypeError("case_ids must be a list of case ids, not one string")

    @classmethod
    def of(
        cls,
        *,
        limit: int | None = None,
        sample: int | None = None,
        seed: int | None = None,
        case_ids: Iterable[Any] | None = None,
        labels: Mapping[str, Any] | None = None,
    ) -> CaseSubset:
        """The subset from a run's keyword arguments (ids as text)."""
        if isinstance(case_ids, str):
            raise TypeError("case_ids must be a list of case ids, not one string")
        ids = None if case_ids is None else tuple(str(i) for i in case_ids)
        return cls(limit, sample, 0 if seed is None else seed, ids, labels)

    @property
    def active(self) -> bool:
        """Whether this selects anything short of every case."""
        return any(v is not None for v in (self.limit, self.sample, self.case_ids, self.labels))

    def describe(self) -> dict[str, Any] | None:
        """The subset as JSON (fingerprint and report metadata); None for every case."""
        if not self.active:
            return None
        out = {
            "limit": self.limit,
            "sample": self.sample,
            "case_ids": list(self.case_ids) if self.case_ids is not None else None,
            "labels": dict(self.labels) if self.labels is not None else None,
        }
        if self.sample is not None:
            out["seed"] = self.seed
        return {k: v for k, v in out.items() if v is not None}

    def select(self, cases: Sequence[BenchmarkCase]) -> list[BenchmarkCase]:
        """The chosen cases, in benchmark order; an error for unknown ids or an empty choice."""
        chosen = list(cases)
        if self.case_ids is not None:
            known = {c.case_id for c in chosen}
            unknown = [i for i in self.case_ids if i not in known]
            if unknown:
                raise ValueError(
                    f"case_ids not in the benchmark: {unknown[:5]} (it has e.g. {sorted(known)[:5]})"
                )
            wanted = set(self.case_ids)
            chosen = [c for c in chosen if c.case_id in wanted]
        if self.labels is not None:
            chosen = [c for c in chosen if _labels_match(c.labels, self.labels)]
        if self.sample is not None and self.sample < len(chosen):
            picked = set(random.Random(self.seed).sample(range(len(chosen)), self.sample))
            chosen = [c for i, c in enumerate(chosen) if i in picked]
        if self.limit is not None:
            chosen = chosen[: self.limit]
        if not chosen:
            raise ValueError(f"no case matches the subset {self.describe()}")
        return chosen

    def apply(self, loaded: LoadedBenchmark) -> LoadedBenchmark:
        """``loaded`` with only the chosen cases (run units without any left are dropped)."""
        if not self.active:
            return loaded
        chosen = self.select(loaded.cases)
        ids = {c.case_id for c in chosen}
        units = tuple(_unit(u, ids) for u in loaded.units)
        kept = tuple(u for u in units if u is not None)
        return dataclasses.replace(loaded, cases=chosen, units=kept)


def _unit(unit: RunUnit, ids: set[str]) -> RunUnit | None:
    if not unit.case_ids:
        return unit
    left = tuple(i for i in unit.case_ids if i in ids)
    return dataclasses.replace(unit, case_ids=left) if left else None


def _labels_match(labels: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    for key, value in wanted.items():
        options = value if isinstance(value, (list, tuple, set, frozenset)) else (value,)
        if labels.get(key) not in options:
            return False
    return True


__all__ = ["CaseSubset"]
