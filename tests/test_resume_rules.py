"""Resume has no holes: a checkpoint whose settings cannot be checked is refused (or resumed
with force), and a checkpoint append holds the report's lock (issue 27, part 3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
from heta_notebook.reports._run import (
    CheckpointMismatchError,
    ReportLockedError,
    UnverifiedCheckpointError,
)
from tests._runner_helpers import MODES, AnswerMatch, ListBenchmark, TopHit, ToyKB, make_cases
from tests.test_schema import make_report

ROOT = Path(__file__).resolve().parents[1]


def _checkpointed(tmp_path) -> tuple[ReportStore, Path]:
    store = ReportStore(tmp_path)
    with store.run("kb", "run", fingerprint="one") as run:
        run.append(make_report().case_results)
    return store, store.report_dir("kb", "run") / "checkpoint.json"


@pytest.mark.parametrize(
    "damage, words",
    [
        (lambda p: p.unlink(), "checkpoint.json: missing"),
        (lambda p: p.write_text("{}"), "checkpoint.json: records no fingerprint"),
        (lambda p: p.write_text('{"fingerprint": "on'), "checkpoint.json: unreadable"),
        (lambda p: p.write_bytes(b"\xff\xfe"), "checkpoint.json: unreadable"),
    ],
)
def test_a_checkpoint_without_a_readable_fingerprint_is_refused(tmp_path, damage, words):
    store, identity = _checkpointed(tmp_path)
    damage(identity)
    with pytest.raises(UnverifiedCheckpointError, match=words) as caught:
        store.run("kb", "run", fingerprint="two").__enter__()
    assert "force=True" in str(caught.value)
    with store.run("kb", "run", fingerprint="two", force=True) as run:  # explicit: resumes
        assert len(run.read()) == 2
    with pytest.raises(CheckpointMismatchError, match="other settings"):
        store.run("kb", "run", fingerprint="one").__enter__()  # force recorded "two"


def test_an_empty_folder_or_a_run_without_fingerprint_needs_no_force(tmp_path):
    store, identity = _checkpointed(tmp_path)
    identity.unlink()
    with store.run("kb", "run") as run:  # no fingerprint to check: nothing to refuse
        assert len(run.read()) == 2
    with store.run("kb", "fresh", fingerprint="x"):  # nothing checkpointed yet
        pass
    (store.report_dir("kb", "fresh") / "checkpoint.json").write_text("{}")
    with store.run("kb", "fresh", fingerprint="x"):  # still nothing to mix up
        pass


def test_the_runner_refuses_then_resumes_with_force_resume(tmp_path):
    store = ReportStore(tmp_path)
    benchmark = ListBenchmark(cases=make_cases(6), evaluators=(TopHit(), AnswerMatch()))
    options = dict(
        benchmark=benchmark, recipe=ToyKB(), knowledge_base_name="kb", query_modes=MODES,
        store=store, progress=False,
    )  # fmt: skip
    config = BenchmarkRunConfig(report_id="r")
    with store.run("kb", "r") as run:  # a checkpoint with no fingerprint recorded
        run.append(make_report().case_results[:1])
    with pytest.raises(UnverifiedCheckpointError, match="checkpoint.json: missing"):
        BenchmarkRunner().run_sync(config=config, **options)
    forced = config.model_copy(update={"force_resume": True})
    result = BenchmarkRunner().run_sync(config=forced, **options)
    assert not result.report.is_partial


_HOLD = """
import sys, time
sys.path.insert(0, {root!r})
from heta_notebook import ReportStore
with ReportStore({store!r}).lock("kb", "run"):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def test_a_checkpoint_append_holds_the_lock(tmp_path):
    """Appends go through the run handle, which holds the report's lock: another process
    holding it means :class:`ReportLockedError` before a byte is written."""
    store = ReportStore(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD.format(root=str(ROOT), store=str(tmp_path))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(ReportLockedError, match="being written by another process"):
            store.run("kb", "run").__enter__()
    finally:
        holder.communicate("\n", timeout=60)
    assert not store.checkpoint_path("kb", "run").exists()  # nothing half-written
    with store.run("kb", "run") as run:  # free again
        run.append(make_report().case_results)
    assert len(store.read_checkpoint("kb", "run")) == 2
