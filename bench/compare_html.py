"""Comparison surfaces on Cranfield (run by hand): three recipes × three modes, top 100 (``--top-k``), saved
and reopened; the comparison's HTML CPU beside compare() + significance() of the same
reports, and the size of its standalone page (``to_html``) with its plotly.js share.

    python bench/compare_html.py [--repeats 3]

The recipes are the quickstart's: whole documents, 100-word chunks, LSA with 256 dimensions.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from heta_notebook import (  # noqa: E402
    BeirBenchmark,
    BenchmarkRunConfig,
    Chunking,
    Dense,
    Recipe,
    ReportStore,
    compare,
    run_benchmark,
)


def recipes() -> dict[str, Recipe]:
    return {
        "whole-docs": Recipe(name="whole-docs"),
        "chunks-100": Recipe(
            name="chunks-100", chunking=Chunking(unit="words", size=100, overlap=20)
        ),
        "lsa-256": Recipe(name="lsa-256", dense=Dense(dims=256)),
    }


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--top-k", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-compare-html-") as tmp:
        store = ReportStore(tmp)
        runs = run_benchmark(
            benchmark=BeirBenchmark.cranfield(),
            recipes=recipes(),
            store=store,
            progress=False,
            config=BenchmarkRunConfig(top_k=args.top_k),
        )
        keys = [(r.knowledge_base_name, r.report_id) for r in runs]

        def opened() -> list:
            return [store.load(kb, rid) for kb, rid in keys]

        floor = min(cpu(lambda: compare(opened()).significance()) for _ in range(args.repeats))
        html = min(cpu(lambda: compare(opened())._repr_html_()) for _ in range(args.repeats))
        print(f"compare() + significance(): {floor:.3f} CPU s (best of {args.repeats})")
        print(f"comparison HTML (fresh reports):  {html:.3f} CPU s  = {html / floor:.2f}x")
        page = compare(opened()).to_html()
        packed = re.findall(r'id="hn-plotlyjs-gz">([^<]*)<', page)
        plotly = sum(map(len, packed))
        scripts = sorted(len(m) for m in re.findall(r"<script[^>]*>(.*?)</script>", page, re.S))
        print("largest scripts (MB):", [round(n / 1e6, 2) for n in scripts[-6:]])
        print(
            f"to_html page: {len(page.encode()) / 1e6:.2f} MB, of which plotly.js "
            f"{plotly / 1e6:.2f} MB ({len(packed)} compressed cop{'y' if len(packed) == 1 else 'ies'})"
        )


if __name__ == "__main__":
    main()
