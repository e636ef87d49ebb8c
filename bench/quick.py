"""The quick performance check: each figure of bench/ that guards a hot path, at a small fixed
size, measured beside its peer or floor IN THE SAME RUN and reported as a ratio.

    python bench/quick.py            # prints every check's ratio and its bound
    python bench/quick.py --scale 4  # the same checks on 4x the data (closer to the full bench)

``tests/test_bench_quick.py`` runs it inside the test command. A check fails only past
``BOUND`` × the ratio recorded in bench/README.md's "Quick check" table (the one place those
figures live), so noise on a shared box passes and an order-of-magnitude regression does not.
Times are process CPU seconds, the best of a few rounds, project and peer interleaved.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

README = ROOT / "bench" / "README.md"
BOUND = 3.0  # fail past BOUND x the recorded ratio


@dataclass(frozen=True)
class Ratio:
    """One check's figures from one run: the project beside its peer (CPU seconds or bytes)."""

    name: str
    project: float
    peer: float

    @property
    def ratio(self) -> float:
        return self.project / max(self.peer, 1e-9)


def best_of(rounds: int, **paths: Callable[[], Any]) -> dict[str, float]:
    """Best CPU seconds per path over ``rounds``, the paths taking turns each round."""
    best = {name: float("inf") for name in paths}
    for _ in range(rounds):
        for name, fn in paths.items():
            start = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - start)
    return best


# --------------------------------------------------------------------------- checks


def comparison_html(
    work: Path, scale: int = 1, rounds: int = 3, warm: bool = True, cases: int = 1500
) -> Ratio:
    """The HTML of a comparison of three stored reports of ``cases`` × ``scale`` case results
    vs compare() + significance() of the same reports (each round opens them afresh:
    nothing cached between rounds)."""
    from heta_notebook import compare

    store = synthetic_store(work / f"cmp-{cases * scale}", cases=cases * scale)
    rids = ["recipe-0", "recipe-1", "recipe-2"]

    def opened() -> list[Any]:
        return [store.load("synthetic-kb", rid) for rid in rids]

    def floor() -> None:
        compare(opened()).significance()

    def html() -> None:
        compare(opened())._repr_html_()

    if warm:  # imports (scipy, plotly) and the store's first reads, untimed
        floor()
        html()
    t = best_of(rounds, floor=floor, html=html)
    return Ratio("comparison_html", t["html"], t["floor"])


def explorer_payload(work: Path, scale: int = 1, rounds: int = 3) -> Ratio:
    """The explorer's whole payload of one stored report (index, miss classes, details) vs
    compare() + significance() of the three reports of ``comparison_html`` (each round
    opens them afresh)."""
    from heta_notebook import compare
    from heta_notebook.display._explorer_data import encode_report

    store = synthetic_store(work / f"cmp-{1500 * scale}", cases=1500 * scale)
    rids = ["recipe-0", "recipe-1", "recipe-2"]

    def floor() -> None:
        compare([store.load("synthetic-kb", rid) for rid in rids]).significance()

    def payload() -> None:
        encode_report(store.load("synthetic-kb", "recipe-0"))

    floor()
    payload()  # imports and the store's first reads, untimed
    t = best_of(rounds, floor=floor, payload=payload)
    return Ratio("explorer_payload", t["payload"], t["floor"])


def open_card(work: Path, scale: int = 1, rounds: int = 3) -> Ratio:
    """A stored report opened and its card rendered (what a notebook shows first) vs the
    same report opened and its summary frame built (each round opens it afresh)."""
    store = synthetic_store(work / f"cmp-{1500 * scale}", cases=1500 * scale)

    def floor() -> None:
        store.load("synthetic-kb", "recipe-0").frames().summary()

    def card() -> None:
        store.load("synthetic-kb", "recipe-0")._repr_html_()

    floor()
    card()  # imports (plotly, the card's modules), untimed
    t = best_of(rounds, floor=floor, card=card)
    return Ratio("open_card", t["card"], t["floor"])


def synthetic_store(folder: Path, cases: int) -> Any:
    """Three columnar reports of ``cases`` case results × 20 results × 25 scores (bench/reports)."""
    from bench.reports import write_synthetic
    from heta_notebook import ReportStore

    store = ReportStore(folder)
    args = argparse.Namespace(cases=cases, results=20, scores=25, docs=2000, reports=3, reuse=True)
    for i in range(3):
        write_synthetic(store, f"recipe-{i}", args, seed=i, shift=0.01 * i)
    return store


def metrics(work: Path, scale: int = 1) -> Ratio:
    """The 25 default metrics from a run dict (``evaluate_run``) vs pytrec_eval on the same."""
    import pytrec_eval

    from bench.metrics import TREC_MEASURES, synthetic
    from heta_notebook.evaluators._retrieval import beir_default_metrics, evaluate_run

    qrels, run = synthetic(2000 * scale, 100)
    chosen = beir_default_metrics()
    measures = TREC_MEASURES | {"recip_rank"}
    t = best_of(
        3,
        ours=lambda: evaluate_run(qrels, run, chosen),
        pytrec=lambda: pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run),
    )
    return Ratio("metrics", t["ours"], t["pytrec"])


def plain_function_run(work: Path, scale: int = 1) -> Ratio:
    """A plain function returning 100 document ids per query, run over Cranfield with the 25
    default metrics, vs its floor: the same calls plus pytrec_eval on the same run."""
    import pytrec_eval

    from bench.metrics import TREC_MEASURES
    from heta_notebook import BeirBenchmark, BenchmarkRunConfig, run_benchmark
    from heta_notebook.evaluators._matching import qrels_of

    source = BeirBenchmark.cranfield()
    benchmark = source.load()
    docs = [d.document_id for d in benchmark.documents]
    rng = np.random.default_rng(0)
    ranked = {
        case.query: [docs[i] for i in rng.choice(len(docs), 100, replace=False)]
        for case in benchmark.cases
    }
    cases = list(benchmark.cases) * scale

    def system(text: str) -> list[str]:
        return ranked[text]

    def floor() -> None:
        run = {}
        for n, case in enumerate(cases):
            ids = system(case.query)
            run[f"{case.case_id}-{n}"] = {d: float(100 - i) for i, d in enumerate(ids)}
        qrels = {
            f"{case.case_id}-{n}": qrels_of(case.expected.evidence) for n, case in enumerate(cases)
        }
        pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES | {"recip_rank"}).evaluate(run)

    def ours() -> None:
        for _ in range(scale):
            config = BenchmarkRunConfig(top_k=100)
            run_benchmark(benchmark=source, recipe=system, progress=False, config=config)

    ours()  # the runner's first use (imports, thread pool), untimed
    t = best_of(3, floor=floor, ours=ours)
    return Ratio("plain_function_run", t["ours"], t["floor"])


def report_size(work: Path, scale: int = 1) -> Ratio:
    """Bytes of a stored columnar report vs the same report as heta-framework's report.json."""
    from bench.reports import COLUMNAR, folder_bytes
    from heta_notebook import ReportStore
    from heta_notebook.schema import EvaluationReport

    store = synthetic_store(work / f"cmp-{1500 * scale}", cases=1500 * scale)
    folder = store.report_dir("synthetic-kb", "recipe-0")
    report = EvaluationReport.load(folder)
    json_store = ReportStore(work / "json")
    path = json_store.save(report, format="heta")
    return Ratio("report_size", folder_bytes(folder, COLUMNAR), path.stat().st_size)


CHECKS: dict[str, Callable[..., Ratio]] = {
    "comparison_html": comparison_html,
    "explorer_payload": explorer_payload,
    "metrics": metrics,
    "open_card": open_card,
    "plain_function_run": plain_function_run,
    "report_size": report_size,
}


# --------------------------------------------------------------------------- bounds


def recorded_ratios(readme: Path = README) -> dict[str, float]:
    """The ratios bench/README.md records for the checks: rows ``| `name` | ... | 1.23 |`` of
    its "Quick check" section (the last column is the ratio)."""
    text = readme.read_text(encoding="utf-8")
    start = text.find("## Quick check")
    if start < 0:
        raise LookupError(f"{readme} has no '## Quick check' section")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end > 0 else len(text)]
    found = {}
    for line in section.splitlines():
        match = re.match(r"\|\s*`(\w+)`\s*\|.*\|\s*([0-9.]+)\s*\|\s*$", line)
        if match:
            found[match.group(1)] = float(match.group(2))
    return found


def verdict(ratio: Ratio, recorded: dict[str, float]) -> str | None:
    """None when ``ratio`` is within BOUND × its recorded figure, else why it is not."""
    if ratio.name not in recorded:
        return f"{ratio.name}: no recorded ratio in {README.name}'s Quick check table"
    limit = BOUND * recorded[ratio.name]
    if ratio.ratio <= limit:
        return None
    return (
        f"{ratio.name}: {ratio.ratio:.3g}x its peer ({ratio.project:.3g} vs "
        f"{ratio.peer:.3g}), past {BOUND:g} x the recorded {recorded[ratio.name]:.3g}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--only", nargs="+", choices=sorted(CHECKS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        recorded = recorded_ratios()
    except LookupError:  # measuring before a figure is recorded
        recorded = {}
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench-quick-") as tmp:
        for name in args.only or CHECKS:
            got = CHECKS[name](Path(tmp), scale=args.scale)
            problem = verdict(got, recorded)
            failed |= problem is not None
            if args.json:
                print(json.dumps({"name": name, "ratio": got.ratio, "problem": problem}))
            else:
                bound = BOUND * recorded.get(name, float("nan"))
                print(
                    f"{name:<22} {got.project:9.3f} vs {got.peer:9.3f}  "
                    f"ratio {got.ratio:7.3f}  (bound {bound:.3g})  {problem or 'ok'}"
                )
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
