"""Reports at benchmark size: today's report.json beside the columnar store (run by hand).

    python bench/reports.py [--cases 100000] [--results 100] [--scores 25] [--json-cases 5000]

1. A synthetic report of N case results × R retrieved results × S scores, written straight
   into the columnar layout one row group at a time (vectorised; a text pool shared by
   every hit, as chunks are in a real KB). Today's ``report.json`` of the same report is
   written in full for its first ``--json-cases`` case results (records materialised from
   the store, ``to_json()``), so both formats and their fresh-process loads are measured
   side by side there; at N the JSON size is that exact size scaled by N / json-cases.
2. Fresh processes (one per figure, peak RSS from ``getrusage``): ``store.load`` + card,
   explorer construction with its first page, ``compare()`` of three such reports.
3. Checkpointing: 20,000 BEIR cases × 25 default metrics on an instant KB, with a store
   (checkpoint every 25 cases + columnar save) and without one.
4. A real embedded-KB run (Cranfield, BM25 + dense + hybrid, 225 queries × 3 modes), saved
   in both formats: size and fresh-process load + card.

Figures go to bench/README.md by hand. Peak memory stays a few hundred MB per process.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore  # noqa: E402
from heta_notebook._util.paths import atomic_write_text  # noqa: E402
from heta_notebook.reports._store import _header  # noqa: E402
from heta_notebook.reports._stored import _HEADER_DIGEST, header_digest  # noqa: E402
from heta_notebook.schema import EvaluationReport  # noqa: E402
from tests._report_helpers import GroupWriter, add_saved_misses  # noqa: E402

MODES = ("full_text_search", "vector_search", "hybrid_search")
WORDS = [
    "wing",
    "flow",
    "pressure",
    "boundary",
    "layer",
    "heat",
    "transfer",
    "supersonic",
    "shock",
    "wave",
    "laminar",
    "turbulent",
    "nozzle",
    "jet",
    "plate",
    "cylinder",
    "cone",
    "mach",
    "number",
    "reynolds",
    "skin",
    "friction",
    "temperature",
    "velocity",
    "profile",
    "theory",
    "experiment",
    "measured",
    "distribution",
]
GROUP = 1000


def score_names(n: int) -> list[str]:
    base = [
        f"{m}@{k}"
        for m in ("ndcg", "map", "recall", "precision", "mrr")
        for k in (1, 3, 5, 10, 100)
    ]
    return (base + [f"extra_{i}" for i in range(max(0, n - len(base)))])[:n]


def text_pool(n: int, rng: np.random.Generator) -> list[str]:
    """Chunk texts of ~60 words drawn from a small vocabulary (compresses like prose)."""
    words = np.asarray(WORDS)
    picks = rng.integers(0, len(words), size=(n, 60))
    return [f"chunk {i}: " + " ".join(words[row]) + " ." for i, row in enumerate(picks)]


def synth_group(
    start: int,
    n: int,
    n_results: int,
    names: list[str],
    n_docs: int,
    rng: np.random.Generator,
    shift: float,
) -> dict[str, pa.Table]:
    """Tables of case results ``start:start+n`` (row ids absolute)."""
    rows = np.arange(start, start + n)
    case_ids = [f"q{r // 3}" for r in rows]
    evidence = rng.integers(0, n_docs, size=(n, 3))
    metadata = [
        json.dumps(
            {
                "expected": {
                    "evidence": [
                        {"reference_id": f"d{d}", "metadata": {"relevance": 1}} for d in ev
                    ]
                },
                "labels": {"topic": int(ev[0] % 7)},
            }
        )
        for ev in evidence
    ]
    cases = pa.table(
        {
            "case_id": case_ids,
            "query": [f"what is the {WORDS[r % len(WORDS)]} of case {r // 3}" for r in rows],
            "query_mode": [MODES[r % 3] for r in rows],
            "latency_ms": rng.uniform(1, 40, n),
            "error": pa.nulls(n, pa.string()),
            "error_type": pa.nulls(n, pa.string()),
            "error_json": pa.nulls(n, pa.string()),
            "has_response": np.ones(n, bool),
            "response_mode": [MODES[r % 3] for r in rows],
            "answer": pa.nulls(n, pa.string()),
            "response_json": pa.nulls(n, pa.string()),
            "n_results": np.full(n, n_results, np.int32),
            "n_scores": np.full(n, len(names), np.int32),
            "metadata": metadata,
            "extra": pa.nulls(n, pa.string()),
        }
    )
    docs = rng.integers(0, n_docs, size=n * n_results)
    doc_ids = np.char.add("d", docs.astype(str))
    sources = [f'{{"benchmark_document_id":"{d}","document_id":"{d}"}}' for d in doc_ids.tolist()]
    results = pa.table(
        {
            "row": np.repeat(rows, n_results).astype(np.int32),
            "rank": np.tile(np.arange(1, n_results + 1, dtype=np.int32), n),
            "id": np.char.add(doc_ids, "#0").tolist(),
            "text": docs.astype(np.int32),
            "score": np.sort(rng.uniform(0, 30, (n, n_results)), axis=1)[:, ::-1].ravel(),
            "kind": pa.array(["chunk"] * (n * n_results)),
            "source": sources,
            "metadata": pa.nulls(n * n_results, pa.string()),
            "extra": pa.nulls(n * n_results, pa.string()),
        }
    )
    s = len(names)
    values = np.clip(rng.uniform(0, 1, n * s) + shift, 0, 1)
    scores = pa.table(
        {
            "row": np.repeat(rows, s).astype(np.int32),
            "name": names * n,
            "value": values,
            "text": pa.nulls(n * s, pa.string()),
            "kind": np.zeros(n * s, np.int8),
            "passed": pa.nulls(n * s, pa.bool_()),
            "status": ["scored"] * (n * s),
            "reason": pa.nulls(n * s, pa.string()),
            "metadata": [json.dumps({"relevant_documents": 3, "retrieved_documents": n_results})]
            * (n * s),
            "extra": pa.nulls(n * s, pa.string()),
        }
    )
    return {"cases": cases, "results": results, "scores": scores}


def write_synthetic(
    store: ReportStore, report_id: str, args: argparse.Namespace, seed: int, shift: float
) -> Path:
    """A columnar report of ``args.cases`` case results written group by group."""
    rng = np.random.default_rng(seed)
    folder = store.report_dir("synthetic-kb", report_id)
    if args.reuse and (folder / "header.json").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    writer = GroupWriter(folder)
    for text in text_pool(args.docs, np.random.default_rng(0)):
        writer.text_id(text)
    names = score_names(args.scores)
    for start in range(0, args.cases, GROUP):
        n = min(GROUP, args.cases - start)
        writer.add_group(synth_group(start, n, args.results, names, args.docs, rng, shift))
    header = EvaluationReport(
        report_id=report_id,
        benchmark={"name": "synthetic-beir", "split": "test"},
        knowledge_base_name="synthetic-kb",
        query_modes=MODES,
        started_at="2026-12-01T00:00:00Z",
        finished_at="2026-12-01T01:00:00Z",
        recipe_manifest={"name": report_id},
        metadata={"label": report_id},
    )
    from heta_notebook.reports._folder import report_header

    writer.finish(report_header(header))
    report = EvaluationReport.load(folder)  # held: frames keep only a weak reference to it
    frames = report.frames()  # the header carries summary and views, as a real save's does
    data = json.loads((folder / "header.json").read_text())
    data["views"] = frames.views()
    add_saved_misses(folder, data, frames.miss_rows_to_save())  # as a save keeps them
    data["score_summary"] = {
        f"{m}.{s}": float(v)
        for m, s, v in frames.summary()[["query_mode", "score", "mean"]].itertuples(index=False)
    }
    data[_HEADER_DIGEST] = header_digest(data)  # an edited header needs its digest again
    atomic_write_text(folder / "header.json", json.dumps(data))
    del frames, report
    atomic_write_text(folder / "summary.json", json.dumps(_header(EvaluationReport.load(folder))))
    return folder


def folder_bytes(folder: Path, names: tuple[str, ...] | None = None) -> int:
    return sum(
        p.stat().st_size
        for p in folder.iterdir()
        if p.is_file()
        and (names is None or p.name in names or ("*.parquet" in names and p.suffix == ".parquet"))
    )


COLUMNAR = ("header.json", "*.parquet")  # tables are named per save: cases.{generation}.parquet

_FRESH = """
import json, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
from heta_notebook import ReportStore, compare
store = ReportStore({store!r})
t_import = time.perf_counter()
out = {{}}
{body}
out["import_s"] = t_import - t0
out["peak_rss_mb"] = int([l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]) / 1024  # this process only (ru_maxrss keeps the forking parent)
print(json.dumps(out))
"""
LOAD_CARD = """
t = time.perf_counter()
report = store.load({kb!r}, {rid!r})
out["load_s"] = time.perf_counter() - t
html = report._repr_html_()
out["load_card_s"] = time.perf_counter() - t
"""
EXPLORER = (
    LOAD_CARD
    + """
t = time.perf_counter()
import ipywidgets  # a notebook kernel has it loaded already: timed apart
out["ipywidgets_import_s"] = time.perf_counter() - t
t, c = time.perf_counter(), time.process_time()
explorer = report.explore(max_cases={cap!r})
first_page = explorer.page_rows()
out["explorer_s"] = time.perf_counter() - t
widget = explorer.widget  # the anywidget, its payload enough for the browser's first page
out["explorer_ready_s"] = time.perf_counter() - t
out["explorer_ready_cpu_s"] = time.process_time() - c
data = widget.data
wait = getattr(data, "wait", None)  # a large report's full payload is built in a thread
if wait is not None:
    wait()
out["explorer_payload_s"] = time.perf_counter() - t  # first page + every embedded case's index
out["explorer_payload_cpu_s"] = time.process_time() - c
out["explorer_payload_mb"] = len(data.payload) / 1e6
"""
)
COMPARE = """
t = time.perf_counter()
import scipy.stats  # imported once per kernel by any statistics: timed apart
out["scipy_import_s"] = time.perf_counter() - t
t, cpu = time.perf_counter(), time.process_time()
reports = [store.load({kb!r}, rid) for rid in {rids!r}]
c = compare(reports)
table = c.table() if hasattr(c, "table") else c.summary()
html = c._repr_html_()
out["compare_s"] = time.perf_counter() - t
out["compare_cpu_s"] = time.process_time() - cpu  # the box is shared: CPU beside wall
out["p_methods"] = sorted(set(c.significance()["p_method"]))
"""


def fresh(store: Path, body: str) -> dict:
    """Run ``body`` in a new Python process; return its JSON figures."""
    code = _FRESH.format(root=str(ROOT), store=str(store), body=body)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def line(label: str, value: str) -> None:
    print(f"  {label:<60} {value}")


def synthetic_part(args: argparse.Namespace, work: Path) -> None:
    shape = f"{args.cases:,} case results × {args.results} results × {args.scores} scores"
    print(f"== synthetic report: {shape}")
    store = ReportStore(work / "columnar")
    t = time.perf_counter()
    folders = [
        write_synthetic(store, f"recipe-{i}", args, seed=i, shift=0.01 * i)
        for i in range(args.reports)
    ]
    line(f"write {args.reports} columnar reports (setup)", f"{time.perf_counter() - t:8.1f} s")
    size = folder_bytes(folders[0], COLUMNAR)
    line("columnar store size", f"{size / 1e6:8.1f} MB")
    if not args.skip_json:
        json_side(args, folders[0], work, size)
    fresh_figures(args, store)


def json_side(args: argparse.Namespace, folder: Path, work: Path, size: int) -> None:
    """Today's JSON for the first json-cases case results, beside the same slice as columnar."""
    small = min(args.json_cases, args.cases)
    report = EvaluationReport.load(folder)
    t = time.perf_counter()
    head = report.model_copy(
        update={"case_results": tuple(report.case_results[:small]), "report_id": "json-slice"}
    )
    line(f"materialise {small:,} records from the store", f"{time.perf_counter() - t:8.1f} s")
    json_store, col_store = ReportStore(work / "json"), ReportStore(work / "columnar-slice")
    json_store.save(head, format="heta")
    col_store.save(head)
    json_size = (json_store.report_dir("synthetic-kb", "json-slice") / "report.json").stat().st_size
    col_size = folder_bytes(col_store.report_dir("synthetic-kb", "json-slice"), COLUMNAR)
    del head, report
    line(f"report.json, {small:,} case results", f"{json_size / 1e6:8.1f} MB")
    line(
        f"columnar, {small:,} case results",
        f"{col_size / 1e6:8.1f} MB  (1/{json_size / col_size:.1f})",
    )
    scaled = json_size * args.cases / small
    line(
        f"report.json scaled to {args.cases:,} case results",
        f"{scaled / 1e6:8.1f} MB  (columnar is 1/{scaled / size:.1f})",
    )
    for name, where in (("report.json", json_store), ("columnar", col_store)):
        got = fresh(where.root, LOAD_CARD.format(kb="synthetic-kb", rid="json-slice"))
        line(
            f"fresh process, {small:,} cases, {name}: load / load+card / RSS",
            f"{got['load_s']:6.2f} s {got['load_card_s']:6.2f} s {got['peak_rss_mb']:7.0f} MB",
        )


def fresh_figures(args: argparse.Namespace, store: ReportStore) -> None:
    """Fresh-process figures on the full-size reports: load + card, explorer, compare()."""
    body = EXPLORER.format(kb="synthetic-kb", rid="recipe-0", cap=args.explorer_cases)
    got = fresh(store.root, body)
    line(f"fresh process, {args.cases:,} cases: store.load", f"{got['load_s']:6.2f} s")
    line(f"fresh process, {args.cases:,} cases: store.load + card", f"{got['load_card_s']:6.2f} s")
    line(
        f"fresh process, {args.cases:,} cases: explorer first page",
        f"{got['explorer_s']:6.2f} s  (+ {got['ipywidgets_import_s']:.2f} s importing ipywidgets)",
    )
    line(
        f"fresh process, {args.cases:,} cases: explore() → widget ready (wall / CPU)",
        f"{got['explorer_ready_s']:6.2f} s {got['explorer_ready_cpu_s']:6.2f} s",
    )
    line(
        f"fresh process, {args.cases:,} cases: explorer full payload "
        f"({args.explorer_cases:,} cases indexed, wall / CPU / packed)",
        f"{got['explorer_payload_s']:6.2f} s {got['explorer_payload_cpu_s']:6.2f} s "
        f"{got['explorer_payload_mb']:5.1f} MB",
    )
    line(
        f"fresh process, {args.cases:,} cases: peak RSS (+ explorer)",
        f"{got['peak_rss_mb']:6.0f} MB",
    )
    line("fresh process: python + heta_notebook import", f"{got['import_s']:6.2f} s")
    rids = [f"recipe-{i}" for i in range(args.reports)]
    got = fresh(store.root, COMPARE.format(kb="synthetic-kb", rids=rids))
    line(
        f"fresh process: load + compare() of {args.reports} reports + table",
        f"{got['compare_s']:6.2f} s  ({got['compare_cpu_s']:.2f} CPU s; + "
        f"{got['scipy_import_s']:.2f} s importing scipy.stats; tests: "
        f"{', '.join(got['p_methods'])})",
    )
    line("  peak RSS", f"{got['peak_rss_mb']:6.0f} MB")


# --------------------------------------------------------------------------- checkpoints


def beir_folder(root: Path, n_queries: int, n_docs: int = 2000) -> Path:
    """A synthetic BEIR folder: documents, queries and 3 graded qrels per query."""
    rng = np.random.default_rng(1)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "corpus.jsonl", "w") as handle:
        for d in range(n_docs):
            handle.write(
                json.dumps({"_id": f"d{d}", "title": "", "text": f"document {d} text"}) + "\n"
            )
    with open(root / "queries.jsonl", "w") as handle:
        for q in range(n_queries):
            handle.write(json.dumps({"_id": f"q{q}", "text": f"query number {q}"}) + "\n")
    (root / "qrels").mkdir(exist_ok=True)
    with open(root / "qrels" / "test.tsv", "w") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for q in range(n_queries):
            for d in rng.choice(n_docs, 3, replace=False):
                handle.write(f"q{q}\td{d}\t1\n")
    return root


class InstantKB:
    """Answers every query at once with ten fixed-score hits (no retrieval work)."""

    query_modes = ("full_text_search",)

    def __init__(self, n_docs: int = 2000) -> None:
        from heta_notebook.schema import QueryResult

        self._hits = [
            tuple(
                QueryResult(
                    id=f"d{(q * 7 + k) % n_docs}#0",
                    text=f"document {(q * 7 + k) % n_docs} text",
                    score=10.0 - k,
                    source={"benchmark_document_id": f"d{(q * 7 + k) % n_docs}"},
                )
                for k in range(10)
            )
            for q in range(97)
        ]

    async def query(self, text, *, mode, top_k=10, options=None):
        from heta_notebook.schema import QueryResponse

        return QueryResponse(mode=mode, results=self._hits[hash(text) % 97][:top_k])

    def manifest(self):
        return {"name": "instant"}


def checkpoint_part(args: argparse.Namespace, work: Path) -> None:
    from heta_notebook.benchmarks._beir import BeirBenchmark

    print(f"== checkpointing {args.checkpoint_cases:,} cases × 25 default metrics, instant KB")
    folder = beir_folder(work / "beir", args.checkpoint_cases)
    times, cpu = {}, {}
    for label in ("without a store", "with a store", "without a store ", "with a store "):
        store = ReportStore(tempfile.mkdtemp(dir=work)) if "with a" in label else None  # fresh
        result = None
        gc.collect()  # whatever the last run left for the collector is freed untimed
        t, c = time.perf_counter(), time.process_time()
        result = BenchmarkRunner().run_sync(
            benchmark=BeirBenchmark(folder),
            recipe=InstantKB(),
            knowledge_base_name="instant",
            query_modes=("full_text_search",),
            store=store,
            progress=False,
            config=BenchmarkRunConfig(report_id="ckpt", top_k=10),
        )
        times[label], cpu[label] = time.perf_counter() - t, time.process_time() - c
        assert len(result.report.case_results) == args.checkpoint_cases
        line(label.strip(), f"{times[label]:8.2f} s wall {cpu[label]:8.2f} s CPU")
    for name, clock in (("wall", times), ("CPU", cpu)):
        best_with = min(clock["with a store"], clock["with a store "])
        best_without = min(clock["without a store"], clock["without a store "])
        line(f"with / without, {name} (best of two each)", f"{best_with / best_without:8.2f}x")


# --------------------------------------------------------------------------- real KB


def real_part(work: Path) -> None:
    from heta_notebook import Recipe
    from heta_notebook.benchmarks._beir import BeirBenchmark

    print("== real embedded-KB run: Cranfield, default recipe (BM25 + dense + hybrid), 3 modes")
    t = time.perf_counter()
    result = BenchmarkRunner().run_sync(
        benchmark=BeirBenchmark.cranfield(),
        recipe=Recipe(name="default"),
        progress=False,
        config=BenchmarkRunConfig(top_k=100),
    )
    report = result.report
    line(
        f"run ({len(report.case_results)} case results, top 100)",
        f"{time.perf_counter() - t:8.1f} s",
    )
    sizes = {}
    for fmt in ("heta", "columnar"):
        store = ReportStore(work / f"real-{fmt}")
        path = store.save(report, format=fmt)
        sizes[fmt] = folder_bytes(path.parent, ("report.json",) if fmt == "heta" else COLUMNAR)
        got = fresh(
            store.root, LOAD_CARD.format(kb=report.knowledge_base_name, rid=report.report_id)
        )
        line(
            f"{fmt}: size / fresh load / load+card / RSS",
            f"{sizes[fmt] / 1e6:6.1f} MB {got['load_s']:6.2f} s {got['load_card_s']:6.2f} s "
            f"{got['peak_rss_mb']:6.0f} MB",
        )
    line("size ratio json / columnar", f"{sizes['heta'] / sizes['columnar']:6.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--results", type=int, default=100)
    parser.add_argument("--scores", type=int, default=25)
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--reports", type=int, default=3)
    parser.add_argument("--json-cases", type=int, default=5_000)
    parser.add_argument("--checkpoint-cases", type=int, default=20_000)
    parser.add_argument("--parts", default="synthetic,checkpoint,real")
    parser.add_argument(
        "--explorer-cases", type=int, default=20_000, help="case results the explorer embeds"
    )
    parser.add_argument("--reuse", action="store_true", help="keep reports already in --work")
    parser.add_argument("--skip-json", action="store_true", help="no report.json side (reuse)")
    parser.add_argument("--work", default=None, help="folder for the reports (default: a temp dir)")
    args = parser.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-reports-"))
    try:
        parts = args.parts.split(",")
        if "synthetic" in parts:
            synthetic_part(args, work)
        if "checkpoint" in parts:
            checkpoint_part(args, work)
        if "real" in parts:
            real_part(work)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("TQDM_DISABLE", "1")
    asyncio.set_event_loop_policy(None)
    main()
