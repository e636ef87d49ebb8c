"""The gate's exit codes are a contract for CI: 0 pass, 1 a regression and nothing else, 2 input the
gate cannot use, reported in one line without a traceback (issue 27, part 6)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from heta_notebook.cli import main
from heta_notebook.testing import GateInputError, check_regression
from tests._compare_helpers import scored_report

N = 40


@pytest.fixture
def pair(tmp_path):
    """A baseline at 0.9 on every case and a new report at 0.0: an unmistakable regression."""
    old = scored_report("old", {"beir_ndcg@10": [0.9] * N}, report_id="old")
    new = scored_report("new", {"beir_ndcg@10": [0.0] * N}, report_id="new")
    return str(old.save(tmp_path / "old.json")), str(new.save(tmp_path / "new.json"))


def _gate(pair, tmp_path, *extra):
    new, old = pair[1], pair[0]
    return ["gate", new, "--baseline", old, "--page-dir", str(tmp_path / "pages"), *extra]


def test_a_real_regression_exits_1(pair, tmp_path):
    assert main(_gate(pair, tmp_path, "--resamples", "200")) == 1


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--max-drop", "nan"], "max_drop must be a finite number >= 0"),
        (["--max-drop", "-0.1"], "max_drop must be a finite number >= 0"),
        (["--max-drop", "inf"], "max_drop must be a finite number >= 0"),
        (["--resamples", "0"], "n_resamples must be a whole number from 1 to"),
        (["--resamples", "-5"], "n_resamples must be a whole number from 1 to"),
        (["--alpha", "nan"], "alpha must be between 0 and 1"),
    ],
)
def test_unusable_settings_exit_2_in_one_line(pair, tmp_path, capsys, extra, words):
    assert main(_gate(pair, tmp_path, *extra)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gate: unusable input:") and words in err
    assert "\n" not in err


def test_nan_max_drop_never_passes_a_regression_through_the_api(pair):
    with pytest.raises(GateInputError, match="max_drop"):
        check_regression(pair[1], pair[0], max_drop=float("nan"), write_page=False)


@pytest.mark.parametrize("flag", ["--junit-xml", "--summary-md"])
def test_a_folder_where_a_file_goes_exits_2(pair, tmp_path, capsys, flag):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert main(_gate(pair, tmp_path, flag, str(folder))) == 2
    err = capsys.readouterr().err.strip()
    assert f"{flag} {folder} is a folder; expected a file" in err and "\n" not in err


@pytest.mark.parametrize("flag", ["--junit-xml", "--summary-md", "--page-dir"])
def test_a_file_in_the_way_exits_2(pair, tmp_path, capsys, flag):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    assert main(_gate(pair, tmp_path, flag, str(blocker / "sub" / "out"))) == 2
    err = capsys.readouterr().err.strip()
    assert f"{blocker} is a file, not a folder" in err and "\n" not in err
    assert blocker.read_text() == "a file, not a folder"


def test_page_dir_that_is_a_file_and_an_overlong_name_exit_2(pair, tmp_path, capsys):
    page = tmp_path / "page.html"
    page.write_text("x")
    assert main(_gate(pair, tmp_path, "--page-dir", str(page))) == 2
    assert "is a file; expected a folder" in capsys.readouterr().err
    assert main(_gate(pair, tmp_path, "--junit-xml", str(tmp_path / ("j" * 300)))) == 2
    assert "File name too long" in capsys.readouterr().err


def test_outputs_in_new_folders_are_created(pair, tmp_path):
    junit, summary = tmp_path / "a" / "junit.xml", tmp_path / "b" / "summary.md"
    code = main(_gate(pair, tmp_path, "--resamples", "200", "--junit-xml", str(junit)))
    assert code == 1 and junit.is_file()
    code = main(_gate(pair, tmp_path, "--resamples", "200", "--summary-md", str(summary)))
    assert code == 1 and "failed" in summary.read_text()


def test_cli_process_prints_no_traceback(pair, tmp_path):
    """The real entry point: exit status 2 and one stderr line for a NaN max drop."""
    args = _gate(pair, tmp_path, "--max-drop", "nan")
    run = subprocess.run(
        [sys.executable, "-m", "heta_notebook", *args], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and run.stderr.count("\n") == 1


def test_export_with_an_overlong_output_name_is_one_line(tmp_path):
    report = scored_report("r", {"beir_ndcg@10": [0.5] * 3}).save(tmp_path / "r.json")
    with pytest.raises(SystemExit, match="File name too long"):
        main(["export", str(report), "-o", str(tmp_path / ("o" * 300 + ".html"))])
