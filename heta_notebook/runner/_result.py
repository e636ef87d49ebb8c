"""What a run returns: one report (BenchmarkRunResult) or one report per recipe (RunCollection)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_notebook.schema._records import EvaluationReport

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


@dataclass(frozen=True)
class BenchmarkRunResult:
    """One recipe on one benchmark: the report, the KB(s) it queried and where it was saved."""

    report: EvaluationReport
    knowledge_bases: tuple[Any, ...] = ()
    report_path: Path | None = None
    label: str = ""

    @property
    def knowledge_base(self) -> Any:
        """The (first) knowledge base the run queried, or None."""
        return self.knowledge_bases[0] if self.knowledge_bases else None

    @property
    def is_partial(self) -> bool:
        """True when the run was interrupted; run again with the same report id to finish."""
        return self.report.is_partial

    def _repr_html_(self) -> str:
        return self.report._repr_html_()

    def __repr__(self) -> str:
        where = f" saved={str(self.report_path)!r}" if self.report_path else ""
        return f"<BenchmarkRunResult {self.label or self.report.label!r}{where} {self.report!r}>"


@dataclass(frozen=True)
class RunCollection:
    """Several recipes run on one benchmark: one report per recipe label, in run order."""

    results: dict[str, BenchmarkRunResult] = field(default_factory=dict)

    @property
    def reports(self) -> dict[str, EvaluationReport]:
        """Label → report (what ``compare()`` consumes)."""
        return {label: result.report for label, result in self.results.items()}

    @property
    def labels(self) -> tuple[str, ...]:
        """Recipe labels in run order."""
        return tuple(self.results)

    def __getitem__(self, label: str) -> EvaluationReport:
        return self.results[label].report

    def __iter__(self) -> Iterator[EvaluationReport]:
        return iter(self.reports.values())

    def __len__(self) -> int:
        return len(self.results)

    def summary(self) -> pd.DataFrame:
        """One row per recipe × query mode × score: mean, n, CI and counts from each report."""
        import pandas as pd

        rows = []
        for label, report in self.reports.items():
            stats = report.metadata.get("score_stats", {})
            for key, mean in report.score_summary.items():
                mode, _, score = key.partition(".")
                info = stats.get(key, {})
                ci = info.get("ci95") or [None, None]
                rows.append(
                    {
                        "label": label,
                        "query_mode": mode,
                        "score": score,
                        "mean": mean,
                        "n": info.get("n"),
                        "ci_low": ci[0],
                        "ci_high": ci[1],
                        "n_skipped": info.get("n_skipped"),
                        "n_error": info.get("n_error"),
                    }
                )
        return pd.DataFrame(rows)

    def compare(self, baseline: Any = None, **options: Any) -> Any:
        """``heta_notebook.compare`` of these reports (tables, deltas, paired significance)."""
        from heta_notebook.analysis._compare import compare

        return compare(self.reports, baseline, **options)

    def _repr_html_(self) -> str:
        return self.compare()._repr_html_()

    def __repr__(self) -> str:
        inner = "\n  ".join(repr(r.report) for r in self.results.values())
        return f"<RunCollection {len(self)} reports\n  {inner}>"
