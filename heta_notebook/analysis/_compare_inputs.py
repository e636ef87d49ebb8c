"""What ``compare()`` accepts: reports, run results, stores, folders and mappings of them, each
resolved to a labelled report (``collect_reports``), and the rule that reports of different
benchmarks are compared only when asked (``check_benchmarks``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any

from heta_notebook.analysis import _options as options_
from heta_notebook.schema._records import EvaluationReport

if TYPE_CHECKING:  # pragma: no cover
    pass


def collect_reports(source: Any, **filters: Any) -> dict[str, EvaluationReport]:
    """Label → report from the many shapes a user may hold; duplicate labels made unique."""
    if hasattr(source, "load_all") and hasattr(source, "list"):  # a ReportStore
        source = source.load_all(**filters)
    elif filters:
        raise TypeError(
            options_.unknown_options_message(filters, options_.DEFAULTS)
            + "; other keywords are store filters, which only apply when comparing a ReportStore"
        )
    if hasattr(source, "reports") and not isinstance(source, EvaluationReport):
        source = source.reports  # a RunCollection
    if isinstance(source, Mapping):
        pairs = [(str(k), _as_report(v)) for k, v in source.items()]
    else:
        items = [source] if _is_single(source) else list(source)
        pairs = [(None, _as_report(item)) for item in items]  # type: ignore[misc]  # labelled below
    if not pairs:
        raise ValueError("compare() needs at least one report (got none)")
    return _unique_labels(pairs)


def _is_single(source: Any) -> bool:
    return isinstance(source, (EvaluationReport, str, bytes, PathLike)) or hasattr(source, "report")


def _as_report(item: Any) -> EvaluationReport:
    from heta_notebook.reports._resolve import resolve_report

    try:
        return resolve_report(item)
    except TypeError:
        raise TypeError(
            f"cannot compare a {type(item).__name__}; pass EvaluationReport objects"
        ) from None


def _unique_labels(
    pairs: Sequence[tuple[str | None, EvaluationReport]],
) -> dict[str, EvaluationReport]:
    labels = [given or report.label for given, report in pairs]
    counts = {label: labels.count(label) for label in labels}
    out: dict[str, EvaluationReport] = {}
    for label, (_, report) in zip(labels, pairs, strict=True):
        name = label if counts[label] == 1 else f"{label} ({report.report_id})"
        base, n = name, 2
        while name in out:
            name, n = f"{base} #{n}", n + 1
        out[name] = report
    return out


def check_benchmarks(reports: Mapping[str, EvaluationReport], allow: bool = False) -> None:
    """Refuse reports of different benchmarks (name, version, split) unless ``allow``."""
    keys = {label: r.benchmark.key for label, r in reports.items()}
    if len(set(keys.values())) > 1 and not allow:
        listing = "; ".join(f"{label!r} → {key}" for label, key in keys.items())
        raise ValueError(
            "refusing to compare reports of different benchmarks (name:version:split): "
            f"{listing}. Scores on different cases are not comparable; use "
            "compare_benchmarks() for a per-benchmark table, or pass "
            "allow_different_benchmarks=True to show them side by side, unpaired."
        )
