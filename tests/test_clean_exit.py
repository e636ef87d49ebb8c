"""A process that builds an explorer exits cleanly, even under CPU load: no payload thread is
still inside pyarrow or numpy when the interpreter tears its native pools down (that aborted
with "terminate called without an active exception") (issue 27, part 8)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_BUILD = """
import atexit, sys, threading
sys.path.insert(0, {root!r})
# registered first, so it runs last: after heta_notebook's own exit hooks
atexit.register(lambda: print("alive at exit:", sorted(
    t.name for t in threading.enumerate() if t.name == "heta-explorer-payload"), flush=True))
from pathlib import Path
from heta_notebook.schema._columnar import open_report, write_report
from tests.test_store_columnar import synthetic_report
folder = Path({folder!r})
write_report(folder, synthetic_report(3000, 10))
explorer = open_report(folder).explore()
explorer.widget  # encodes the first page now, the rest in a payload thread
print("building:", [t.name for t in threading.enumerate() if t.name == "heta-explorer-payload"])
"""

_BURN = "import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass\n"


@pytest.mark.slow
def test_building_an_explorer_then_exiting_under_load_exits_cleanly(tmp_path):
    burners = [subprocess.Popen([sys.executable, "-c", _BURN.format(seconds=60)]) for _ in range(2)]
    try:
        for attempt in range(3):
            script = _BUILD.format(root=str(ROOT), folder=str(tmp_path / f"r{attempt}"))
            run = subprocess.run(
                [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
            )
            assert run.returncode == 0, run.stderr[-2000:]
            assert "terminate called" not in run.stderr
            assert "alive at exit: []" in run.stdout, run.stdout  # waited for, not killed
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
