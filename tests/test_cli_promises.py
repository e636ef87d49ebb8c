"""The CLI keeps its word: input errors exit 2, messages name options (never internal
functions), ``ls`` on a report folder lists that report, a finished run leaves no ``.lock`` and
no stale ``checkpoint.json`` (its header keeps the fingerprint a rerun is checked against)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from heta_notebook import BeirBenchmark, Recipe, ReportStore, run_benchmark
from heta_notebook.cli import main

ROOT = Path(__file__).resolve().parents[1]
BM25 = Recipe(name="bm25", dense=None, hybrid=None)


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("store")
    run_benchmark(
        benchmark=BeirBenchmark.cranfield(),
        recipe=BM25,
        limit=3,
        store=ReportStore(store),
        config={"report_id": "fixed-id"},
        progress=False,
    )
    return store


def test_a_finished_run_leaves_no_lock_and_no_checkpoint(saved: Path) -> None:
    (folder,) = {p.parent for p in saved.rglob("header.json")}
    left = sorted(p.name for p in folder.iterdir())
    assert ".lock" not in left and "checkpoint.json" not in left, left
    assert not [p for p in left if p.endswith((".jsonl", ".arrows"))], left


def test_a_rerun_with_other_settings_is_still_refused(saved: Path) -> None:
    with pytest.raises(ValueError, match="fingerprint|settings"):
        run_benchmark(
            benchmark=BeirBenchmark.cranfield(),
            recipe=BM25,
            limit=3,
            store=ReportStore(saved),
            config={"report_id": "fixed-id", "top_k": 200},
            progress=False,
        )


def test_ls_on_a_report_folder_lists_that_report(saved: Path, capsys) -> None:
    (folder,) = {p.parent for p in saved.rglob("header.json")}
    for target in (folder, folder / "header.json"):
        assert main(["ls", str(target)]) == 0
        out = capsys.readouterr().out
        assert "fixed-id" in out and "no reports" not in out
    assert main(["ls", str(ROOT / "notebooks" / "data" / "heta_report.json")]) == 0
    assert "heta-fixture-cranfield-mini" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["run", "cranfield", "--limit", "abc"], "argument --limit: must be a positive integer"),
        (["run", "cranfield", "--top-k", "x"], "argument --top-k: must be a positive integer"),
        (["ls", "/no/such/folder"], "is not a folder"),
        (["export", "/no/such/report.json", "-o", "x.html"], "no report at"),
        (["run", "cranfield", "--recipe", "nosuch"], "--recipe 'nosuch'"),
    ],
)
def test_input_errors_exit_2_with_one_line_naming_the_option(argv, says, tmp_path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "heta_notebook", *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1, (run.returncode, run.stderr)
    assert says in lines[0] and "_positive" not in lines[0] and "Traceback" not in run.stderr
