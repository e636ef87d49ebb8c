"""``heta-notebook run``: a benchmark against a recipe or a user's system, a subset at a time,
end to end in a real subprocess on Cranfield; errors are one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from heta_notebook import ReportStore
from heta_notebook.benchmarks._beir import cranfield_folder
from heta_notebook.cli import main

ROOT = Path(__file__).resolve().parents[1]
CRANFIELD = cranfield_folder()  # the package's own copy: the same on every machine

SYSTEM = '''
def search(text):
    """A toy system: the same ten Cranfield document ids for every query."""
    return [str(n) for n in range(1, 11)]

TOP_K = 10  # not a system: --recipe names it by mistake

def own_ids(text):
    return ["vec-" + str(n) for n in range(1, 11)]

def reader(question):
    """Abstains when the question is not about the Normans, else a fixed answer."""
    import heta_notebook as hn
    if "Norman" not in question:
        return hn.Abstain("not about the Normans")
    return {"answer": "France", "results": []}

def starts_with_f(outputs, inputs, ground_truth):
    return {"score": float(str(outputs.get("answer") or "").startswith("F"))}

def small_jsonl():
    from heta_notebook import JsonlBenchmark
    return JsonlBenchmark.from_folder("heta_jsonl")
'''


DOCUMENTS = [
    {"document_id": "d1", "text": "Wind tunnels measure lift on scale models of wings."},
    {"document_id": "d2", "text": "Boundary layers thicken along a heated flat plate."},
    {"document_id": "d3", "text": "Shock waves form ahead of a blunt body at high speed."},
]
CASES = [
    {"case_id": "q1", "query": "how is lift measured on wings",
     "expected": {"answers": ["wind tunnels"], "evidence": [{"reference_id": "d1"}]}},
    {"case_id": "q2", "query": "what forms ahead of a blunt body",
     "expected": {"answers": ["shock waves"], "evidence": [{"reference_id": "d3"}]}},
]  # fmt: skip


def _jsonl_folder(root: Path) -> Path:
    """A Heta JSONL benchmark folder (documents.jsonl, cases.jsonl) under ``root``."""
    folder = root / "heta_jsonl"
    folder.mkdir()
    for name, rows in (("documents", DOCUMENTS), ("cases", CASES)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


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
        (["cranfield", "--recipe", "my_system:TOP_K"], "cannot evaluate an object of type int"),
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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cranfield", "--evaluator", "bleu"], "give one of beir, squad, evidence or module:attr"),
        (["cranfield", "--evaluator", "nowhere:metric"], "no module named 'nowhere'"),
        (["my_system:search"], "is a function, not a benchmark"),
        (["my_system:nothing"], "has no attribute 'nothing'"),
    ],
)
def test_benchmark_and_evaluator_errors_are_one_line(tmp_path, monkeypatch, capsys, args, message):
    """In process (they fail before any run: a subprocess each would only time the imports)."""
    (tmp_path / "my_system.py").write_text(SYSTEM)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("HETA_DEBUG", raising=False)
    monkeypatch.delitem(sys.modules, "my_system", raising=False)  # gone again afterwards
    assert main(["run", *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines


def test_run_a_heta_jsonl_folder_with_a_chosen_evaluator(tmp_path):
    folder = _jsonl_folder(tmp_path)
    done = _run(str(folder), "--recipe", "bm25", "--evaluator", "evidence", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "bm25 on heta_jsonl" in done.stdout and "2 cases" in done.stdout
    assert "evidence_recall@5" in done.stdout and "evidence_recall@10" in done.stdout
    assert "answer_contains" not in done.stdout  # the JSONL default, replaced by the choice


def test_a_benchmark_and_an_evaluator_by_import_path(tmp_path):
    _jsonl_folder(tmp_path)
    (tmp_path / "my_system.py").write_text(SYSTEM)
    done = _run(
        "my_system:small_jsonl", "--recipe", "bm25",
        "--evaluator", "my_system:starts_with_f", "--evaluator", "beir", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "bm25 on heta_jsonl" in done.stdout
    assert "starts_with_f" in done.stdout and "beir_ndcg@10" in done.stdout


def test_squad_metrics_and_abstentions_on_the_squad_sample(tmp_path):
    (tmp_path / "my_system.py").write_text(SYSTEM)
    done = _run(
        "squad2-sample", "--recipe", "my_system:reader", "--evaluator", "squad",
        "--limit", "12", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "squad_exact_match" in done.stdout and "abstention" in done.stdout
    line = next(x for x in done.stdout.splitlines() if "abstained on" in x)
    assert "of 12" in line and "expected abstentions right" in line, done.stdout
