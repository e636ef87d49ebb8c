"""A process that builds an explorer exits cleanly while the explorer's payload thread is still
building: no payload thread is still inside pyarrow or numpy when the interpreter tears its
native pools down (that aborted with "terminate called without an active exception") (issue
27, part 8).

The script ends right after the first page, so the payload thread (~2 s for 3,000 cases) is
still running at exit; the test checks that it was, rather than loading the CPU to make it
likely (CPU burners took the other test worker's cores for a minute)."""

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
from heta_notebook.reports._folder import open_report, write_report
from tests.test_store_columnar import synthetic_report
folder = Path({folder!r})
write_report(folder, synthetic_report(3000, 10))
explorer = open_report(folder).explore()
explorer.widget  # encodes the first page now, the rest in a payload thread
print("building:", [t.name for t in threading.enumerate() if t.name == "heta-explorer-payload"])
"""


@pytest.mark.slow
def test_exiting_while_an_explorer_payload_builds_exits_cleanly(tmp_path):
    for attempt in range(2):
        script = _BUILD.format(root=str(ROOT), folder=str(tmp_path / f"r{attempt}"))
        run = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0, run.stderr[-2000:]
        assert "building: ['heta-explorer-payload']" in run.stdout  # alive when the script ended
        assert "terminate called" not in run.stderr
        assert "alive at exit: []" in run.stdout, run.stdout  # waited for, not killed
