"""A run's checkpoint is an Arrow IPC stream of report-table rows (``cases.arrows``), built
once per case: the save reuses those columns and gives the tables (and views) the records
would give; the stream refuses symlinks and newer formats, and a torn batch is dropped."""

from __future__ import annotations

import json
import os

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
from heta_notebook._util.paths import UnsafeNameError
from heta_notebook.analysis._frames import ReportFrames
from heta_notebook.reports._checkpoint import (
    CHECKPOINT_SCHEMA,
    CaseBatches,
    records_of,
    scan_checkpoint,
)
from heta_notebook.reports._folder import TableWriter, open_report, write_report
from tests._report_helpers import table_paths
from tests._runner_helpers import MODES, AnswerMatch, ListBenchmark, TopHit, ToyKB, make_cases
from tests.test_store_columnar import synthetic_report


def _tables(folder) -> dict[str, pa.Table]:
    files = table_paths(folder)
    return {n: pq.read_table(files[n]) for n in ("cases", "results", "scores")}


def _texts_resolved(folder) -> list:
    """Each result's text (ids resolved), so two saves that number texts alike compare."""
    files = table_paths(folder)
    texts = pq.read_table(files["texts"]).column("text").to_pylist()
    ids = pq.read_table(files["results"]).column("text").to_pylist()
    return [texts[i] for i in ids]


def test_batches_reordered_with_duplicates_and_unknown_records_equal_the_record_path(tmp_path):
    report = synthetic_report(120, 4)
    records = list(report.case_results)
    batches = CaseBatches()
    for start in range(0, 90, 7):  # appended out of order, a few twice, the rest unknown
        batches.add(records[start : start + 7][::-1])
    batches.add(records[10:20])
    direct, reused = tmp_path / "direct", tmp_path / "reused"
    write_report(direct, report, cases_per_group=32)
    write_report(reused, report, cases_per_group=32, batches=batches)
    a, b = _tables(direct), _tables(reused)
    for name in a:
        assert (
            a[name]
            .drop_columns(["text"] if name == "results" else [])
            .equals(b[name].drop_columns(["text"] if name == "results" else []))
        ), name
    assert _texts_resolved(direct) == _texts_resolved(reused)
    assert pq.ParquetFile(table_paths(reused)["cases"]).metadata.num_row_groups == 4
    assert list(open_report(reused).case_results) == records


def test_the_stream_round_trips_and_a_torn_last_batch_is_dropped(tmp_path):
    report = synthetic_report(60, 3)
    records = list(report.case_results)
    batches = CaseBatches()
    data = CHECKPOINT_SCHEMA.serialize().to_pybytes()
    sizes = []
    for start in range(0, 60, 20):
        data += batches.add(records[start : start + 20]).serialize().to_pybytes()
        sizes.append(len(data))
    scan = scan_checkpoint(data, "x")
    assert scan.good == len(data) and records_of(scan.tables, scan.texts) == records
    for cut in (sizes[1] + 1, sizes[1] + 9, len(data) - 1):  # inside the third batch
        scan = scan_checkpoint(data[:cut], "x")
        assert scan.good == sizes[1] and records_of(scan.tables, scan.texts) == records[:40]
    assert scan_checkpoint(data[:5], "x").good == 0  # inside the schema: nothing


def test_a_newer_or_foreign_stream_is_refused_with_its_name(tmp_path):
    newer = CHECKPOINT_SCHEMA.with_metadata(
        {"format": "heta-notebook-checkpoint", "format_version": "99"}
    )
    with pytest.raises(ValueError, match=r"cases.arrows: checkpoint format version '99' is newer"):
        scan_checkpoint(newer.serialize().to_pybytes(), "cases.arrows")
    other = pa.schema([("x", pa.int32())])
    with pytest.raises(ValueError, match=r"cases.arrows: not a heta-notebook-checkpoint stream"):
        scan_checkpoint(other.serialize().to_pybytes(), "cases.arrows")


def test_a_symlinked_stream_is_refused_on_read_and_write(tmp_path):
    store = ReportStore(tmp_path / "store")
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    folder = store.report_dir("kb", "r")
    folder.mkdir(parents=True)
    (folder / "cases.arrows").symlink_to(victim)
    with pytest.raises(UnsafeNameError, match="symlink"):
        store.run("kb", "r").__enter__()
    with pytest.raises(UnsafeNameError, match="symlink"):
        store.read_checkpoint("kb", "r")
    assert victim.read_bytes() == b"keep"


async def test_a_run_saves_from_its_checkpoint_columns_what_its_records_give(tmp_path):
    store = ReportStore(tmp_path / "store")
    benchmark = ListBenchmark(cases=make_cases(30), evaluators=(TopHit(), AnswerMatch()))
    config = BenchmarkRunConfig(report_id="run", checkpoint_every=4, max_concurrent_queries=3)
    result = await BenchmarkRunner().run(
        benchmark=benchmark,
        recipe=ToyKB(),
        knowledge_base_name="kb",
        query_modes=MODES,
        config=config,
        store=store,
        progress=False,
    )
    report = result.report
    saved = store.load("kb", "run")
    assert list(saved.case_results) == list(report.case_results)
    fresh = tmp_path / "fresh"
    write_report(fresh, report.model_copy(update={"report_key": report.report_key}))
    assert _texts_resolved(fresh) == _texts_resolved(store.report_dir("kb", "run"))
    # The views in the header (summary from the runner's statistics) are what the
    # records give when computed afresh.
    assert saved.frames().views() == ReportFrames(report).views()
    pd.testing.assert_frame_equal(
        report.frames().summary(), ReportFrames(report).summary(), check_exact=True
    )


def test_a_fresh_writer_refuses_tables_after_records(tmp_path):
    writer = TableWriter(tmp_path)
    writer.add(synthetic_report(3, 1).case_results[0])
    with pytest.raises(RuntimeError, match="fresh"):
        writer.add_tables({}, [])
    writer.abort()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


async def test_a_complete_run_deletes_its_checkpoint_and_an_interrupted_one_keeps_it(tmp_path):
    """The saved complete report holds every checkpointed row, so the ~90 MB per 20,000
    cases of ``cases.arrows`` is not left beside a ~1 MB report; an interrupted run keeps
    it (with its partial report) for the resume."""
    store = ReportStore(tmp_path / "store")
    options = dict(
        benchmark=ListBenchmark(cases=make_cases(12), evaluators=(TopHit(),)),
        knowledge_base_name="kb",
        query_modes=MODES,
        config=BenchmarkRunConfig(report_id="run", checkpoint_every=1, max_concurrent_queries=1),
        store=store,
        progress=False,
    )
    folder = store.report_dir("kb", "run")
    with pytest.warns(RuntimeWarning, match="interrupted"):
        await BenchmarkRunner().run(recipe=ToyKB(interrupt_after=5), **options)
    assert (folder / "cases.arrows").stat().st_size > 0
    assert len(store.read_checkpoint("kb", "run")) == 5
    final = (await BenchmarkRunner().run(recipe=ToyKB(), **options)).report
    assert not final.is_partial and len(final.case_results) == 24
    assert not (folder / "cases.arrows").exists() and not (folder / "cases.arrows.sums").exists()
    # no stale checkpoint.json or .lock: the run's fingerprint stays in the saved header
    assert not (folder / "checkpoint.json").exists() and not (folder / ".lock").exists()
    assert json.loads((folder / "header.json").read_text())["metadata"]["fingerprint"]
    assert list(store.load("kb", "run").case_results) == list(final.case_results)
    again = (await BenchmarkRunner().run(recipe=ToyKB(), **options)).report  # nothing to redo
    assert list(again.case_results) == list(final.case_results)
