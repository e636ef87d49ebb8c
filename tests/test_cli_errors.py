"""Every subcommand fails on bad input with one line and a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from heta_notebook.cli import main
from heta_notebook.reports._store import ReportStore
from tests._cli_helpers import make_report, write_notebook

ROOT = Path(__file__).resolve().parents[1]


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the CLI in-process: (exit code, stdout, stderr); argparse exits count as codes."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors and the commands' own one-line messages
        code = exc.code if isinstance(exc.code, int) else 1
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_failure(code: int, err: str) -> str:
    assert code != 0, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if not line.startswith("usage:")]
    assert len(lines) == 1, err
    return lines[0]


def _modes_only(report_id: str, kb: str, mode: str):
    report = make_report(report_id, kb=kb)
    kept = tuple(r for r in report.case_results if r.query_mode == mode)
    return report.model_copy(update={"query_modes": (mode,), "case_results": kept})


@pytest.fixture
def saved(tmp_path):
    store = ReportStore(tmp_path / "store")
    return {
        "a": store.save(make_report("a", kb="kb-a")).parent,
        "b": store.save(make_report("b", kb="kb-b", shift=0.1)).parent,
        "only_bm25": store.save(_modes_only("m1", "kb-m1", "bm25")).parent,
        "only_dense": store.save(_modes_only("m2", "kb-m2", "dense")).parent,
    }


# --------------------------------------------------------------------------- export


def test_export_of_missing_or_corrupt_files_is_one_line(tmp_path, capsys, saved):
    out = str(tmp_path / "x.html")
    code, _, err = _cli(["export", str(tmp_path / "missing.json"), "-o", out], capsys)
    assert "no report at" in _one_line_failure(code, err)
    corrupt = tmp_path / "report.json"
    corrupt.write_text('{"report_id": 5')
    code, _, err = _cli(["export", str(corrupt), "-o", out], capsys)
    assert str(corrupt) in _one_line_failure(code, err)


def test_export_with_wrong_or_missing_flags_is_a_usage_error(tmp_path, capsys, saved):
    code, _, err = _cli(["export", str(saved["a"]), "--bogus", "-o", "x.html"], capsys)
    assert code == 2 and "unrecognized arguments: --bogus" in _one_line_failure(code, err)
    code, _, err = _cli(["export", str(saved["a"])], capsys)
    assert code == 2 and "-o/--output" in _one_line_failure(code, err)


@pytest.mark.parametrize(
    ("argv0", "prog"),
    [("/venv/bin/heta-notebook", "heta-notebook"), ("/x/heta_notebook/__main__.py", "python -m")],
)
def test_usage_errors_name_the_command_as_called(capsys, monkeypatch, argv0, prog):
    monkeypatch.setattr(sys, "argv", [argv0, "run"])
    code, _, err = _cli(["run"], capsys)
    assert code == 2 and _one_line_failure(code, err).startswith(f"{prog} ")
    assert f"(see {prog}" in err


def test_export_of_a_300_character_file_name_is_one_line(tmp_path, capsys, saved):
    out = tmp_path / ("a" * 300 + ".html")
    code, _, err = _cli(["export", str(saved["a"]), "-o", str(out)], capsys)
    assert "too long" in _one_line_failure(code, err).lower()


def test_export_of_reports_with_no_mode_in_common_still_writes_the_page(tmp_path, capsys, saved):
    out = tmp_path / "modes.html"
    code, stdout, err = _cli(
        ["export", str(saved["only_bm25"]), str(saved["only_dense"]), "-o", str(out)], capsys
    )
    assert code == 0 and "Traceback" not in err, err
    assert out.is_file() and "kb-m1" in out.read_text() and "kb-m2" in out.read_text()


def test_export_baseline_given_as_a_path_picks_that_report(tmp_path, capsys, saved):
    out = tmp_path / "cmp.html"
    argv = ["export", str(saved["a"]), str(saved["b"]), "--baseline", str(saved["b"])]
    code, _, err = _cli([*argv, "-o", str(out)], capsys)
    assert code == 0, err
    assert "baseline kb-b (same mode)" in out.read_text()


def test_export_with_an_unknown_baseline_names_the_labels(tmp_path, capsys, saved):
    argv = ["export", str(saved["a"]), str(saved["b"]), "--baseline", "nope"]
    code, _, err = _cli([*argv, "-o", str(tmp_path / "x.html")], capsys)
    line = _one_line_failure(code, err)
    assert "'nope'" in line and "kb-a" in line and "kb-b" in line
    other = tmp_path / "elsewhere.json"
    other.write_text("{}")
    code, _, err = _cli([*argv[:-1], str(other), "-o", str(tmp_path / "x.html")], capsys)
    assert "not one of the reports" in _one_line_failure(code, err)


# --------------------------------------------------------------------------- ls


def test_ls_of_a_missing_folder_or_with_a_wrong_flag_is_one_line(tmp_path, capsys):
    code, _, err = _cli(["ls", str(tmp_path / "nope")], capsys)
    assert "is not a folder" in _one_line_failure(code, err)
    code, _, err = _cli(["ls", str(tmp_path), "--wide"], capsys)
    assert code == 2 and "--wide" in _one_line_failure(code, err)


def test_ls_json_into_a_closed_pipe_exits_quietly(tmp_path, saved):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "heta_notebook", "ls", str(tmp_path / "store"), "--json"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path
    )
    process.stdout.close()  # like `| head` that has already read what it wanted
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) != 0
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


# --------------------------------------------------------------------------- run-notebook


def test_run_notebook_of_a_missing_or_unreadable_notebook_is_one_line(tmp_path, capsys):
    code, _, err = _cli(["run-notebook", str(tmp_path / "no.ipynb"), "-o", "out"], capsys)
    assert "no notebook at" in _one_line_failure(code, err)
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    code, _, err = _cli(["run-notebook", str(bad), "-o", str(tmp_path / "out")], capsys)
    assert str(bad) in _one_line_failure(code, err)
    code, _, err = _cli(["run-notebook", str(bad)], capsys)
    assert code == 2 and "-o/--output" in _one_line_failure(code, err)


def test_run_notebook_with_a_failing_cell_names_the_error_in_one_line(tmp_path, capsys):
    notebook = write_notebook(tmp_path / "fails.ipynb", ["x = 1", "raise ValueError('no such KB')"])
    code, _, err = _cli(["run-notebook", str(notebook), "-o", str(tmp_path / "out")], capsys)
    line = _one_line_failure(code, err)
    assert "fails.ipynb" in line and "ValueError: no such KB" in line


# --------------------------------------------------------------------------- gate


def test_gate_of_missing_reports_or_unknown_scores_is_one_line(tmp_path, capsys, saved):
    code, _, err = _cli(["gate", str(tmp_path / "nope"), "--baseline", str(saved["a"])], capsys)
    assert code == 2 and "no report at" in _one_line_failure(code, err)
    code, _, err = _cli(["gate", str(saved["b"]), "--baseline", str(tmp_path / "gone")], capsys)
    assert code == 2 and "gone" in _one_line_failure(code, err)
    argv = ["gate", str(saved["b"]), "--baseline", str(saved["a"]), "--score", "recall@99"]
    code, _, err = _cli(argv, capsys)
    assert code == 2 and "recall@99" in _one_line_failure(code, err)


def test_gate_with_wrong_flags_is_a_usage_error(tmp_path, capsys, saved):
    code, _, err = _cli(["gate", str(saved["b"])], capsys)
    assert code == 2 and "--baseline" in _one_line_failure(code, err)
    argv = ["gate", str(saved["b"]), "--baseline", str(saved["a"]), "--method", "magic"]
    code, _, err = _cli(argv, capsys)
    assert code == 2 and "magic" in _one_line_failure(code, err)


def test_heta_debug_shows_the_traceback_for_a_bug_report(tmp_path, capsys, saved, monkeypatch):
    monkeypatch.setenv("HETA_DEBUG", "1")
    argv = ["export", str(saved["a"]), str(saved["b"]), "--baseline", "nope"]
    with pytest.raises(KeyError, match="nope"):
        main([*argv, "-o", str(tmp_path / "x.html")])
