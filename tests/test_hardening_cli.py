"""CLI export never clobbers, ls fits 80 columns, corrupt reports are named in one line (issue #16)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from heta_notebook.cli import main
from heta_notebook.reports._listing import ls_table
from heta_notebook.reports._run import ReportWarning
from heta_notebook.reports._store import ReportStore
from heta_notebook.schema import ReportFormatError
from tests._cli_helpers import make_report

LONG_ID = "eval-0123456789ab-20261201-015900-123456"


def _saved(tmp_path, report_id="r1", kb="bm25"):
    return ReportStore(tmp_path / "store").save(make_report(report_id, kb=kb))


def test_export_refuses_to_overwrite_its_input(tmp_path):
    path = _saved(tmp_path)
    before = path.read_bytes()
    with pytest.raises(SystemExit, match="one of the input reports"):
        main(["export", str(path), "-o", str(path)])
    with pytest.raises(SystemExit, match="one of the input reports"):  # the folder form too
        main(["export", str(path.parent), "-o", str(path), "--force"])
    assert path.read_bytes() == before


def test_export_needs_force_to_replace_a_file(tmp_path, capsys):
    path, out = _saved(tmp_path), tmp_path / "out.html"
    out.write_text("keep me")
    with pytest.raises(SystemExit, match="exists; pass --force"):
        main(["export", str(path), "-o", str(out)])
    assert out.read_text() == "keep me"
    assert main(["export", str(path), "-o", str(out), "--force"]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>") or "<html" in out.read_text()


@pytest.mark.parametrize("output", ["", "   ", "FOLDER"])
def test_export_output_folder_or_empty_is_one_line_error(tmp_path, output):
    path = _saved(tmp_path)
    output = str(tmp_path) if output == "FOLDER" else output
    with pytest.raises(SystemExit) as info:
        main(["export", str(path), "-o", output])
    message = str(info.value)
    assert message.startswith("error: -o") and "\n" not in message


def test_export_of_a_corrupt_report_is_one_line_without_traceback(tmp_path):
    bad = tmp_path / "report.json"
    bad.write_text('{"report_id": "", "case_results": [1, 2]}')
    run = subprocess.run(
        [sys.executable, "-m", "heta_notebook", "export", str(bad), "-o", str(tmp_path / "x.html")],
        capture_output=True,
        text=True,
    )
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert run.stderr.strip().count("\n") == 0 and str(bad) in run.stderr


def test_store_load_names_the_corrupt_file(tmp_path):
    path = _saved(tmp_path)
    path.write_text('{"report_id": 5')
    with pytest.raises(ReportFormatError) as info:
        ReportStore(tmp_path / "store").load("bm25", "r1")
    assert info.value.file == str(path) and str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_store_list_skips_a_corrupt_report_with_a_warning_naming_it(tmp_path):
    store = ReportStore(tmp_path / "store")
    good = _saved(tmp_path, "good")
    bad = _saved(tmp_path, "bad")
    (bad.parent / "summary.json").unlink()  # as heta-framework writes it: no sidecar
    bad.write_text("{not json")
    (good.parent / "summary.json").write_text("[1, 2")
    _saved(tmp_path, "fine")
    with pytest.warns(ReportWarning) as caught:
        frame = store.list()
    # a damaged listing row is rebuilt from its report (issue 40); a damaged report is skipped
    assert sorted(frame["report_id"]) == ["fine", "good"]
    messages = sorted(str(w.message) for w in caught)
    assert str(bad) in messages[0] + messages[1] and str(good.parent / "summary.json") in "".join(
        messages
    )
    assert "listed from the report itself" in "".join(messages)


def test_ls_prints_one_warning_line_per_corrupt_report_and_no_traceback(tmp_path):
    _saved(tmp_path, "ok")
    broken = _saved(tmp_path, "broken")
    (broken.parent / "summary.json").write_text("{")
    run = subprocess.run(
        [sys.executable, "-m", "heta_notebook", "ls", str(tmp_path / "store")],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0 and "Traceback" not in run.stderr
    assert run.stderr.startswith("warning: ") and run.stderr.count("\n") == 1
    assert "summary.json" in run.stderr and "listed from the report itself" in run.stderr
    assert " ok " in run.stdout + " " and " broken " in run.stdout + " "  # rebuilt, listed


def test_ls_prints_full_ids_that_can_be_copied_and_shortens_only_the_label(tmp_path, capsys):
    store = ReportStore(tmp_path)
    kb = "beir_cranfield-chunks-100-overlap-20-bm25-only"
    report = make_report(LONG_ID, kb=kb)
    label = {"label": "a rather long label for this run"}
    store.save(report.model_copy(update={"metadata": label}))
    assert main(["ls", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.rstrip("\n").splitlines()
    assert len(lines) == 2
    assert lines[1].split()[:2] == [kb, LONG_ID]  # whole, so `export` / `load` accept them
    assert "a rather long label for this run" not in lines[1] and "…" in lines[1]
    assert main(["ls", str(tmp_path), "--long"]) == 0
    assert "a rather long label for this run" in capsys.readouterr().out


def test_ls_of_short_names_fits_80_columns(tmp_path, capsys):
    store = ReportStore(tmp_path)
    store.save(make_report("r1").model_copy(update={"metadata": {"label": "x" * 60}}))
    assert main(["ls", str(tmp_path)]) == 0
    assert all(len(line) <= 80 for line in capsys.readouterr().out.splitlines())


def test_ls_table_keeps_short_ids_whole():
    rows = [
        {
            "knowledge_base_name": "kb",
            "report_id": "r1",
            "label": "x",
            "benchmark": "tiny",
            "split": "dev",
            "query_modes": ["a", "b"],
            "n_cases": 6,
            "finished_at": "2026-12-01T01:02:03",
        }
    ]
    table = ls_table(rows)
    assert table.splitlines()[1].split() == [
        "kb",
        "r1",
        "x",
        "tiny/dev",
        "6",
        "2026-12-01",
        "01:02",
    ]


def test_different_benchmarks_flag_is_separate_from_force(tmp_path, capsys):
    a = _saved(tmp_path, "a")
    other = make_report("b").model_copy(
        update={"benchmark": make_report("b").benchmark.model_copy(update={"name": "other"})}
    )
    b = ReportStore(tmp_path / "store").save(other)
    out = tmp_path / "cmp.html"
    assert main(["export", str(a), str(b), "-o", str(out)]) == 2
    assert "different benchmarks" in capsys.readouterr().err and not out.exists()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["export", str(a), str(b), "-o", str(out), "--allow-different-benchmarks"]) == 0
    assert out.is_file()


def test_store_list_survives_summaries_without_times(tmp_path):
    store = ReportStore(tmp_path / "store")
    path = _saved(tmp_path, "odd")
    (path.parent / "summary.json").write_text('{"report_id": "odd", "started_at": 5}')
    _saved(tmp_path, "fine")
    assert sorted(store.list()["report_id"]) == ["fine", "odd"]
