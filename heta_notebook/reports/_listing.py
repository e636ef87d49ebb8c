"""What ``heta-notebook ls`` lists: the rows of a store's reports, or of the one report a
path names (its store's row when it sits in a store), and the compact 80-column table of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heta_notebook.reports._resolve import report_file
from heta_notebook.schema._records import EvaluationReport, report_folder


def is_report(path: Path) -> bool:
    """A report folder (``header.json`` or ``report.json`` in it) or a report's JSON file."""
    if path.is_file():
        return path.suffix == ".json"
    return (path / "header.json").is_file() or (path / "report.json").is_file()


def report_listing(path: Path) -> Any:
    """``ls``'s rows for the one report at ``path`` (its store's row when it sits in a store),
    or None when ``path`` is no report (then it is a store)."""
    import pandas as pd

    from heta_notebook.reports._store import ReportStore

    if not is_report(path):
        return None
    folder = path.parent if path.is_file() else path
    parts = folder.resolve().parts
    tail = report_folder(parts[-3], parts[-1])[1:] if len(parts) > 4 else ()
    if tail and parts[-len(tail) :] == tail:  # in a store: its own row
        listing = ReportStore(Path(*parts[: -len(tail)])).list()
        mine = listing[
            (listing.report_id == parts[-1]) & (listing.knowledge_base_name == parts[-3])
        ]
        if len(mine):
            return mine
    report = EvaluationReport.load(report_file(path))  # ValueError: a .json that is no report
    row = {
        "knowledge_base_name": report.knowledge_base_name,
        "report_id": report.report_id,
        "label": report.metadata.get("label"),
        "benchmark": report.benchmark.name,
        "split": report.benchmark.split,
        "query_modes": list(report.query_modes),
        "n_cases": len({r.case_id for r in report.case_results}),
        "finished_at": report.finished_at,
    }
    return pd.DataFrame([row])


LS_COLUMNS = [
    "knowledge_base_name",
    "report_id",
    "label",
    "benchmark",
    "split",
    "query_modes",
    "n_cases",
    "finished_at",
    "partial",
]
_LS_HEADER = ["knowledge_base", "report_id", "label", "benchmark", "cases", "finished"]
# Shrink order and floors when the table is too wide: the free text only. Ids stay whole so
# they can be copied into `export` / `gate` / `ReportStore.load`; never a header is cut.
_LS_SHRINK = [(3, 10), (2, 8)]


def ls_table(rows: Sequence[dict[str, Any]], width: int = 80) -> str:
    """The compact listing: key columns, full ids, labels shortened to fit ``width`` if they can."""
    table = [_LS_HEADER] + [_ls_cells(row) for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(_LS_HEADER))]
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    for column, floor in _LS_SHRINK:
        cut = max(0, min(excess, widths[column] - max(floor, len(_LS_HEADER[column]))))
        widths[column] -= cut
        excess -= cut
    lines = []
    for line in table:
        cells = []
        for i, (cell, w) in enumerate(zip(line, widths, strict=True)):
            text = _fit(cell, w)
            cells.append(text.rjust(w) if i == 4 else text.ljust(w))
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _ls_cells(row: dict[str, Any]) -> list[str]:
    benchmark = str(row.get("benchmark") or "")
    if row.get("split") and str(row["split"]) != "test":
        benchmark += f"/{row['split']}"
    finished = "partial" if row.get("partial") else str(row.get("finished_at") or "-")
    return [
        str(row.get("knowledge_base_name") or ""),
        str(row.get("report_id") or ""),
        str(row.get("label") or ""),
        benchmark,
        "" if row.get("n_cases") is None else str(row["n_cases"]),
        finished[:16].replace("T", " "),
    ]


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"


__all__ = ["LS_COLUMNS", "is_report", "ls_table", "report_listing"]
