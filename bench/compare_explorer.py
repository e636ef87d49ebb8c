"""The comparison explorer of large reports in a fresh process (run by hand).

    python bench/compare_explorer.py --store /work/bench100k/columnar [--root SRC] [--cap 20000]

Loads the reports (kb "synthetic-kb", ids recipe-0..N-1), runs ``compare()``, then times
``explore()`` + the display bundle (widget and static view: what the page shows first), then every report's full payload
(built in threads when the first page came from previews). Wall and ``process_time`` CPU
(threads included) from ``compare()`` returned; peak RSS of the process (VmHWM).
``--root`` points at another source tree (e.g. a copy of main) for a before figure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BODY = """
import json, sys, time
sys.path.insert(0, {root!r})
from heta_notebook import ReportStore, compare
import ipywidgets, scipy.stats  # a kernel has them loaded already
store = ReportStore({store!r})
reports = [store.load("synthetic-kb", f"recipe-{{i}}") for i in range({n})]
c = compare(reports)
c.summary()
out = {{}}
t, cpu = time.perf_counter(), time.process_time()
explorer = c.explore(max_cases={cap!r})
bundle = explorer._repr_mimebundle_()  # what a notebook cell displays (widget + static view)
widget = explorer.widget
out["first_page_s"] = time.perf_counter() - t
out["first_page_cpu_s"] = time.process_time() - cpu
models = list(widget.data.values())
for m in models:
    if hasattr(m, "wait"):
        m.wait()
out["full_s"] = time.perf_counter() - t
out["full_cpu_s"] = time.process_time() - cpu
out["packed_mb"] = sum(len(m.payload) for m in models) / 1e6
out["peak_rss_mb"] = int([l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]) / 1024
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--root", default=str(ROOT), help="source tree to import")
    parser.add_argument("--reports", type=int, default=3)
    parser.add_argument("--cap", type=int, default=20_000, help="max_cases of the explorer")
    args = parser.parse_args()
    code = BODY.format(root=args.root, store=args.store, n=args.reports, cap=args.cap)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    print(json.dumps(json.loads(proc.stdout.strip().splitlines()[-1]), indent=1))


if __name__ == "__main__":
    main()
