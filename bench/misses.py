"""Miss classes of 100,000 case results: one ``classify_case`` per record vs the columns.

    python bench/misses.py [--cases 100000]

A synthetic columnar report (written straight into the layout, as ``bench/reports.py`` does)
whose cases hit every class the columns decide: 3-5 judged documents per case, 1-3 chunks
(``d#n``) per document, top_k 10 in the response metadata, some responses deeper than k
(beyond k / split from the results), some shorter (not retrieved), half with the embedded
KB's deep ranks (chunk rank, cut, not indexed), and 1% with text evidence (classified record
by record). Times, in one process, CPU seconds (the box is shared) and wall:

* before: ``report.case_results`` built and ``classify_case`` called per record (what
  ``report.misses()`` did);
* after: ``evidence_misses`` on the columnar report, and on the same records in memory;
* the card's miss line (``frames.misses()`` → ``miss_line``) and the explorer's per-case rows.

First, the same on Cranfield runs of the embedded recipes (the realistic case). Both paths
give the same rows (checked). Figures go to bench/README.md by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from heta_notebook.analysis._misses import (  # noqa: E402
    EVIDENCE_COLUMNS,
    classify_case,
    evidence_misses,
    requested_top_k,
)
from heta_notebook.reports._folder import report_header, write_report  # noqa: E402
from heta_notebook.schema import EvaluationCaseResult, EvaluationReport  # noqa: E402
from tests._report_helpers import GroupWriter  # noqa: E402

MODES = ("full_text_search", "vector_search", "hybrid_search")
GROUP = 1000


def _case(rng: np.random.Generator, n_docs: int) -> tuple[dict, dict | None, list[str]]:
    """One case: its expected evidence, its response JSON fields and its result ids."""
    judged = [f"d{d}" for d in rng.choice(n_docs, size=int(rng.integers(3, 6)), replace=False)]
    depth = 20 if rng.random() < 0.1 else 6 if rng.random() < 0.05 else 10
    ids = [f"d{d}#{int(rng.integers(0, 3))}" for d in rng.integers(0, n_docs, size=depth)]
    for doc in judged:
        if rng.random() < 0.4:
            ids[int(rng.integers(0, depth))] = f"{doc}#{int(rng.integers(0, 3))}"
    evidence: list[dict[str, Any]] = [
        {"reference_id": d, "metadata": {"relevance": int(rng.integers(1, 4))}} for d in judged
    ]
    if rng.random() < 0.01:
        evidence.append({"text": "a passage in the text"})
    meta: dict[str, Any] = {"top_k": 10}
    if rng.random() < 0.5:
        meta["deep_ranks"] = {
            d: _deep(rng) for d in judged if not any(i.startswith(d + "#") for i in ids)
        }
    return {"expected": {"evidence": evidence}}, {"metadata": meta}, ids


def _deep(rng: np.random.Generator) -> dict[str, Any]:
    """A deep rank as the embedded KB records it for a judged document missing from the top k."""
    chunks = int(rng.integers(1, 4))
    if rng.random() < 0.02:
        return {"indexed": False, "chunks": chunks}
    ranked = rng.random() < 0.8
    rank = int(rng.integers(11, 500)) if ranked else None
    return {
        "indexed": True,
        "chunks": chunks,
        "chunk_rank": rank,
        "document_rank": rank and max(rank - chunks, 11),
        "cut": True if rng.random() < 0.05 else None,
    }


def group(start: int, n: int, n_docs: int, rng: np.random.Generator) -> dict[str, pa.Table]:
    """The cases, results and scores tables of case results ``start:start+n``."""
    metadata, responses, hits = zip(*(_case(rng, n_docs) for _ in range(n)), strict=True)
    rows = np.arange(start, start + n)
    counts = np.asarray([len(h) for h in hits])
    ids = [i for h in hits for i in h]
    docs = [i.split("#")[0] for i in ids]
    null = pa.nulls(n, pa.string())
    cases = pa.table(
        {
            "case_id": [f"q{r // 3}" for r in rows],
            "query": [f"query {r // 3}" for r in rows],
            "query_mode": [MODES[r % 3] for r in rows],
            "latency_ms": rng.uniform(1, 40, n),
            "error": null,
            "error_type": null,
            "error_json": null,
            "has_response": np.ones(n, bool),
            "response_mode": [MODES[r % 3] for r in rows],
            "answer": null,
            "response_json": [json.dumps(r) for r in responses],
            "n_results": counts.astype(np.int32),
            "n_scores": np.ones(n, np.int32),
            "metadata": [json.dumps(m) for m in metadata],
            "extra": null,
        }
    )
    total = int(counts.sum())
    results = pa.table(
        {
            "row": np.repeat(rows, counts).astype(np.int32),
            "rank": np.concatenate([np.arange(1, c + 1) for c in counts]).astype(np.int32),
            "id": ids,
            "text": np.zeros(total, np.int32),
            "score": rng.uniform(0, 1, total),
            "kind": ["chunk"] * total,
            "source": [f'{{"benchmark_document_id":"{d}","document_id":"{d}"}}' for d in docs],
            "metadata": pa.nulls(total, pa.string()),
            "extra": pa.nulls(total, pa.string()),
        }
    )
    scores = pa.table(
        {
            "row": rows.astype(np.int32),
            "name": ["recall@10"] * n,
            "value": rng.uniform(0, 1, n),
            "text": null,
            "kind": np.zeros(n, np.int8),
            "passed": pa.nulls(n, pa.bool_()),
            "status": ["scored"] * n,
            "reason": null,
            "metadata": null,
            "extra": null,
        }
    )
    return {"cases": cases, "results": results, "scores": scores}


def synthetic_report(folder: Path, n_cases: int, n_docs: int = 5000) -> EvaluationReport:
    """Write a columnar report of ``n_cases`` case results into ``folder`` and open it."""
    rng = np.random.default_rng(7)
    writer = GroupWriter(folder)
    writer.text_id("a chunk text")
    for start in range(0, n_cases, GROUP):
        writer.add_group(group(start, min(GROUP, n_cases - start), n_docs, rng))
    header = EvaluationReport(
        report_id="misses-bench",
        benchmark={"name": "synthetic", "split": "test"},
        knowledge_base_name="synthetic-kb",
        query_modes=MODES,
        started_at="2026-12-01T00:00:00Z",
        finished_at="2026-12-01T01:00:00Z",
        metadata={"config": {"top_k": 10}},
    )
    writer.finish(report_header(header))
    return EvaluationReport.load(folder)


def timed(label: str, fn: Any) -> tuple[Any, float]:
    """Run ``fn``; print and return its CPU seconds (wall beside)."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"  {label:<64} {cpu:8.2f} s CPU  ({wall:.2f} s wall)")
    return value, cpu


def one_by_one(records: tuple[EvaluationCaseResult, ...], requested: int | None) -> pd.DataFrame:
    """What ``evidence_misses`` did before: ``classify_case`` per record, then one frame."""
    rows = [row for result in records for row in classify_case(result, requested=requested)]
    frame = pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))
    for column in ("rank", "document_rank", "chunks", "k"):
        frame[column] = frame[column].astype("Int64")
    return frame


def cranfield(work: Path) -> None:
    """Cranfield runs of the embedded recipes (whole documents, 100-word chunks; three modes,
    deep ranks): in memory as the run returns them (array results) and saved as columns."""
    from heta_notebook import BeirBenchmark, Chunking, Recipe, run_benchmark

    recipes = {
        "whole-docs": Recipe(name="whole-docs"),
        "chunks-100": Recipe(
            name="chunks-100", chunking=Chunking(unit="words", size=100, overlap=20)
        ),
    }
    runs = run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipes=recipes,
        query_modes=["full_text_search", "vector_search", "hybrid_search"],
        workspace=work / "workspace",
        progress=False,
    )
    for name in recipes:
        compare_on(name, runs[name], work / name)


def compare_on(name: str, report: EvaluationReport, folder: Path) -> None:
    """Before and after on one run's report, in memory and saved as columns into ``folder``."""
    print(f"Cranfield {name}, {len(report.case_results)} case results:")
    requested = requested_top_k(report)
    old, t_old = timed(
        "before: classify_case per record (in memory)",
        lambda: one_by_one(report.case_results, requested),
    )
    new, t_new = timed("after: evidence_misses (in memory)", lambda: evidence_misses(report))
    pd.testing.assert_frame_equal(new, old)
    write_report(folder, report)
    saved = EvaluationReport.load(folder)
    built, t_build = timed(
        "before, stored: report.case_results built", lambda: tuple(saved.case_results)
    )
    _, t_loop = timed(
        "before, stored: classify_case per record", lambda: one_by_one(built, requested)
    )
    stored, t_stored = timed("after, stored: evidence_misses", lambda: evidence_misses(saved))
    pd.testing.assert_frame_equal(stored, old)
    print(f"  in memory {t_old / t_new:.1f}x, stored {(t_build + t_loop) / t_stored:.1f}x")


def synthetic(folder: Path, n_cases: int) -> None:
    """Before and after on the synthetic report: stored, then its records in memory."""
    report, _ = timed(
        f"write + open a synthetic columnar report ({n_cases:,} case results)",
        lambda: synthetic_report(folder, n_cases),
    )
    print("columnar report (what a store holds):")
    after, t_after = timed("after: evidence_misses(report)", lambda: evidence_misses(report))
    records, t_build = timed(
        "before, 1: report.case_results built (a record per case)",
        lambda: tuple(report.case_results),
    )
    requested = requested_top_k(report)
    old, t_loop = timed(
        "before, 2: classify_case per record", lambda: one_by_one(records, requested)
    )
    pd.testing.assert_frame_equal(after, old)  # the same rows, in order
    print(
        f"  before / after: {t_build + t_loop:.1f} s / {t_after:.1f} s = "
        f"{(t_build + t_loop) / t_after:.1f}x"
    )
    print("in-memory records (a run's report before it is saved):")
    memory = report.model_copy(update={"case_results": records})
    mem, t_records = timed("after: evidence_misses(report)", lambda: evidence_misses(memory))
    pd.testing.assert_frame_equal(mem, old)
    print(f"  before / after: {t_loop:.1f} s / {t_records:.1f} s = {t_loop / t_records:.1f}x")
    counts = after["miss_class"].value_counts().to_dict()
    print(f"  {len(after):,} evidence rows: {counts}")


def display(folder: Path) -> None:
    """The card and the explorers' miss rows on a fresh open (no records alive)."""
    from heta_notebook.display._explorer_details import miss_rows

    print("display, a fresh open of the columnar report:")
    fresh = EvaluationReport.load(folder)
    timed("card: _repr_html_() (no counts in its header, past 20,000: a pointer)",
          fresh._repr_html_)  # fmt: skip
    timed("explorer: miss_rows(report) (classifies the report)", lambda: miss_rows(fresh))
    with tempfile.TemporaryDirectory(prefix="heta-misses-saved-") as tmp:
        timed(
            "save: write_report (records built; counts from the rows the explorer cached)",
            lambda: write_report(Path(tmp) / "saved", fresh),
        )
        saved = EvaluationReport.load(Path(tmp) / "saved")
        timed("card of the saved report (miss counts read from its header)", saved._repr_html_)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="heta-misses-cranfield-") as tmp:
        cranfield(Path(tmp))
    with tempfile.TemporaryDirectory(prefix="heta-misses-") as tmp:
        synthetic(Path(tmp), args.cases)
        display(Path(tmp))


if __name__ == "__main__":
    main()
