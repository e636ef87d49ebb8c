"""Checkpoints stay cheap and never mix runs: O(1) appends, torn UTF-8 tails, fingerprints
stored with the checkpoint, a lock between processes."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
from heta_notebook.reports import CheckpointWarning
from heta_notebook.reports._checkpoint import CHECKPOINT_SUMS, scan_checkpoint
from heta_notebook.reports._run import CheckpointMismatchError
from tests._runner_helpers import MODES, AnswerMatch, ListBenchmark, TopHit, ToyKB, make_cases
from tests.test_schema import make_report

ROOT = Path(__file__).resolve().parents[1]


def test_appends_never_reread_the_checkpoint(tmp_path, monkeypatch) -> None:
    store = ReportStore(tmp_path)
    results = make_report().case_results
    with store.run("kb", "run", fingerprint="fp") as checkpoint:
        checkpoint.append(results)  # an earlier run's cases: read once, when it reopens
    with store.run("kb", "run", fingerprint="fp") as checkpoint:
        reads: list[int] = []
        real_pread = os.pread
        monkeypatch.setattr(os, "pread", lambda fd, n, at: reads.append(n) or real_pread(fd, n, at))
        monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"re-read {self}"))
        for _ in range(200):
            checkpoint.append(results)
        assert reads == []  # appends write only: the cost of case 400 is the cost of case 1
        monkeypatch.undo()
        assert len(checkpoint.read()) == 2
    stream = store.checkpoint_path("kb", "run")
    assert (
        len(scan_checkpoint(stream.read_bytes(), stream).tables["cases"]) == 402
    )  # one batch of 2 per append


def _batch_ends(store: ReportStore) -> list[int]:
    sums = store.checkpoint_path("kb", "run").with_name(CHECKPOINT_SUMS).read_text()
    return [int(line.split()[0]) for line in sums.splitlines()]


def test_a_torn_tail_inside_a_utf8_character_is_cut_cleanly(tmp_path) -> None:
    store = ReportStore(tmp_path)
    report = make_report()
    accented = report.case_results[0].model_copy(update={"query": "été ✓ naïve"})
    with store.run("kb", "run", fingerprint="fp") as checkpoint:
        checkpoint.append([report.case_results[1]])
        checkpoint.append([accented])
    path = store.checkpoint_path("kb", "run")
    data, ends = path.read_bytes(), _batch_ends(store)
    cut = data.index("✓".encode(), ends[1]) + 1  # in the middle of a 3-byte character
    path.write_bytes(data[:cut])  # killed inside the second batch's write, before its sum
    sums = path.with_name(CHECKPOINT_SUMS)
    sums.write_text("".join(sums.read_text().splitlines(keepends=True)[:2]))
    assert [r.case_id for r in store.read_checkpoint("kb", "run")] == ["q2"]
    with store.run("kb", "run", fingerprint="fp") as checkpoint:  # resume: cut once
        assert path.stat().st_size == ends[1]
        checkpoint.append([accented])
    assert [r.query for r in store.read_checkpoint("kb", "run")] == [
        report.case_results[1].query,
        "été ✓ naïve",
    ]


def test_invalid_utf8_behind_a_matching_checksum_is_named_and_cut(tmp_path) -> None:
    """A batch whose bytes match their sha256 (written so) but hold invalid UTF-8: the full
    validation behind the sums names the file, and the batch is cut, never read."""
    store = ReportStore(tmp_path)
    results = make_report().case_results
    accented = results[1].model_copy(update={"query": "été"})
    with store.run("kb", "run", fingerprint="fp") as checkpoint:
        checkpoint.append(results[:1])
        checkpoint.append([accented])
    path, ends = store.checkpoint_path("kb", "run"), _batch_ends(store)
    data = bytearray(path.read_bytes())
    at = ends[1]
    while (at := data.find("é".encode(), at + 1)) >= 0:  # each copy in the second batch
        data[at + 1] = 0x28  # "\xc3(": not UTF-8
    path.write_bytes(bytes(data))
    sums = path.with_name(CHECKPOINT_SUMS)
    lines = sums.read_text().splitlines()
    end, _, count = lines[2].split()
    digest = hashlib.sha256(bytes(data[ends[1] : int(end)])).hexdigest()
    sums.write_text("\n".join([*lines[:2], f"{end} {digest} {count}"]) + "\n")
    with pytest.warns(CheckpointWarning, match=r"cases\.arrows: corrupt batch.*dropping 1 case"):
        assert store.read_checkpoint("kb", "run") == list(results[:1])


def test_a_checkpoint_of_other_settings_is_refused_even_without_a_report(tmp_path) -> None:
    store = ReportStore(tmp_path)
    with store.run("kb", "run", fingerprint="one") as checkpoint:
        checkpoint.append(make_report().case_results)
    with pytest.raises(CheckpointMismatchError, match="'run' was run with other settings"):
        store.run("kb", "run", fingerprint="two").__enter__()
    with store.run("kb", "run", fingerprint="one") as checkpoint:  # same settings resume
        assert len(checkpoint.read()) == 2
    with store.run("kb", "other", fingerprint="two"):  # the lock was released
        pass


def test_the_lock_is_reentrant_in_one_process_and_released_after(tmp_path) -> None:
    store = ReportStore(tmp_path)
    with store.run("kb", "run", fingerprint="f"):
        store.save(make_report(report_id="run"))  # the runner saves while holding it
        with store.lock("kb", "run"):
            pass
    script = f"""
import sys; sys.path.insert(0, {str(ROOT)!r})
from heta_notebook import ReportStore
with ReportStore({str(tmp_path)!r}).lock("kb", "run"):
    print("locked")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "locked", out.stderr


_RUN = """
import asyncio, os, sys
sys.path.insert(0, {root!r})
from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
from tests._runner_helpers import MODES, AnswerMatch, ListBenchmark, TopHit, ToyKB, make_cases
config = BenchmarkRunConfig(report_id="shared", checkpoint_every=1, max_concurrent_queries=1, top_k={top_k})
benchmark = ListBenchmark(cases=make_cases({n}), evaluators=(TopHit(), AnswerMatch()))
class HeldKB(ToyKB):
    # after six queries, waits while the file ``hold`` names exists (the test's cue)
    async def query(self, text, **options):
        hold = {hold!r}
        while hold and self.calls >= 6 and os.path.exists(hold):
            await asyncio.sleep(0.01)
        return await super().query(text, **options)


try:
    result = BenchmarkRunner().run_sync(benchmark=benchmark, recipe=HeldKB(delay={delay}),
        knowledge_base_name="kb", query_modes=MODES, config=config,
        store=ReportStore({store!r}), progress=False)
except Exception as exc:
    print("ERROR", type(exc).__name__, exc)
    sys.exit(3)
print("DONE", len(result.report.case_results), result.report.is_partial)
"""


def _script(
    tmp_path: Path, name: str, *, n: int, delay: float, top_k: int = 10, hold: Path | None = None
) -> Path:
    """A run of ``n`` cases on report id "shared"; with ``hold``, it pauses after six
    queries while that file exists (so a test decides when it may finish, whatever the load)."""
    script = tmp_path / f"{name}.py"
    options = dict(root=str(ROOT), n=n, delay=delay, top_k=top_k, hold=str(hold or ""))
    script.write_text(textwrap.dedent(_RUN.format(**options, store=str(tmp_path / "store"))))
    return script


def _wait_for_records(store: ReportStore, n: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if len(store.checkpoint_keys("kb", "shared")) >= n:
            return
        time.sleep(0.01)
    raise AssertionError(f"the checkpoint never held {n} records (run exited: {process.poll()})")


@pytest.mark.slow
def test_two_processes_on_one_report_id_get_a_clear_error(tmp_path) -> None:
    hold = tmp_path / "hold"
    hold.touch()  # the first run holds the report id until the second has tried
    first = subprocess.Popen(
        [sys.executable, str(_script(tmp_path, "a", n=30, delay=0.05, hold=hold))],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    store = ReportStore(tmp_path / "store")
    _wait_for_records(store, 3, first)
    second = subprocess.run(
        [sys.executable, str(_script(tmp_path, "b", n=30, delay=0.0))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 3, second.stdout + second.stderr
    assert "ReportLockedError" in second.stdout and "another process" in second.stdout
    hold.unlink()
    out, _ = first.communicate(timeout=120)
    assert first.returncode == 0 and out.split() == ["DONE", "60", "False"]
    report = store.load("kb", "shared")
    assert len(report.case_results) == 60 and not report.is_partial


@pytest.mark.slow
def test_sigkilled_run_resumed_with_other_top_k_is_refused(tmp_path) -> None:
    process = subprocess.Popen(
        [sys.executable, str(_script(tmp_path, "a", n=40, delay=0.05))], cwd=ROOT
    )
    store = ReportStore(tmp_path / "store")
    try:
        _wait_for_records(store, 4, process)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    assert not store.exists("kb", "shared")  # only the checkpoint is left
    done = len(store.read_checkpoint("kb", "shared"))
    benchmark = ListBenchmark(cases=make_cases(40), evaluators=(TopHit(), AnswerMatch()))
    options = dict(
        benchmark=benchmark,
        knowledge_base_name="kb",
        query_modes=MODES,
        store=store,
        progress=False,
    )
    with pytest.raises(CheckpointMismatchError, match="'shared' was run with other settings"):
        BenchmarkRunner().run_sync(
            recipe=ToyKB(), config=BenchmarkRunConfig(report_id="shared", top_k=3), **options
        )
    assert len(store.read_checkpoint("kb", "shared")) == done  # nothing mixed in
    final = BenchmarkRunner().run_sync(
        recipe=ToyKB(), config=BenchmarkRunConfig(report_id="shared"), **options
    )
    assert len(final.report.case_results) == 80 and not final.report.is_partial
