"""Time frames, the card and the explorer's first page on big synthetic reports (run by hand).

    /work/venv/bin/python bench/display_frames.py [n_cases]

Writes nothing to the repo; prints timings (recorded in bench/README.md).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _display_helpers import make_report  # noqa: E402

from heta_notebook.schema import EvaluationReport  # noqa: E402


def timed(label: str, fn):
    """Print wall and process CPU time (CPU is steadier on the shared, loaded machine)."""
    start, cpu = time.perf_counter(), time.process_time()
    value = fn()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{label:<40} {wall:8.3f} s  (cpu {cpu:.3f} s)")
    return value


def cached_report(n_cases: int) -> EvaluationReport:
    path = Path(f"/tmp/heta_display_bench_{n_cases}.json")
    if path.exists():
        return timed(f"load report.json ({n_cases} cases)", lambda: EvaluationReport.load(path))
    report = timed(
        f"build synthetic report ({n_cases} cases)",
        lambda: make_report(n_cases, k_values=(1, 3, 5, 10, 100), n_results=10),
    )
    path.write_text(report.to_json(indent=None))
    return report


def main(n_cases: int = 10_000) -> None:
    report = cached_report(n_cases)
    print(f"{len(report.case_results)} case results x {len(report.score_names)} scores")
    frames = report.frames()
    timed("frames.scores()", frames.scores)
    timed("frames.cases()", frames.cases)
    timed("frames.summary()", frames.summary)
    timed("frames.latency()", frames.latency)
    timed("frames.evidence()", frames.evidence)
    timed("frames.results()", frames.results)
    fresh = report.frames()
    timed("fresh scores+cases+summary", lambda: (fresh.cases(), fresh.summary()))


def big_report(n_results: int = 100_000) -> EvaluationReport:
    """``n_results`` case results: a 1,000-case report's results repeated under new case ids."""
    base = make_report(1000)
    results = []
    for i in range(n_results):
        r = base.case_results[i % len(base.case_results)]
        results.append(
            r.model_copy(update={"case_id": f"{r.case_id}-{i // len(base.case_results)}"})
        )
    return base.model_copy(update={"case_results": tuple(results)})


def explorer_open(n_results: int = 100_000) -> None:
    report = timed(f"build {n_results} case results", lambda: big_report(n_results))
    explorer = timed("report.explore() + widget (first page)", lambda: report.explore().widget)
    del explorer
    ex = report.explore()
    assert ex.widget is not None
    timed("filter by mode", lambda: ex.set_filters(mode="dense"))
    timed("sort by ndcg@10 (one score column)", lambda: ex.sort("ndcg@10"))
    timed(
        "filter judge failed", lambda: ex.set_filters(score="judge_correctness", verdict="failed")
    )
    timed("text search", lambda: ex.set_filters(search="cylinder"))
    timed("select a case", lambda: ex.select_row(12345))
    timed("static_html", ex.static_html)
    timed("card (summary of all scores)", report._repr_html_)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "explorer":
        explorer_open(int(sys.argv[2]) if len(sys.argv) > 2 else 100_000)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
