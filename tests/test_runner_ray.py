"""RayExecutor on a real local Ray cluster (two worker processes): same reports as a local run.

A shard's worker is killed (SIGKILL) mid-run; Ray retries the shard, which skips what its
checkpoint holds. A stopped driver leaves shard checkpoints that ``resume=True`` finishes.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from heta_notebook import (
    BenchmarkRunConfig,
    BenchmarkRunner,
    IdCoverageError,
    Recipe,
    ReportStore,
    run_benchmark,
)
from heta_notebook.benchmarks._beir import BeirBenchmark
from heta_notebook.evaluators._retrieval import beir_default_metrics
from heta_notebook.kb._recipe import Bm25
from heta_notebook.reports._run import CheckpointMismatchError
from tests._ray_helpers import ROOT, local_ray
from tests._runner_helpers import Slow, comparable

ray = pytest.importorskip("ray")

pytestmark = [pytest.mark.slow, pytest.mark.ray]

from heta_notebook.runner._ray_executor import RayExecutor  # noqa: E402

RECIPES = {
    "bm25": Recipe(name="bm25", dense=None, hybrid=None),
    "bm25-k09": Recipe(name="bm25-k09", bm25=Bm25(k1=0.9, b=0.5), dense=None, hybrid=None),
}


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster with two worker CPUs, kept small, always shut down."""
    with local_ray(num_cpus=2) as ray_module:
        yield ray_module


@pytest.fixture(scope="module")
def cranfield():
    return BeirBenchmark.cranfield()


CASES = 72  # Cranfield's first 72 queries: three shards of 24 per recipe, a tenth of the time


@pytest.fixture(scope="module")
def local(cranfield, tmp_path_factory):
    """The same run without Ray, once for the module: what every Ray run must equal."""
    root = tmp_path_factory.mktemp("local")
    return run_benchmark(**_options(cranfield, ReportStore(root / "store"), root / "kb"))


def _options(cranfield, store, workspace, **extra):
    evaluators = [*beir_default_metrics(), Slow(0.02)]  # slow enough to kill a worker mid-shard
    config = BenchmarkRunConfig(top_k=100, max_concurrent_queries=2, checkpoint_every=4)
    return dict(
        benchmark=cranfield,
        recipes=RECIPES,
        evaluators=evaluators,
        config=config,
        store=store,
        workspace=workspace,
        progress=False,
        limit=CASES,
        **extra,
    )


def _shard_workers() -> list[int]:
    """Pids of Ray worker processes running a shard (Ray titles them ``ray::_run_shard``)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"ray::_run_shard"):
                pids.append(int(entry.name))
    return pids


def _kill_a_shard_worker_once(store_root: Path, killed: list[int], stop: threading.Event) -> None:
    """Once a shard has checkpointed results, SIGKILL the worker process running a shard."""
    while not stop.is_set():
        started = _checkpointed(store_root) > 0
        pids = _shard_workers() if started else []
        if pids:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])
            return
        time.sleep(0.02)


def test_ray_run_with_a_killed_worker_equals_the_local_run(cluster, cranfield, local, tmp_path):

    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(
        target=_kill_a_shard_worker_once, args=(tmp_path / "ray", killed, stop), daemon=True
    )
    killer.start()
    executor = RayExecutor(shard_size=24, max_in_flight=2)
    try:
        remote = run_benchmark(
            **_options(cranfield, ReportStore(tmp_path / "ray"), tmp_path / "kb-ray"),
            executor=executor,
        )
    finally:
        stop.set()
        killer.join()

    assert killed, "no worker was running a shard: nothing was killed"
    with pytest.raises(ProcessLookupError):
        os.kill(killed[0], 0)  # it really died
    assert remote.labels == local.labels == tuple(RECIPES)
    for label in RECIPES:
        mine, theirs = remote[label], local[label]
        assert not mine.is_partial and len(mine.case_results) == CASES
        assert comparable(mine) == comparable(theirs)  # case for case, timings aside
        assert mine.score_summary == theirs.score_summary
        saved = ReportStore(tmp_path / "ray").load(mine.knowledge_base_name, mine.report_id)
        assert comparable(saved) == comparable(theirs)
        folder = ReportStore(tmp_path / "ray").report_dir(mine.knowledge_base_name, mine.report_id)
        assert not list(
            (folder / "shards").rglob("cases.arrows")
        )  # the saved report holds the shard checkpoints now


async def test_a_stopped_ray_run_resumes_to_the_local_report(cluster, cranfield, local, tmp_path):
    options = _options(cranfield, ReportStore(tmp_path / "ray"), tmp_path / "kb")

    run = asyncio.ensure_future(
        BenchmarkRunner().run(**options, executor=RayExecutor(shard_size=16, max_in_flight=2))
    )
    shards = tmp_path / "ray"
    while not _checkpointed(shards):
        await asyncio.sleep(0.02)
    run.cancel()  # in-flight shards are cancelled, their results kept
    with (
        pytest.warns(RuntimeWarning, match="resume=True"),
        pytest.raises(asyncio.CancelledError) as caught,
    ):
        await run  # cancelled means cancelled, once the partial reports are saved
    stopped = caught.value.partial
    kept = sum(len(stopped[label].case_results) for label in stopped.labels)
    assert any(stopped[label].is_partial for label in stopped.labels) and 0 < kept < 2 * CASES

    resumed = await BenchmarkRunner().run(**options, resume=True, executor=RayExecutor())
    for label in RECIPES:
        assert not resumed[label].is_partial
        assert comparable(resumed[label]) == comparable(local[label])
        assert resumed[label].score_summary == local[label].score_summary
    assert sum(resumed[label].metadata["resumed"] for label in RECIPES) == kept


DRIVER = """
import sys
import ray
from heta_notebook import ReportStore, run_benchmark
from heta_notebook.benchmarks._beir import BeirBenchmark
from heta_notebook.runner._ray_executor import RayExecutor
from tests.test_runner_ray import _options

address, root = sys.argv[1], sys.argv[2]
ray.init(address=address, log_to_driver=False)
store = ReportStore(root + "/ray")
options = _options(BeirBenchmark.cranfield(), store, root + "/kb-ray")
run_benchmark(**options, executor=RayExecutor(shard_size=16, max_in_flight=2))
"""


def _checkpointed(root: Path) -> int:
    """Cases the shard checkpoints hold: the third field of each line of their sums."""
    cases = 0
    for path in root.rglob("shards/**/cases.arrows.sums"):
        lines = path.read_bytes().split(b"\n")[:-1]  # a torn last line left out
        cases += sum(int(line.split()[2]) for line in lines if len(line.split()) == 3)
    return cases


@pytest.mark.filterwarnings("ignore::heta_notebook.DepthWarning")  # top 10: other settings
def test_a_killed_driver_loses_no_finished_case(cluster, cranfield, local, tmp_path):
    """SIGKILL the driver process mid-run; ``resume=True`` from another driver finishes it."""
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    address = cluster.get_runtime_context().gcs_address
    driver = subprocess.Popen(
        [sys.executable, str(script), address, str(tmp_path)],
        env=os.environ.copy(),  # local_ray put the repository on PYTHONPATH
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 300
        while _checkpointed(tmp_path / "ray") < 40 and driver.poll() is None:
            assert time.monotonic() < deadline, "the driver checkpointed nothing in 300 s"
            time.sleep(0.05)
        assert driver.poll() is None, "the driver finished before it could be killed"
    finally:
        driver.kill()
        driver.wait()
    assert not list((tmp_path / "ray").rglob("report.json"))  # it died before any report
    before = _checkpointed(tmp_path / "ray")
    # The driver held each report id's checkpoint: its fingerprint refuses other settings
    # even though only shard checkpoints survived.
    shard_files = (tmp_path / "ray").rglob("shards/**/cases.arrows")
    report_folder = sorted({p.parents[6] for p in shard_files})[0]  # {report}/shards/.../{id}
    assert (report_folder / "checkpoint.json").exists()
    kb = json.loads((report_folder / "checkpoint.json").read_text())["knowledge_base_name"]
    label = max((name for name in RECIPES if kb.endswith(f"-{name}")), key=len)
    other = _options(cranfield, ReportStore(tmp_path / "ray"), tmp_path / "kb-ray")
    other["recipes"] = {label: RECIPES[label]}
    other["config"] = other["config"].model_copy(
        update={"report_id": report_folder.name, "top_k": 10}
    )
    with pytest.raises(CheckpointMismatchError, match="other settings"):
        run_benchmark(**other, executor=RayExecutor())

    options = _options(cranfield, ReportStore(tmp_path / "ray"), tmp_path / "kb-ray")
    resumed = run_benchmark(**options, resume=True, executor=RayExecutor())
    # every case checkpointed when the driver died is kept (its tasks may add a few more
    # before Ray stops them)
    assert sum(resumed[label].metadata["resumed"] for label in RECIPES) >= before
    for label in RECIPES:
        assert not resumed[label].is_partial
        assert comparable(resumed[label]) == comparable(local[label])
        assert resumed[label].score_summary == local[label].score_summary


class _LoggedIds:
    """A user's system (picklable, so Ray ships it to workers): ids ``prefix + n`` for the
    first document numbers, each query logged to a file (workers are other processes)."""

    def __init__(self, log: Path, prefix: str) -> None:
        self.log, self.prefix = log, prefix

    def __call__(self, text: str) -> list[str]:
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(text.replace("\n", " ") + "\n")
        return [f"{self.prefix}{n}" for n in range(1, 6)] + [str(n) for n in range(6, 11)]


def test_a_ray_run_checks_a_system_s_ids_before_any_shard(cluster, cranfield, tmp_path):
    """The pre-run id check runs on the Ray path too: no mapping is one error before a shard
    is dispatched (only the dry run asked anything); a partial one a warning, recorded."""
    options = dict(
        benchmark=cranfield,
        evaluators=beir_default_metrics(),
        workspace=tmp_path / "kb",
        progress=False,
        limit=30,
        executor=RayExecutor(shard_size=8, max_in_flight=2),
    )
    log = tmp_path / "asked.txt"
    with pytest.raises(IdCoverageError, match="first 20 queries"):
        run_benchmark(recipe=_NoMatch(log), **options)
    assert len(log.read_text().splitlines()) == 20  # the dry run alone: no shard ran

    with pytest.warns(UserWarning, match="map to a benchmark document"):
        report = run_benchmark(recipe=_LoggedIds(tmp_path / "half.txt", "web-"), **options).report
    assert report.metadata["id_coverage"]["share"] == pytest.approx(0.5)
    assert len(report.case_results) == 30 and report.metadata["executor"] == "ray"


class _NoMatch(_LoggedIds):
    """Ids no benchmark document has."""

    def __init__(self, log: Path) -> None:
        super().__init__(log, "vec-")

    def __call__(self, text: str) -> list[str]:
        super().__call__(text)
        return [f"vec-{n}" for n in range(1, 11)]
