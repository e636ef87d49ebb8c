"""The explorer of one large stored report in a fresh process: widget ready, full payload,
peak RSS (issue 34's row "explorer, 100k cases").

    python bench/explorer_large.py --write /tmp/big   # writes 100k x 100 results x 25 scores
    python bench/explorer_large.py /tmp/big
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--write", action="store_true", help="write the synthetic report first")
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--max-cases", type=int, default=20_000)
    args = parser.parse_args()
    from heta_notebook import ReportStore

    store = ReportStore(args.store)
    if args.write:
        from bench.reports import write_synthetic

        shape = argparse.Namespace(
            cases=args.cases, results=100, scores=25, docs=100_000, reports=1, reuse=True
        )
        write_synthetic(store, "recipe-0", shape, seed=0, shift=0.0)
    import ipywidgets  # noqa: F401  # a kernel has it loaded already: not timed

    wall = time.perf_counter()
    report = store.load("synthetic-kb", "recipe-0")
    report._repr_html_()  # the card, which a notebook shows first (pandas is imported then)
    print(f"load + card: {time.perf_counter() - wall:.2f} s wall")
    wall, cpu = time.perf_counter(), time.process_time()
    explorer = report.explore(max_cases=args.max_cases)
    explorer.page_rows()
    data = explorer.widget.data
    print(
        f"widget ready: {time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f} CPU s"
    )
    if getattr(data, "wait", None):
        data.wait()  # the full payload is built in a background thread
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"full payload: {time.perf_counter() - wall:.2f} s wall, {time.process_time() - cpu:.2f}"
        f" CPU s, {len(data.payload) / 1e6:.1f} MB packed; peak RSS {rss:.0f} MB"
    )


if __name__ == "__main__":
    main()
