"""The columnar report store: both formats load, heta round trip, lazy records, frames from
columns, and every file-level safety rule (corruption, symlinks, slugs, schema_version, NaN)."""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from heta_notebook import ReportStore
from heta_notebook._util.paths import UnsafeNameError
from heta_notebook.reports._folder import write_report
from heta_notebook.reports._run import ReportIdCollisionError
from heta_notebook.reports._stored import LazyCaseResults
from heta_notebook.reports._tables import CorruptReportError
from heta_notebook.schema import (
    EvaluationCaseResult,
    EvaluationError,
    EvaluationReport,
    EvaluationScore,
    QueryResponse,
    QueryResult,
)
from tests._heta_helpers import REPORT_JSON
from tests._report_helpers import table_paths
from tests.test_schema import make_report


def synthetic_report(n_cases: int = 600, n_results: int = 12, seed: int = 0) -> EvaluationReport:
    """A report with every record shape: text/bool scores, skips, errors, failed queries,
    shared chunk texts, unknown fields, NaN result scores, citations and trace."""
    rng = random.Random(seed)
    modes = ("bm25", "dense", "hybrid")
    results = []
    for i in range(n_cases):
        mode = modes[i % 3]
        case_id = f"q{i // 3}"
        if i % 97 == 5:  # a failed query
            results.append(
                EvaluationCaseResult(
                    case_id=case_id,
                    query=f"query {i // 3} é",
                    query_mode=mode,
                    latency_ms=1.5,
                    error=EvaluationError(
                        message="boom", error_type="TimeoutError", retryable=True
                    ),
                )
            )
            continue
        hits = tuple(
            QueryResult(
                id=f"c{rng.randrange(400)}",
                text=f"chunk text {rng.randrange(400)} ✓",
                score=float("nan") if k == 3 and i % 11 == 0 else rng.random(),
                source={"object_key": f"raw/benchmarks/b/test/d{rng.randrange(99)}/doc.txt"},
                metadata={"page": k} if k % 4 == 0 else {},
                **({"future_field": [1, 2]} if k == 0 and i % 13 == 0 else {}),
            )
            for k in range(n_results)
        )
        scores = [EvaluationScore(name=f"m{j}", value=rng.random()) for j in range(5)]
        scores.append(EvaluationScore(name="hit", value=bool(i % 2), passed=bool(i % 2)))
        scores.append(EvaluationScore(name="label", value="good" if i % 3 else "bad"))
        if i % 7 == 0:
            scores.append(EvaluationScore.skipped_score("judge", "no answer"))
        elif i % 7 == 1:
            scores.append(EvaluationScore.error_score("judge", RuntimeError("judge down")))
        else:
            scores.append(
                EvaluationScore(
                    name="judge", value=0.5, passed=True, metadata={"reason": "fine", "tokens": 3}
                )
            )
        response = QueryResponse(
            mode=mode,
            results=hits,
            answer=None if i % 2 else f"answer {i}",
            metadata={"k": n_results},
            trace=({"stage": "retrieve", "message": "ok"},),
        )
        results.append(
            EvaluationCaseResult(
                case_id=case_id,
                query=f"query {i // 3} é",
                query_mode=mode,
                scores=tuple(scores),
                response=response,
                latency_ms=rng.random() * 10,
                metadata={
                    "expected": {"evidence": [{"reference_id": "d1"}]},
                    "labels": {"t": i % 4},
                },
                **({"new_case_field": {"x": 1}} if i % 50 == 0 else {}),
            )
        )
    return EvaluationReport(
        report_id="synthetic",
        benchmark={"name": "synthetic"},
        knowledge_base_name="kb",
        query_modes=modes,
        score_summary={"bm25.m0": 0.5, "bad": float("nan")},
        case_results=tuple(results),
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:01:00Z",
        metadata={"label": "syn"},
        future_top={"a": 1},
    )


@pytest.fixture(scope="module")
def synthetic() -> EvaluationReport:
    return synthetic_report()


def _save(report: EvaluationReport, folder: Path) -> Path:
    write_report(folder, report, cases_per_group=128)  # several row groups
    return folder


def _json_equal(a: EvaluationReport, b: EvaluationReport) -> bool:
    return json.loads(a.to_json()) == json.loads(b.to_json())


def test_heta_fixture_round_trips_losslessly_through_the_columnar_store(tmp_path) -> None:
    original = json.loads(Path(REPORT_JSON).read_text())
    report = EvaluationReport.load(REPORT_JSON)
    store = ReportStore(tmp_path)
    header = store.save(report)
    assert header.name == "header.json" and not (header.parent / "report.json").exists()
    loaded = store.load(report.knowledge_base_name, report.report_id)
    assert isinstance(loaded.case_results, LazyCaseResults)
    back = json.loads(loaded.to_json())
    back["report_key"] = original["report_key"]
    assert back == original  # heta's report.json, field for field
    store.save(loaded, format="heta")  # and written back as heta's own layout
    assert not header.exists()
    again = json.loads((header.parent / "report.json").read_text())
    again["report_key"] = original["report_key"]
    assert len(again.pop("_sha256")) == 64  # its one extra key: the sum of the file's bytes
    assert again == original


def test_large_synthetic_report_round_trips_and_keeps_unknown_fields(tmp_path, synthetic) -> None:
    path = _save(synthetic, tmp_path / "rep")
    loaded = EvaluationReport.load(path)
    assert len(loaded.case_results) == len(synthetic.case_results)
    assert _json_equal(loaded, synthetic)
    assert loaded.model_extra == {"future_top": {"a": 1}}
    assert loaded.case_results[0].model_extra == {"new_case_field": {"x": 1}}
    assert loaded.case_results[0].response.results[0].model_extra == {"future_field": [1, 2]}
    assert loaded == synthetic
    heta = synthetic.save(tmp_path / "report.json")  # format="heta" is the default here
    assert _json_equal(EvaluationReport.load(heta), loaded)


def test_texts_are_stored_once_and_the_store_is_much_smaller_than_json(tmp_path, synthetic):
    folder = _save(synthetic, tmp_path / "rep")
    texts = pd.read_parquet(table_paths(folder)["texts"])["text"]
    assert texts.is_unique and len(texts) <= 400  # 600 × 12 hits share 400 texts
    size = sum(p.stat().st_size for p in folder.iterdir())
    assert size * 8 < len(synthetic.to_json().encode())


def test_opening_reads_only_the_header_and_records_are_built_on_access(tmp_path, synthetic):
    folder = _save(synthetic, tmp_path / "rep")
    report = EvaluationReport.load(folder)
    lazy = report.case_results
    assert lazy.columnar._columns == {} and report.report_id == "synthetic"
    assert lazy[-1] == synthetic.case_results[-1] and lazy[5] == synthetic.case_results[5]
    assert lazy[10:13] == synthetic.case_results[10:13]
    assert list(lazy) == list(synthetic.case_results)
    with pytest.raises(IndexError):
        lazy[len(lazy)]
    # the card reads the views kept in the header: no table at all
    fresh = EvaluationReport.load(folder)
    assert fresh._repr_html_() == synthetic._repr_html_()
    assert fresh.case_results.columnar._columns == {}
    assert "synthetic" in repr(fresh) and fresh.case_results.columnar._columns == {}


def test_frames_from_columns_equal_frames_from_records(tmp_path, synthetic) -> None:
    lazy = EvaluationReport.load(_save(synthetic, tmp_path / "rep"))
    ours, theirs = lazy.frames(), synthetic.frames()
    assert ours.columns.folder is not None and theirs.columns.folder is None  # one view each
    pd.testing.assert_frame_equal(ours.summary(), theirs.summary())
    pd.testing.assert_frame_equal(ours.cases(), theirs.cases())
    pd.testing.assert_frame_equal(ours.scores(), theirs.scores())
    pd.testing.assert_frame_equal(ours.latency(), theirs.latency())
    pd.testing.assert_frame_equal(ours.score_column("judge"), theirs.score_column("judge"))
    assert ours.modes == theirs.modes and ours.score_names == theirs.score_names
    for name in ("case_id", "error", "answer", "n_results"):
        assert list(ours.case_column(name)) == list(theirs.case_column(name))
    pd.testing.assert_frame_equal(ours.results().head(50), theirs.results().head(50))


def test_frames_are_built_once_per_report_and_shared(synthetic) -> None:
    report = synthetic.model_copy()
    frames = report.frames()
    assert report.frames() is frames and report.plot.frames is frames
    report.summary()
    assert "summary" in frames._cache
    copy = report.model_copy(update={"report_id": "other"})
    assert copy.frames() is not frames and report.frames() is frames
    assert copy == report.model_copy(update={"report_id": "other"})  # caching leaves == alone


@pytest.mark.parametrize("table", ["cases", "scores", "results", "texts"])
def test_a_truncated_table_names_the_file_and_gives_no_partial_report(tmp_path, table) -> None:
    store = ReportStore(tmp_path)
    store.save(make_report())
    path = table_paths(store.report_dir("kb", "r1"))[table]
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(CorruptReportError, match=re.escape(path.name)):
        report = store.load("kb", "r1")
        list(report.case_results)  # records need every table


def test_a_missing_header_field_or_a_table_from_another_save_is_refused(tmp_path) -> None:
    store = ReportStore(tmp_path)
    store.save(make_report())
    folder = store.report_dir("kb", "r1")
    old_scores = table_paths(folder)["scores"].read_bytes()
    store.save(make_report())  # a new generation
    table_paths(folder)["scores"].write_bytes(old_scores)
    with pytest.raises(CorruptReportError, match=r"scores\.[0-9a-f]+\.parquet: sha256 .* differs"):
        store.load("kb", "r1").frames().scores()
    (folder / "header.json").write_text("{not json")
    with pytest.raises(CorruptReportError, match="header.json: corrupt report header"):
        store.load("kb", "r1")


def test_newer_schema_version_is_refused_in_both_formats(tmp_path) -> None:
    store = ReportStore(tmp_path)
    store.save(make_report())
    header = store.report_dir("kb", "r1") / "header.json"
    data = json.loads(header.read_text())
    header.write_text(json.dumps({**data, "schema_version": "2"}))
    with pytest.raises(ValueError, match="schema_version '2' is newer than this heta-notebook"):
        store.load("kb", "r1")
    raw = json.loads(make_report().to_json())
    path = tmp_path / "report.json"
    path.write_text(json.dumps({**raw, "schema_version": "7"}))
    with pytest.raises(ValueError, match=r"(?s)report.json.*schema_version '7' is newer"):
        EvaluationReport.load(path)


def test_nan_and_inf_have_one_policy_and_a_saved_report_always_loads(tmp_path) -> None:
    with pytest.raises(ValueError, match="finite number"):
        EvaluationScore(name="x", value=math.inf)
    base = make_report()
    result = base.case_results[0]
    hit = QueryResult(id="a", score=math.nan, metadata={"x": math.inf, "y": [math.nan]})
    odd = result.model_copy(
        update={"response": result.response.model_copy(update={"results": (hit,)})}
    )
    report = EvaluationReport.model_validate(
        {
            **base.model_dump(),
            "score_summary": {"a": math.nan, "b": 0.5},
            "case_results": [odd, *base.case_results[1:]],
        }
    )
    assert report.score_summary == {"b": 0.5}
    assert report.case_results[0].response.results[0].score is None
    inf_latency = EvaluationCaseResult.model_validate({**odd.model_dump(), "latency_ms": math.inf})
    assert inf_latency.latency_ms is None
    store = ReportStore(tmp_path)
    for fmt in ("columnar", "heta"):
        store.save(report, format=fmt)
        back = store.load("kb", "r1").case_results[0].response.results[0]
        assert back.score is None and back.metadata == {"x": None, "y": [None]}


def test_names_whose_slugs_collide_do_not_overwrite_each_other(tmp_path) -> None:
    store = ReportStore(tmp_path)
    store.save(make_report(report_id="Baseline Run"))
    with pytest.raises(ReportIdCollisionError, match="'Baseline Run'.*same folder"):
        store.save(make_report(report_id="baseline_run"))
    assert store.load("kb", "Baseline Run").report_id == "Baseline Run"
    with pytest.raises(ReportIdCollisionError):
        store.load("kb", "baseline_run")
    with pytest.raises(ReportIdCollisionError):
        store.run("kb", "baseline_run", fingerprint="f").__enter__()
    store.save(make_report(report_id="Baseline Run"))  # the same name saves again


def test_symlinked_files_inside_the_store_are_refused_on_read_and_write(tmp_path) -> None:
    store = ReportStore(tmp_path / "store")
    store.save(make_report())
    store.save(make_report(report_id="r2"))
    folder, other = store.report_dir("kb", "r1"), store.report_dir("kb", "r2")
    scores = table_paths(folder)["scores"]
    scores.unlink()
    scores.symlink_to(table_paths(other)["scores"])
    with pytest.raises(UnsafeNameError, match="symlink"):
        store.load("kb", "r1")
    with pytest.raises(UnsafeNameError, match="symlink"):
        store.save(make_report())
    victim = tmp_path / "victim.txt"  # a link inside the store to a file outside it
    victim.write_text("keep me\n")
    store.checkpoint_path("kb", "r2").symlink_to(victim)
    with pytest.raises(UnsafeNameError, match="symlink"):
        store.run("kb", "r2").__enter__()
    with pytest.raises(UnsafeNameError, match="symlink"):
        store.read_checkpoint("kb", "r2")
    assert victim.read_text() == "keep me\n"


def test_list_shows_columnar_reports_and_load_all_opens_them_lazily(tmp_path, synthetic) -> None:
    store = ReportStore(tmp_path)
    store.save(synthetic)
    (store.report_dir("kb", "synthetic") / "summary.json").unlink()
    frame = store.list()
    assert list(frame["report_id"]) == ["synthetic"] and frame.loc[0, "n_cases"] == 600
    (report,) = store.load_all()
    assert isinstance(report.case_results, LazyCaseResults)
    assert np.isclose(
        report.summary()["mean"].dropna().iloc[0], synthetic.summary()["mean"].dropna().iloc[0]
    )


def test_records_read_only_the_text_groups_they_need(tmp_path, synthetic, monkeypatch) -> None:
    import heta_notebook.reports._folder as columnar  # the writer's row groups

    monkeypatch.setattr(columnar, "TEXTS_PER_GROUP", 16)  # 400 texts in 25 row groups
    folder = _save(synthetic, tmp_path / "rep")
    report = EvaluationReport.load(folder)
    assert report.case_results[7] == synthetic.case_results[7]
    assert ("texts", "text") not in report.case_results.columnar._columns
    assert list(report.case_results) == list(synthetic.case_results)
