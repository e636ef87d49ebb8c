"""compare() on reports opened from the columnar store equals compare() on the same reports
in memory: the store path reads names, statuses, case ids and modes as dictionary codes and
scatters them straight into the aligned matrices, the in-memory path walks the records."""

from __future__ import annotations

import numpy as np
import pandas as pd

from heta_notebook import ReportStore, compare
from heta_notebook.schema import EvaluationScore
from tests._display_helpers import make_report


def _reports():
    a = make_report(30, seed=0, label="base")
    b = make_report(30, seed=1, label="new", quality_shift=0.05)
    # b drops two cases of one mode (missing) and gets a text-only score on some cases
    kept = [
        r
        for r in b.case_results
        if not (r.case_id in {"q0004", "q0009"} and r.query_mode == "dense")
    ]
    labelled = []
    for i, r in enumerate(kept):
        extra = (
            (EvaluationScore(name="verdict", value="good" if i % 2 else "bad"),) if i % 3 else ()
        )
        labelled.append(r.model_copy(update={"scores": (*r.scores, *extra)}))
    b = b.model_copy(update={"case_results": tuple(labelled)})
    return {"base": a, "new": b}


def test_store_and_memory_give_the_same_comparison(tmp_path):
    reports = _reports()
    store = ReportStore(tmp_path / "store")
    for report in reports.values():
        store.save(report)
    opened = {label: store.load(r.knowledge_base_name, r.report_id) for label, r in reports.items()}
    assert type(opened["new"].case_results).__name__ == "LazyCaseResults"  # the columnar path
    mem, col = compare(reports), compare(opened)

    a, b = mem.aligned, col.aligned
    assert a.score_names == b.score_names and a.text_scores == b.text_scores == ["verdict"]
    assert [v.name for v in a.variants] == [v.name for v in b.variants]
    np.testing.assert_array_equal(a.case_ids, b.case_ids)
    for name in ("values", "passed", "present", "failed"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    for name in ("n_skipped", "n_error"):
        np.testing.assert_array_equal(a.counts[name], b.counts[name])
    assert a.counts["n_skipped"].sum() > 0 and a.failed.any()  # the cases are exercised
    assert dict(a.queries) == dict(b.queries) and dict(a.rows) == dict(b.rows)

    missing = mem.missing_cases()
    assert set(missing["status"]) == {"missing", "query error"}
    assert missing["query"].notna().all()
    pd.testing.assert_frame_equal(missing, col.missing_cases())
    pd.testing.assert_frame_equal(mem.summary(), col.summary())
    pd.testing.assert_frame_equal(mem.significance(), col.significance())
    assert mem.notes() == col.notes()
    v = mem.variants[-1]
    assert mem.case_result(v, "q0002") == col.case_result(v, "q0002")


def test_case_codes_match_factorize_on_both_paths(tmp_path):
    report = _reports()["new"]
    store = ReportStore(tmp_path / "store")
    store.save(report)
    opened = store.load(report.knowledge_base_name, report.report_id)
    for name in ("case_id", "query_mode", "query", "error"):
        expected_codes, expected_values = pd.factorize(report.frames().case_column(name))
        for frames in (report.frames(), opened.frames()):
            codes, values = frames.case_codes(name)
            np.testing.assert_array_equal(codes, expected_codes)
            assert list(values) == list(expected_values)
    codes, values = opened.case_results.columnar.codes("scores", "status")
    assert codes.dtype == np.int32 and set(values) <= {"scored", "skipped", "error"}


def test_column_codes_are_first_seen_on_every_kind_of_columns(tmp_path):
    """``ReportColumns.codes`` equals ``pd.factorize`` for a stored report (Parquet's
    dictionaries, renumbered), an in-memory one and a subset of a stored one (many chunks:
    one dictionary encoding, already first-seen)."""
    from heta_notebook.reports._folder import open_report, write_report

    report = _reports()["new"]
    write_report(tmp_path / "saved", report, cases_per_group=7)  # many row groups
    opened = open_report(tmp_path / "saved")
    every_other = np.arange(0, len(report.case_results), 2)
    subset = opened.frames().columns.subset(every_other)
    assert subset.column("results", "id").num_chunks > 1  # read a row group at a time
    for columns in (report.frames().columns, opened.frames().columns, subset):
        for table, name in (("results", "id"), ("results", "source"), ("scores", "name")):
            codes, values = columns.codes(table, name)
            expected_codes, expected_values = pd.factorize(columns.column(table, name).to_pandas())
            np.testing.assert_array_equal(codes, expected_codes)
            assert list(values) == list(expected_values)
