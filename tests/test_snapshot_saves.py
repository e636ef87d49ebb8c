"""A save is a snapshot: killed at any point, the folder still loads as the old or the new
report, and a reader during saves never sees an error (issue 27, part 1).

Budget: ``KILLS`` SIGKILLs at random points of a re-save per run; ``-m soak`` does 1,000.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from heta_notebook import ReportStore
from heta_notebook.reports._folder import open_report
from heta_notebook.reports._tables import HEADER
from tests._kill_helpers import KB, REPORT_ID, versions
from tests._report_helpers import table_paths

ROOT = Path(__file__).resolve().parents[1]
KILLS = 50


@pytest.fixture(scope="module")
def reports():
    found = versions()
    return {name: (report, list(report.case_results)) for name, report in found.items()}


class Zygote:
    """The ``tests._kill_helpers`` process: forks savers on demand, into any store folder."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests._kill_helpers"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        self.running: int | None = None  # the saver not yet killed

    def saver(self, root: Path, first: str = "A") -> int:
        self.proc.stdin.write(f"go {first} {root}\n")
        self.proc.stdin.flush()
        self.running = int(self.proc.stdout.readline())
        return self.running

    def kill(self, pid: int) -> None:
        os.kill(pid, signal.SIGKILL)
        self.running = None
        assert self.proc.stdout.readline().strip() == "dead"

    def stop(self) -> None:
        """Kill the saver a failed test left running (the zygote waits for it)."""
        if self.running is not None:
            self.kill(self.running)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


@pytest.fixture(scope="module")
def zygote():
    """One zygote for the file: its start (imports, warm saves) is ~1.4 CPU s."""
    started = Zygote()
    yield started
    started.close()


def _which(folder: Path, reports) -> str:
    """'A' or 'B': the whole report the folder holds (every record compared)."""
    loaded = open_report(folder)
    version = loaded.metadata["version"]
    assert list(loaded.case_results) == reports[version][1]
    return version


def _our_files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()} - {".lock", "summary.json"}


@pytest.mark.parametrize("kills", [KILLS, pytest.param(1000, marks=pytest.mark.soak)])
def test_a_save_killed_anywhere_leaves_the_old_or_the_new_report(tmp_path, reports, zygote, kills):
    store = ReportStore(tmp_path)
    store.save(reports["A"][0])
    started = time.perf_counter()
    store.save(reports["A"][0])
    one_save = time.perf_counter() - started  # warm: kills land within the first two saves
    folder = store.report_dir(KB, REPORT_ID)
    rng = random.Random(27)
    seen, leftovers, held, done = set(), 0, "A", 0
    window = 2.5 * one_save  # widened past the budget while kills land before commits
    try:
        while done < kills or ((seen != {"A", "B"} or not leftovers) and done < 3 * kills):
            pid = zygote.saver(
                tmp_path, first="B" if held == "A" else "A"
            )  # a save that changes it
            time.sleep(rng.uniform(0.0, window))
            zygote.kill(pid)
            before, held, done = held, _which(folder, reports), done + 1
            seen.add(held)
            leftovers += len(_our_files(folder)) > 1 + len(table_paths(folder))
            if done >= kills and held == before:  # past the budget with no commit yet seen
                window = min(20 * one_save, window * 1.25)
    finally:
        zygote.stop()
    assert seen == {"A", "B"}  # kills landed before and after commits
    assert leftovers > 0  # and inside saves (files of a dead save were left)
    store.save(reports["B"][0])  # the next save removes what dead saves left
    assert _our_files(folder) == {HEADER, *(p.name for p in table_paths(folder).values())}
    assert _which(folder, reports) == "B"


def test_a_reader_during_saves_sees_no_error(tmp_path, reports, zygote):
    store = ReportStore(tmp_path)
    store.save(reports["A"][0])
    folder = store.report_dir(KB, REPORT_ID)
    errors, reads, stop = [], [0], threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                _which(folder, reports)
                store.load(KB, REPORT_ID).summary()
                reads[0] += 1
            except Exception as exc:  # noqa: BLE001 - every error is a failure here
                errors.append(repr(exc))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(3):
            pid = zygote.saver(tmp_path)
            time.sleep(1.0)
            zygote.kill(pid)
    finally:
        stop.set()
        reader.join()
        zygote.stop()
    assert errors == [] and reads[0] > 10


def test_leftovers_of_dead_saves_are_removed_only_when_safe(tmp_path, reports):
    """Without the lock (``EvaluationReport.save`` to a folder) a stranger's files are left
    alone until they are an hour old; the store's save (under the lock) removes them."""
    report = reports["A"][0]
    folder = tmp_path / "r"
    report.save(folder, format="columnar")
    stray = [folder / "cases.0123456789abcdef.parquet", folder / ".texts.x1.tmp"]
    for path in stray:
        path.write_bytes(b"half a save")
    report.save(folder, format="columnar")
    assert all(p.exists() for p in stray)
    old = time.time() - 7200
    for path in stray:
        os.utime(path, (old, old))
    report.save(folder, format="columnar")
    assert not any(p.exists() for p in stray)
    assert len(_our_files(folder)) == 1 + len(table_paths(folder))
