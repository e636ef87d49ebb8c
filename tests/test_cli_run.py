"""``heta-notebook run``: a benchmark against a recipe or a user's system, a subset at a time,
end to end in a real subprocess on Cranfield; errors are one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from heta_notebook import ReportStore

ROOT = Path(__file__).resolve().parents[1]
CRANFIELD = Path("/work/shared/data/cranfield")
if not (CRANFIELD / "corpus.jsonl").is_file():  # the package's own copy elsewhere
    from heta_notebook.benchmarks._beir import cranfield_folder

    CRANFIELD = cranfield_folder()

SYSTEM = '''
def search(text):
    """A toy system: the same ten Cranfield document ids for every query."""
    return [str(n) for n in range(1, 11)]

def own_ids(text):
    return ["vec-" + str(n) for n in range(1, 11)]
'''


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cwd)])}
    env.pop("HETA_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "heta_notebook", "run", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def test_run_a_subset_of_cranfield_and_save_it(tmp_path):
    done = _run(
        str(CRANFIELD), "--recipe", "bm25", "--limit", "6", "--top-k", "5",
        "--out", str(tmp_path / "store"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "bm25 on" in done.stdout and "6 cases" in done.stdout
    assert "beir_ndcg@10" in done.stdout and "saved" in done.stdout
    listing = ReportStore(tmp_path / "store").list()
    assert len(listing) == 1
    (kb, rid) = listing.iloc[0][["knowledge_base_name", "report_id"]]
    report = ReportStore(tmp_path / "store").load(kb, rid)
    assert len(report.case_results) == 6
    assert report.metadata["subset"]["limit"] == 6
    assert all(len(r.response.results) <= 5 for r in report.case_results)


def test_run_a_user_system_by_import_path_with_case_ids_and_a_sample(tmp_path):
    (tmp_path / "my_system.py").write_text(SYSTEM)
    chosen = _run(
        str(CRANFIELD), "--recipe", "my_system:search", "--case-id", "1", "--case-id", "2",
        cwd=tmp_path,
    )  # fmt: skip
    assert chosen.returncode == 0, chosen.stderr
    assert "search on" in chosen.stdout and "2 cases" in chosen.stdout
    drawn = _run(
        str(CRANFIELD), "--recipe", "my_system:search", "--sample", "3", "--seed", "7",
        cwd=tmp_path,
    )  # fmt: skip
    assert drawn.returncode == 0, drawn.stderr
    assert "3 cases" in drawn.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere"], "no benchmark at nowhere"),
        (["cranfield", "--recipe", "nope"], "give one of default, bm25 or module:attr"),
        (["cranfield", "--recipe", "my_system:missing"], "has no attribute 'missing'"),
        (["cranfield", "--recipe", "my_system:own_ids", "--limit", "3"], "none of the"),
        (["cranfield", "--label", "oops"], "expected KEY=VALUE"),
    ],
)
def test_errors_are_one_line(tmp_path, args, message):
    (tmp_path / "my_system.py").write_text(SYSTEM)
    done = _run(*args, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines


def test_a_label_filter_that_matches_nothing_says_so(tmp_path):
    done = _run(str(CRANFIELD), "--recipe", "bm25", "--label", "topic=none", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
