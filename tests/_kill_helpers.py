"""A process that forks savers to be killed: ``python -m tests._kill_helpers``.

It imports everything once, then on each ``go A STORE`` / ``go B STORE`` line from stdin forks
a child that saves that version, then the other, and so on (same knowledge base and id,
different contents) into STORE until it is killed; it prints the child's pid, waits for it and prints ``dead``. Forking from a warm
process makes a kill cost milliseconds instead of an interpreter start.
"""

from __future__ import annotations

import os
import sys
import tempfile

from heta_notebook import ReportStore
from tests.test_store_columnar import synthetic_report

KB, REPORT_ID = "kb", "snap"


def versions() -> dict[str, object]:
    """The two reports a saver alternates between (told apart by ``metadata["version"]``)."""
    out = {}
    for seed, name in ((1, "A"), (2, "B")):
        report = synthetic_report(60, 4, seed=seed)
        out[name] = report.model_copy(
            update={
                "knowledge_base_name": KB,
                "report_id": REPORT_ID,
                "metadata": {**report.metadata, "version": name},
            }
        )
    return out


def _saver(root: str, reports: dict[str, object], first: str) -> None:
    store = ReportStore(root)
    order = [reports[first], *(r for name, r in reports.items() if name != first)]
    while True:
        for report in order:
            store.save(report)


def main() -> None:
    reports = versions()
    with tempfile.TemporaryDirectory() as scratch:  # warm: a child's first save is no slower
        for report in reports.values():
            ReportStore(scratch).save(report)
    for line in sys.stdin:
        command = line.split()
        if command[:1] != ["go"]:
            break
        first, root = command[1], " ".join(command[2:])
        pid = os.fork()
        if pid == 0:  # the child: save until killed
            try:
                _saver(root, reports, first)
            finally:
                os._exit(3)
        print(pid, flush=True)
        os.waitpid(pid, 0)
        print("dead", flush=True)


if __name__ == "__main__":
    main()
