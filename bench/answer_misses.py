"""Miss classes of reports with an answer step (notebook 04's runs), and at 100,000 cases.

    python bench/answer_misses.py [--work /tmp/answer_misses] [--cases 100000] [--repeats 3]

Notebook 04's four runs (SQuAD sample; sentence, phrase, cautious, chunks-phrase; three
modes; 3,516 case results) are run once and saved under ``--work`` (reused when there).
Least CPU seconds of ``--repeats``, fresh frames each time:

* ``comparison_html`` of notebook 04's comparison (``compare(runs, baseline="sentence")`` of
  fresh in-memory runs, after a warm-up page: its variants' miss counts classify every report);
* ``evidence_misses`` of each run, in memory (the columns then built) and stored (loaded
  fresh each time: what ``report.frames().misses()`` and a save classify);
* ``evidence_misses`` of a stored report of ``--cases`` case results: the stored "phrase"
  run's tables tiled (case ids renamed), so every case has the answer step.

Every run's rows are checked against ``classify_case`` record by record; the tiled report's
rows are summed up by a sha256 (compare before and after). Figures go to
bench/README.md by hand.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.answers import best_of  # noqa: E402 - least CPU time of n calls
from heta_notebook.analysis._misses import (  # noqa: E402
    EVIDENCE_COLUMNS,
    classify_case,
    evidence_misses,
    requested_top_k,
)
from heta_notebook.reports._folder import report_header, write_report  # noqa: E402
from heta_notebook.schema import EvaluationReport  # noqa: E402
from tests._report_helpers import GroupWriter  # noqa: E402

RECIPES = ("sentence", "phrase", "cautious", "chunks-phrase")


def notebook_04_runs(workspace: Path) -> Any:
    """Notebook 04's runs, in memory as ``run_benchmark`` returns them."""
    from heta_notebook import Chunking, Extractive, Recipe, SquadBenchmark, run_benchmark

    recipes = {
        "sentence": Recipe(name="sentence"),
        "phrase": Recipe(name="phrase", answer=Extractive(span="phrase")),
        "cautious": Recipe(name="cautious", answer=Extractive(span="phrase", min_overlap=0.7)),
        "chunks-phrase": Recipe(
            name="chunks-phrase",
            chunking=Chunking(unit="words", size=40, overlap=10),
            answer=Extractive(span="phrase"),
        ),
    }
    return run_benchmark(
        benchmark=SquadBenchmark.sample(), recipes=recipes, workspace=workspace, progress=False
    )


def stored_runs(work: Path) -> dict[str, EvaluationReport]:
    """Notebook 04's runs saved under ``work`` (run once)."""
    if not all((work / name / "header.json").exists() for name in RECIPES):
        runs = notebook_04_runs(work / "workspace")
        for name in RECIPES:
            write_report(work / name, runs[name])
    return {name: EvaluationReport.load(work / name) for name in RECIPES}


def one_by_one(report: EvaluationReport) -> pd.DataFrame:
    requested = requested_top_k(report)
    rows = [row for r in report.case_results for row in classify_case(r, requested=requested)]
    frame = pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
    for column in ("rank", "document_rank", "chunks", "k"):
        frame[column] = frame[column].astype("Int64")
    return frame


def tiled(source: Path, folder: Path, n_cases: int) -> EvaluationReport:
    """The stored report at ``source`` tiled to ``n_cases`` case results (case ids renamed)."""
    if not (folder / "header.json").exists():
        tables = {name: pq.read_table(next(source.glob(f"{name}.*parquet"))) for name in
                  ("cases", "results", "scores", "texts")}  # fmt: skip
        folder.mkdir(parents=True)
        writer = GroupWriter(folder)
        for text in tables["texts"].column("text").to_pylist():
            writer.text_id(text)
        n = len(tables["cases"])
        for start in range(0, n_cases, n):
            m = min(n, n_cases - start)
            cases = tables["cases"].slice(0, m)
            ids = [f"{c}~{start // n}" for c in cases.column("case_id").to_pylist()]
            cases = cases.set_column(0, "case_id", pa.array(ids))
            part = {"cases": cases}
            for name in ("results", "scores"):
                table = tables[name]
                rows = table.column("row").to_numpy()
                table = table.filter(pa.array(rows < m))
                shifted = table.column("row").to_numpy() + start
                part[name] = table.set_column(0, "row", pa.array(shifted, pa.int32()))
            writer.add_group(part)
        header = EvaluationReport.load(source).model_copy(update={"case_results": ()})
        writer.finish(report_header(header))
    return EvaluationReport.load(folder)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("/tmp/answer_misses"))
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from heta_notebook import compare
    from heta_notebook.display._comparison import comparison_html

    comparison_html(compare(stored_runs(args.work), baseline="sentence"))  # imports, warm
    runs = notebook_04_runs(args.work / "workspace-memory")
    started = time.process_time()
    comparison_html(compare(runs, baseline="sentence"))
    print(f"comparison_html, notebook 04's fresh runs: {time.process_time() - started:.3f} CPU s")
    total = {"memory": 0.0, "stored": 0.0}
    for name in RECIPES:
        report = runs[name]
        seconds = best_of(args.repeats, lambda r=report: evidence_misses(r))
        total["memory"] += seconds
        print(f"{name:14} in memory evidence_misses {seconds:.3f} CPU s", flush=True)
        seconds = best_of(
            args.repeats, lambda n=name: evidence_misses(EvaluationReport.load(args.work / n))
        )
        total["stored"] += seconds
        print(f"{name:14} stored (load + columns) evidence_misses {seconds:.3f} CPU s", flush=True)
        pd.testing.assert_frame_equal(evidence_misses(report), one_by_one(report))
    print(f"four runs: in memory {total['memory']:.3f}, stored {total['stored']:.3f} CPU s")

    if args.cases:
        source = args.work / "phrase"
        folder = args.work / f"tiled-{args.cases}"
        tiled(source, folder, args.cases)
        started = time.process_time()
        rows = evidence_misses(EvaluationReport.load(folder))
        print(
            f"tiled {args.cases}, stored: {time.process_time() - started:.3f} CPU s (load + columns)"
        )
        digest = hashlib.sha256(rows.to_csv(index=False).encode()).hexdigest()[:16]
        print(f"{len(rows)} rows, sha256 {digest}")
        print(rows["miss_class"].value_counts().to_string())


if __name__ == "__main__":
    main()
