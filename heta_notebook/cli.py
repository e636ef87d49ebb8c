"""The command line: share reports and notebooks without opening Jupyter.

python -m heta_notebook run BENCHMARK [--recipe default|bm25|module:attr] [--limit N]
                            [--sample N --seed S] [--case-id ID ...] [--label KEY=VALUE ...]
                            [--top-k K] [--mode M ...] [--out STORE]
python -m heta_notebook export REPORT.json [MORE.json ...] -o report.html [--force]
python -m heta_notebook ls STORE [--long | --json]
python -m heta_notebook run-notebook NOTEBOOK.ipynb -o OUTDIR
python -m heta_notebook gate NEW --baseline OLD [--score S ...] [--max-drop X] [--alpha A]
                                [--test permutation|t-test|wilcoxon] [--family score|all]
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from heta_notebook.runner._command_inputs import (
    NAMED_BENCHMARKS,
    open_benchmark,
    open_evaluators,
    open_recipe,
    short_path,
)


def _report_path(text: str) -> Path:
    """A ``report.json`` path, or a folder that holds one or a columnar report (e.g. a store's
    report folder)."""
    from heta_notebook.reports._resolve import NoReportError, report_file

    try:
        return report_file(text)
    except NoReportError as exc:
        raise SystemExit(f"error: {exc}") from None


def _is_part_of(out: Path, report: Path) -> bool:
    """True when writing ``out`` would replace ``report`` or a file of its columnar folder."""
    out, report = out.resolve(), report.resolve()
    return out.parent == report if report.is_dir() else out == report


def _load_reports(paths: Sequence[str]) -> list[Any]:
    from heta_notebook.schema._records import EvaluationReport

    reports = []
    for text in paths:
        path = _report_path(text)
        try:
            reports.append(EvaluationReport.load(path))
        except ValueError as exc:
            raise SystemExit(f"error: {exc}") from None
    return reports


def _comparison_html(reports: list[Any], baseline: str | int | None, force: bool) -> str:
    """A standalone comparison page of several reports (``display._export`` composes it).

    ``baseline`` is a label or variant, or the index of the input report given as a path."""
    from heta_notebook.analysis._compare import compare

    options: dict[str, Any] = {"baseline": None if isinstance(baseline, int) else baseline}
    if force:
        options["allow_different_benchmarks"] = True
    comparison = compare(reports, **options)
    if isinstance(baseline, int):
        comparison = comparison.with_baseline(comparison.labels[baseline])
    return str(comparison.to_html())


def cmd_export(args: argparse.Namespace) -> int:
    """Write one report, or a comparison of several, to a self-contained HTML file."""
    from heta_notebook._util.paths import atomic_write_text

    inputs = [_report_path(text) for text in args.reports]
    try:
        out = _output_path(args.output, inputs, force=args.force)
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise SystemExit(
            f"error: cannot write -o {short_path(args.output)}: {exc.strerror}"
        ) from None
    reports = _load_reports(args.reports)
    if len(reports) == 1:
        html = str(reports[0].to_html())
    else:
        allow = args.force or args.allow_different_benchmarks
        html = _comparison_html(reports, _baseline_option(args.baseline, inputs), allow)
    try:
        atomic_write_text(out, html)
    except OSError as exc:
        raise SystemExit(f"error: cannot write {out}: {exc.strerror or exc}") from None
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB, {len(reports)} report(s))")
    return 0


def _baseline_option(text: str | None, inputs: Sequence[Path]) -> str | int | None:
    """``--baseline`` as given, or the index of the input report it names by path."""
    if text is None or not Path(text).exists():
        return text
    target = _report_path(text).resolve()
    for i, path in enumerate(inputs):
        if path.resolve() == target:
            return i
    raise ValueError(f"--baseline {text} is not one of the reports to export; give its label")


def _output_path(text: str, inputs: Sequence[Path], *, force: bool) -> Path:
    """The HTML file to write: never one of the inputs, an existing file only with ``--force``."""
    if not text.strip():
        raise SystemExit("error: -o needs a file name, e.g. -o report.html")
    out = Path(text)
    if out.is_dir():
        example = out / "report.html"
        raise SystemExit(f"error: -o {out} is a folder; give a file name, e.g. {example}")
    if any(_is_part_of(out, path) for path in inputs):
        raise SystemExit(f"error: -o {out} is one of the input reports; refusing to overwrite it")
    if out.exists() and not force:
        raise SystemExit(f"error: {out} exists; pass --force to replace it")
    return out


def cmd_ls(args: argparse.Namespace) -> int:
    """Print the reports saved in a ReportStore folder, oldest first, as an 80-column table."""
    import warnings

    from heta_notebook.reports._listing import LS_COLUMNS, is_report, ls_table, report_listing
    from heta_notebook.reports._run import ReportWarning
    from heta_notebook.reports._store import ReportStore

    local = "://" not in args.store
    if local and not Path(args.store).is_dir() and not is_report(Path(args.store)):
        raise SystemExit(f"error: {args.store} is not a folder")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReportWarning)
        try:
            one = report_listing(Path(args.store)) if local else None
        except ValueError as exc:  # a .json that is no report: unusable input, exit 2
            raise SystemExit(f"error: {error_line(exc)}") from None
        frame = ReportStore(args.store).list() if one is None else one
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    if args.json:
        print(frame.to_json(orient="records", indent=2))
        return 0
    if frame.empty:
        print(f"no reports in {args.store}")
        return 0
    if args.long:
        columns = [c for c in LS_COLUMNS if c in frame.columns]
        print(frame[columns].to_string(index=False, max_colwidth=None, line_width=None))
        return 0
    print(ls_table(frame.to_dict(orient="records")))
    return 0


def cmd_run_notebook(args: argparse.Namespace) -> int:
    """Execute a notebook headless; write the executed notebook and its offline HTML."""
    from heta_notebook.display._notebook import run_notebook

    notebook = Path(args.notebook)
    if not notebook.is_file():
        raise SystemExit(f"error: no notebook at {notebook}")
    import nbformat
    from nbclient.exceptions import CellExecutionError

    try:
        nbformat.read(notebook, as_version=4)
    except (ValueError, nbformat.ValidationError) as exc:
        raise ValueError(f"{notebook} is not a readable notebook: {exc}") from None
    print(f"running {notebook} (this can take a minute or two)...", flush=True)
    try:
        run = run_notebook(notebook, args.output, timeout=args.timeout)
    except CellExecutionError as exc:  # its message holds the cell's source and traceback
        raise RuntimeError(f"{notebook}: a cell failed: {exc.ename}: {exc.evalue}") from None
    print(run.describe())
    return 0


# --------------------------------------------------------------------------- run


def cmd_run(args: argparse.Namespace) -> int:
    """Run a benchmark against a recipe or system; print the card's summary (exit 0)."""
    from heta_notebook.runner._benchmark import run_benchmark
    from heta_notebook.schema._status import DepthWarning
    from heta_notebook.systems._normalize import SystemOutputError

    benchmark, recipe = open_benchmark(args.benchmark, args.split), open_recipe(args.recipe)
    evaluators = open_evaluators(args.evaluator)
    labels = _labels_option(args.label)
    try:
        with warnings.catch_warnings():  # the summary says it in a line of its own
            warnings.simplefilter("ignore", DepthWarning)
            result = run_benchmark(
                benchmark=benchmark,
                recipe=recipe,
                evaluators=evaluators,
                config={"top_k": args.top_k} if args.top_k else None,
                query_modes=args.mode or None,
                store=args.out,
                limit=args.limit,
                sample=args.sample,
                seed=args.seed,
                case_ids=args.case_id or None,
                labels=labels,
                progress=sys.stderr.isatty(),
            )
    except SystemOutputError as exc:  # a user's system returned a shape we cannot read
        raise ValueError(str(exc)) from None
    print(run_summary(result.report, result.report_path))  # type: ignore[union-attr]  # one recipe
    return 0


def _labels_option(items: Sequence[str] | None) -> dict[str, list[str]] | None:
    """``--label key=value`` (repeatable; values of one key are alternatives)."""
    if not items:
        return None
    labels: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--label {item!r}: expected KEY=VALUE, e.g. --label topic=physics")
        labels.setdefault(key.strip(), []).append(value.strip())
    return labels


def run_summary(report: Any, path: Any = None) -> str:
    """The card in plain text: what ran, counts, abstentions, id coverage, depth, ties, why
    evidence was missed, and each score per mode."""
    from heta_notebook.analysis._ties import notable_ties, tie_line
    from heta_notebook.schema._status import depth_line

    frames = report.frames()
    counts = frames.case_counts()
    lines = [
        f"{report.label} on {report.benchmark.name} ({report.benchmark.split}): "
        f"{counts['n_cases']} cases, {counts['n_case_results']} case x mode, "
        f"{counts['n_errors']} query errors" + (" (PARTIAL)" if report.is_partial else ""),
    ]
    lines += _abstention_lines(frames)
    depth = depth_line(report.metadata, how="--top-k {k}")
    if depth:
        lines.append(f"note: {depth}")
    lines += [f"ties: {tie_line(r)}" for r in notable_ties(frames.ties()).itertuples(index=False)]
    lines += _miss_lines(frames)
    coverage = report.metadata.get("id_coverage")
    if isinstance(coverage, dict) and coverage.get("share", 1.0) < 1.0:
        lines.append(f"id coverage: {coverage['share']:.0%} of results map to documents")
    summary = report.summary()
    if not summary.empty:
        table = summary[["query_mode", "score", "mean", "n", "n_skipped", "n_error"]]
        lines.append(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    if path is not None:
        lines.append(f"saved {path}")
    return "\n".join(lines)


def _miss_lines(frames: Any) -> list[str]:
    """Per mode: why expected evidence was missed, as the card says it (``report.misses()``)."""
    from heta_notebook.analysis._misses import miss_line

    counts = frames.misses()  # a saved report's header counts when it has them
    groups = dict(tuple(counts.groupby("query_mode", sort=False))) if not counts.empty else {}
    return [f"{mode}: {miss_line(groups[mode])}" for mode in frames.modes if mode in groups]


def _abstention_lines(frames: Any) -> list[str]:
    """Per mode that abstained: how often, and how many expected abstentions were right."""
    from heta_notebook.analysis._abstentions import abstention_line, mode_abstentions

    if not frames.abstentions():
        return []
    table = mode_abstentions(frames)
    return [f"{r.query_mode}: {abstention_line(r)}" for r in table.itertuples() if r.abstained]


GATE_EXIT = {"pass": 0, "regression": 1, "input": 2}


def cmd_gate(args: argparse.Namespace) -> int:
    """Gate NEW against --baseline: 0 pass, 1 significant regression, 2 unusable input."""
    try:
        _check_gate_outputs(args)
        return _gate(args)
    except UnusableOutput as exc:
        print(f"gate: unusable input: {exc}", file=sys.stderr)
    except OSError as exc:  # a path that went bad during the run: still not a regression
        print(f"gate: unusable input: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
    except Exception as exc:  # exit 1 only ever means a regression, never a crash
        import traceback

        traceback.print_exc()
        print(f"gate: could not run ({type(exc).__name__}: {exc})", file=sys.stderr)
    return GATE_EXIT["input"]


class UnusableOutput(ValueError):
    """An output path the command cannot write (a folder where a file goes, a file in the way)."""


def _check_gate_outputs(args: argparse.Namespace) -> None:
    """Refuse output paths the gate could not write before it runs (exit 2, not 1)."""
    if args.no_page and args.page_dir is not None:
        raise UnusableOutput("--no-page writes no page: drop --page-dir (or --no-page)")
    for flag, value, kind in (
        ("--junit-xml", args.junit_xml, "file"),
        ("--summary-md", args.summary_md, "file"),
        ("--page-dir", args.page_dir, "folder"),
    ):
        if value is not None:
            writable_path(flag, value, kind)


def writable_path(flag: str, text: str, kind: str = "file") -> Path:
    """``text`` as a path this process can create or write as a ``kind``, else UnusableOutput."""
    path = Path(text)
    if not text.strip():
        raise UnusableOutput(f"{flag} needs a path")
    try:
        if path.exists() and path.is_dir() != (kind == "folder"):
            found = "a folder" if path.is_dir() else "a file"
            raise UnusableOutput(f"{flag} {text} is {found}; expected a {kind}")
        parent = path if kind == "folder" else path.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        target = path if path.exists() else parent
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise UnusableOutput(f"{flag} {short_path(text)}: {exc.strerror}") from None
    if not parent.is_dir():
        raise UnusableOutput(f"{flag} {text}: {parent} is a file, not a folder")
    if not os.access(target, os.W_OK):
        raise UnusableOutput(f"{flag} {text}: {target} is not writable")
    return path


def _gate(args: argparse.Namespace) -> int:
    from heta_notebook.benchmarks._io import BenchmarkFormatError
    from heta_notebook.testing._gates import GateInputError, check_regression

    try:
        result = check_regression(
            args.new,
            args.baseline,
            scores=args.score or ["beir_ndcg@10"],
            max_drop=args.max_drop,
            alpha=args.alpha,
            modes=args.mode or None,
            by=args.by,
            output_dir=args.page_dir,
            write_page=not args.no_page,
            n_resamples=args.resamples,
            method=args.method,
            test=args.test,
            family=args.family,
            correction=args.correction,
            min_power=args.min_power,
            detect=args.detect,
            corrected=args.corrected,
            labels=_label_set(args.labels),
        )
    except (GateInputError, BenchmarkFormatError) as exc:
        print(f"gate: unusable input: {exc}", file=sys.stderr)
        if args.summary_md:
            _parent(args.summary_md)
            Path(args.summary_md).write_text(f"### Regression gate: unusable input\n\n{exc}\n")
        return GATE_EXIT["input"]
    markdown = result.to_markdown()
    if args.summary_md:
        with open(_parent(args.summary_md), "a", encoding="utf-8") as handle:  # CI summaries append
            handle.write(markdown)
        print(result.message())
    else:
        print(markdown)
    if args.junit_xml:
        write_gate_junit(result, Path(args.junit_xml))
    return GATE_EXIT["pass" if result.passed else "regression"]


def _label_set(path: str | None) -> Any:
    """``--labels``: a saved label set (``LabelSet.load``), or None."""
    if path is None:
        return None
    from heta_notebook.labels._set import LabelSet

    return LabelSet.load(path)


def _parent(text: str) -> Path:
    """``text`` as a path whose folder exists (created when missing)."""
    path = Path(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def write_gate_junit(result: Any, path: Path) -> None:
    """One JUnit test case per score × mode (× slice); regressions are failures."""
    import xml.etree.ElementTree as ET

    rows = result.rows
    suite = ET.Element(
        "testsuite",
        name="heta-gate",
        tests=str(len(rows)),
        failures=str(int(rows["failed"].sum())),
        errors="0",
    )
    for r in rows.to_dict("records"):
        name = " · ".join(str(x) for x in (r.get("slice"), r["score"], r["mode"]) if x is not None)
        case = ET.SubElement(suite, "testcase", classname="heta_gate", name=name)
        detail = (
            f"{r['baseline_mean']:.4f} -> {r['new_mean']:.4f}, delta {r['delta']:+.4f} "
            f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}], p_holm {r['p_holm']:.4g}"
        )
        if r["failed"]:
            failure = ET.SubElement(case, "failure", message=f"regression: {detail}")
            failure.text = "\n".join(r["examples"])
        else:
            ET.SubElement(case, "system-out").text = detail
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def add_gate_parser(sub: Any) -> None:
    """The ``gate`` subcommand (its own function: other commands change independently)."""
    gate = sub.add_parser("gate", help="fail (exit 1) on a significant regression vs a baseline")
    gate.add_argument("new", help="the new report.json (or a folder holding one)")
    gate.add_argument("--baseline", required=True, help="the baseline report.json (or folder)")
    gate.add_argument(
        "--score", action="append", help="score to gate (repeatable; default beir_ndcg@10)"
    )
    gate.add_argument("--mode", action="append", help="query mode (repeatable; default: shared)")
    gate.add_argument("--by", help="also test each slice of this case label / metadata key")
    gate.add_argument(
        "--max-drop",
        type=float,
        default=0.0,
        help="ignore significant drops up to this much (default 0)",
    )
    gate.add_argument("--alpha", type=float, default=0.05, help="significance level (Holm)")
    gate.add_argument("--resamples", type=int, default=10_000, help="permutation resamples")
    gate.add_argument(
        "--method",
        choices=("auto", "monte-carlo", "asymptotic"),
        default="auto",
        help="null distributions: auto (asymptotic at >= 20,000 well-spread pairs), "
        "monte-carlo or asymptotic",
    )
    gate.add_argument(
        "--test",
        choices=("permutation", "sign-flip", "t-test", "wilcoxon", "bootstrap"),
        default="permutation",
        help="paired test: sign-flip permutation (default), paired t-test, Wilcoxon signed-rank "
        "or paired bootstrap",
    )
    gate.add_argument(
        "--correction",
        choices=("holm", "bh", "bonferroni", "none"),
        default="holm",
        help="multiple-comparison correction (default holm)",
    )
    gate.add_argument(
        "--min-power",
        type=float,
        help="exit 2 unless each check has this power (e.g. 0.8) to detect --detect",
    )
    gate.add_argument(
        "--detect", type=float, help="the drop --min-power guards (default --max-drop)"
    )
    gate.add_argument(
        "--family",
        choices=("score", "all"),
        default="score",
        help="Holm family: each score over its modes and slices (default), or all checks at once",
    )
    gate.add_argument(
        "--summary-md",
        help="append the Markdown summary here (e.g. $GITHUB_STEP_SUMMARY) instead of printing it",
    )
    gate.add_argument("--junit-xml", help="write a JUnit XML file")
    gate.add_argument("--page-dir", help="folder for the comparison page (default heta-gates/)")
    gate.add_argument(
        "--no-page",
        action="store_true",
        help="write no comparison page (about a second less per gate; the table, summary and "
        "JUnit XML still say what failed)",
    )
    gate.add_argument(
        "--corrected",
        action="store_true",
        help="test the corrected difference (judge labels rectified by people's; docs/labels.md)",
    )
    gate.add_argument(
        "--labels", help="the label set both reports were scored on (LabelSet.save's path)"
    )
    gate.set_defaults(func=cmd_gate)


def add_run_parser(sub: Any) -> None:
    """The ``run`` subcommand: a benchmark against a recipe or system, a subset at a time."""
    run = sub.add_parser("run", help="run a benchmark against a recipe or your own system")
    run.add_argument(
        "benchmark",
        help=f"{' or '.join(NAMED_BENCHMARKS)}, a BEIR folder, a Heta JSONL folder "
        "(documents.jsonl, cases.jsonl), a SQuAD .json file or module:attr (a benchmark object)",
    )
    run.add_argument(
        "--recipe",
        default="default",
        help="default (embedded BM25 + dense + hybrid), bm25, or module:attr (a Recipe or a "
        "system: a function, an object with query, an HttpSystem...)",
    )
    run.add_argument("--split", default="test", help="a BEIR folder's qrels split (default test)")
    run.add_argument("--limit", type=_positive, help="only the first N cases")
    run.add_argument("--sample", type=_positive, help="N cases drawn at random (see --seed)")
    run.add_argument("--seed", type=int, help="the --sample draw's seed (default 0)")
    run.add_argument("--case-id", action="append", help="only this case (repeatable)")
    run.add_argument(
        "--label", action="append", help="only cases with this KEY=VALUE label (repeatable)"
    )
    run.add_argument(
        "--evaluator",
        action="append",
        help="beir (nDCG, MAP, recall, P, MRR @1-100), squad (EM, F1, evidence recall, "
        "abstention), evidence (evidence recall@5, @10) or module:attr (repeatable; default: "
        "the benchmark's own)",
    )
    run.add_argument(
        "--top-k", type=_positive, help="results per query (default: as deep as the scores cut)"
    )
    run.add_argument("--mode", action="append", help="query mode (repeatable; default: all)")
    run.add_argument("--out", help="a report store folder to save the report in")
    run.set_defaults(func=cmd_run)


def _positive(text: str) -> int:
    """A positive whole number (argparse names the option; never this function)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (the full usage is one ``--help`` away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _prog() -> str:
    """How the user called us: ``heta-notebook`` (the script) or ``python -m heta_notebook``."""
    return (
        "heta-notebook" if Path(sys.argv[0]).name == "heta-notebook" else "python -m heta_notebook"
    )


def build_parser() -> argparse.ArgumentParser:
    """The argparse tree of the commands."""
    parser = _Parser(
        prog=_prog(),
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    add_run_parser(sub)

    export = sub.add_parser("export", help="report(s) -> one self-contained HTML file")
    export.add_argument("reports", nargs="+", help="report.json files (or folders holding one)")
    export.add_argument("-o", "--output", required=True, help="HTML file to write")
    export.add_argument("--baseline", help="label of the baseline report when comparing")
    export.add_argument("--force", action="store_true", help="replace an existing output file")
    export.add_argument(
        "--allow-different-benchmarks",
        action="store_true",
        help="show reports of different benchmarks side by side, unpaired",
    )
    export.set_defaults(func=cmd_export)

    ls = sub.add_parser("ls", help="list the reports saved in a ReportStore")
    ls.add_argument("store", help="the store's root folder (or fsspec URL)")
    ls.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    ls.add_argument("--long", action="store_true", help="every column, untruncated (wide)")
    ls.set_defaults(func=cmd_ls)

    run = sub.add_parser("run-notebook", help="execute a notebook and export offline HTML")
    run.add_argument("notebook", help="the .ipynb to execute (runs in its own folder)")
    run.add_argument("-o", "--output", required=True, help="folder for NAME.ipynb and NAME.html")
    run.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell")
    run.set_defaults(func=cmd_run_notebook)

    add_gate_parser(sub)
    return parser


# Errors a user can cause (bad files, names, options, reports that do not fit together): one
# line on stderr and exit 2, never a traceback. HETA_DEBUG=1 shows the traceback instead.
USER_ERRORS = (ValueError, KeyError, OSError, RuntimeError, ImportError)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m heta_notebook`` and the ``heta-notebook`` script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:  # e.g. `ls --json | head`: the reader has all it wanted
        _silence_stdout()
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except SystemExit as stop:  # raise SystemExit("error: ..."): unusable input, exit 2
        if isinstance(stop.code, str) and stop.code.startswith("error: "):
            print(stop.code, file=sys.stderr)  # the one line (a str code would exit 1)
            stop.code = 2
        raise
    except USER_ERRORS as exc:
        if os.environ.get("HETA_DEBUG"):
            raise
        print(f"error: {error_line(exc)}", file=sys.stderr)
        return 2


def error_line(exc: BaseException) -> str:
    """``exc`` as one line: its message (OS errors as "reason: file"), newlines folded."""
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    elif isinstance(exc, KeyError) and exc.args:
        text = str(exc.args[0])  # str(KeyError) wraps the message in quotes
    elif isinstance(exc, ImportError) and exc.name:
        text = (
            f"{exc}; install the extra that provides it, e.g. pip install 'heta-notebook[notebook]'"
        )
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush raises no second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is no real file (e.g. under pytest)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
