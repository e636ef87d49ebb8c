"""The command line: share reports and notebooks without opening Jupyter.

python -m heta_notebook export REPORT.json [MORE.json ...] -o report.html
python -m heta_notebook ls STORE [--json]
python -m heta_notebook run-notebook NOTEBOOK.ipynb -o OUTDIR
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _report_path(text: str) -> Path:
    """A ``report.json`` path, or a folder that holds one or a columnar report (e.g. a store's
    report folder)."""
    path = Path(text)
    if path.is_dir() and (path / "header.json").is_file():
        return path
    if path.is_dir():
        path = path / "report.json"
    if not path.is_file():
        raise SystemExit(f"error: no report at {path}")
    return path


def _load_reports(paths: Sequence[str]) -> list[Any]:
    from heta_notebook.schema import EvaluationReport

    reports = []
    for text in paths:
        path = _report_path(text)
        try:
            reports.append(EvaluationReport.load(path))
        except ValueError as exc:
            raise SystemExit(f"error: {exc}") from None
    return reports


def _comparison_html(reports: list[Any], baseline: str | None, force: bool) -> str:
    """A standalone comparison page of several reports: the table, then bars and deltas."""
    from heta_notebook.analysis.compare import compare
    from heta_notebook.display.export import figure_html, html_page
    from heta_notebook.display.html import raw

    options: dict[str, Any] = {"baseline": baseline}
    if force:
        options["allow_different_benchmarks"] = True
    try:
        comparison = compare(reports, **options)
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None
    figures = [comparison.plot.bars(), comparison.plot.deltas()]
    title = "Comparison · " + " vs ".join(comparison.labels)
    return html_page(title, [raw(comparison.to_html()), *(figure_html(f) for f in figures)])


def cmd_export(args: argparse.Namespace) -> int:
    """Write one report, or a comparison of several, to a self-contained HTML file."""
    from heta_notebook.store import atomic_write_text

    reports = _load_reports(args.reports)
    out = Path(args.output)
    if len(reports) == 1:
        html = reports[0].to_html()
    else:
        html = _comparison_html(reports, args.baseline, args.force)
    atomic_write_text(out, html)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB, {len(reports)} report(s))")
    return 0


def cmd_ls(args: argparse.Namespace) -> int:
    """Print the reports saved in a ReportStore folder, oldest first."""
    from heta_notebook.store import ReportStore

    if "://" not in args.store and not Path(args.store).is_dir():
        raise SystemExit(f"error: {args.store} is not a folder")
    frame = ReportStore(args.store).list()
    if args.json:
        print(frame.to_json(orient="records", indent=2))
        return 0
    if frame.empty:
        print(f"no reports in {args.store}")
        return 0
    columns = [c for c in _LS_COLUMNS if c in frame.columns]
    print(frame[columns].to_string(index=False, max_colwidth=40))
    return 0


_LS_COLUMNS = [
    "knowledge_base_name", "report_id", "label", "benchmark", "split",
    "query_modes", "n_cases", "finished_at", "partial",
]  # fmt: skip


def cmd_run_notebook(args: argparse.Namespace) -> int:
    """Execute a notebook headless; write the executed notebook and its offline HTML."""
    from heta_notebook.notebook_export import run_notebook

    notebook = Path(args.notebook)
    if not notebook.is_file():
        raise SystemExit(f"error: no notebook at {notebook}")
    print(f"running {notebook} (this can take a minute or two)...", flush=True)
    run = run_notebook(notebook, args.output, timeout=args.timeout)
    print(run.describe())
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argparse tree of the three commands."""
    parser = argparse.ArgumentParser(prog="python -m heta_notebook", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True)

    export = sub.add_parser("export", help="report(s) -> one self-contained HTML file")
    export.add_argument("reports", nargs="+", help="report.json files (or folders holding one)")
    export.add_argument("-o", "--output", required=True, help="HTML file to write")
    export.add_argument("--baseline", help="label of the baseline report when comparing")
    export.add_argument("--force", action="store_true",
                        help="compare reports of different benchmarks anyway")  # fmt: skip
    export.set_defaults(func=cmd_export)

    ls = sub.add_parser("ls", help="list the reports saved in a ReportStore")
    ls.add_argument("store", help="the store's root folder (or fsspec URL)")
    ls.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    ls.set_defaults(func=cmd_ls)

    run = sub.add_parser("run-notebook", help="execute a notebook and export offline HTML")
    run.add_argument("notebook", help="the .ipynb to execute (runs in its own folder)")
    run.add_argument("-o", "--output", required=True, help="folder for NAME.ipynb and NAME.html")
    run.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell")
    run.set_defaults(func=cmd_run_notebook)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m heta_notebook`` and the ``heta-notebook`` script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
