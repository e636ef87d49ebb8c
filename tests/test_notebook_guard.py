"""Notebook runs fail loudly: a failing ``!`` line or an error printed as text fails the cell
(nbval through the guard hook, and ``run_notebook``); ruff keeps names ``!`` lines use."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from heta_notebook.display._notebook import NotebookOutputError, execute_notebook
from heta_notebook.testing._notebook_guard import guard_shell_lines, output_problems
from tests._pytest_run_helpers import UNUSED_PLUGINS

ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).with_name("ruff")


def _notebook(path: Path, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(nb, path)
    return path


def test_guard_checks_every_shell_line_and_keeps_the_rest() -> None:
    source = "x = 1\n!ls {x}\nif x:\n    !false\ny = x != 2"
    guarded = guard_shell_lines(source)
    assert guarded.count("if _exit_code:") == 2
    assert "    if _exit_code:" in guarded  # the indented ! line is checked at its own level
    assert "y = x != 2" in guarded and guard_shell_lines("a = 1\nb = a") == "a = 1\nb = a"
    compile(guarded.replace("!", "#"), "<cell>", "exec")


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("/bin/bash: line 1: {sys.executable}: command not found\n", "not found"),
        ("/bin/bash: -c: line 1: syntax error near unexpected token `('\n", "shell reported"),
        ('Traceback (most recent call last):\n  File "x.py"\nValueError: no\n', "traceback"),
    ],
)
def test_output_problems_name_shell_errors_and_printed_tracebacks(text: str, what: str) -> None:
    problems = output_problems([{"output_type": "stream", "name": "stderr", "text": text}])
    assert problems and what in problems[0]
    assert not output_problems([{"output_type": "stream", "name": "stdout", "text": "ok\n"}])


@pytest.mark.slow
def test_nbval_fails_a_notebook_whose_shell_line_fails(tmp_path: Path) -> None:
    _notebook(tmp_path / "missing_name.ipynb", "x = 1", "!{sys.executable} -c 'print(1)'")
    _notebook(tmp_path / "exit_code.ipynb", "import sys", "!{sys.executable} -c 'exit(3)'")
    _notebook(
        tmp_path / "printed.ipynb",
        "import subprocess, sys",
        "print(subprocess.run([sys.executable, '-c', '1/0'], capture_output=True, text=True).stderr)",
    )
    _notebook(tmp_path / "good.ipynb", "import sys", "!{sys.executable} -c 'print(1)'")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]
        + list(UNUSED_PLUGINS)
        + ["-p", "heta_notebook.testing._notebook_guard", "-q", "-rf", "-m", ""]
        + ["--nbval-lax", "--nbval-current-env", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    failed = set(re.findall(r"FAILED \S*?(\w+)\.ipynb::Cell 1", run.stdout))
    assert failed == {"missing_name", "exit_code", "printed"}, run.stdout[-3000:]
    assert "exited with code 127" in run.stdout and "exited with code 3" in run.stdout


@pytest.mark.slow
def test_run_notebook_refuses_a_failed_shell_line(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "bad.ipynb", "x = 1", "!{sys.executable} -c 'print(1)'")
    with pytest.raises(Exception, match="exited with code 127"):
        execute_notebook(path, timeout=120)
    printed = _notebook(tmp_path / "printed.ipynb", "print('/bin/bash: nope: command not found')")
    with pytest.raises(NotebookOutputError, match="cell 0: a shell command was not found"):
        execute_notebook(printed, timeout=120)


@pytest.mark.skipif(not RUFF.exists(), reason="ruff is not installed next to this Python")
def test_ruff_keeps_the_names_shell_lines_use(tmp_path: Path) -> None:
    for source in sorted((ROOT / "notebooks").glob("*.ipynb")):
        copy = tmp_path / source.name
        shutil.copy(source, copy)
        subprocess.run([RUFF, "check", "--fix", "-q", "--exit-zero", copy], cwd=ROOT, check=True)
        cells = ["".join(c["source"]) for c in json.loads(copy.read_text())["cells"]]
        code = "\n".join(cells)
        for line in (ln.strip() for text in cells for ln in text.splitlines()):
            if line.startswith("!"):
                for name in re.findall(r"\{\s*([A-Za-z_]\w*)", line):
                    bound = rf"(import {name}\b|\b{name}\s*=|for {name}\b|def {name}\b)"
                    assert re.search(bound, code), f"{source.name}: ruff dropped {name!r} ({line})"


@pytest.mark.slow
def test_the_nbval_run_is_exported_with_its_widgets_and_held_to_the_budget(tmp_path: Path) -> None:
    """CI executes each notebook once: nbval's run is exported as ``run-notebook`` shares it
    (widget state included) and a page over budget fails the last cell, naming the notebook.
    A Labeler shown before its labels are made (as in notebook 07) exports a read-only view
    counting them: the check that runs first passes, so the budget's is the one reported."""
    _notebook(
        tmp_path / "slider.ipynb",
        "import ipywidgets as w",
        "w.IntSlider(value=7, description='sevens')",
        "from heta_notebook import Labeler, LabelSet\n"
        "labeler = Labeler(LabelSet({}), [('q1', 'd1'), ('q1', 'd2')], queries={'q1': 'x'},"
        " documents={'d1': 'one', 'd2': 'two'})\n"
        "labeler",
        "labeler.label(2)\nprint('done')",
    )
    pages = tmp_path / "pages"
    pages.mkdir()
    env = {
        **os.environ,
        "HETA_NOTEBOOK_EXPORT_BYTES": "1000",
        "HETA_NOTEBOOK_EXPORT_DIR": str(pages),
    }
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "tests._nbval_export"]
        + [str(tmp_path / "slider.ipynb"), "--nbval-lax", "--nbval-current-env", "-q"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout
    assert "slider.ipynb exports to" in run.stdout and "over the 0.001 MB budget" in run.stdout
    assert "3 passed" in run.stdout  # the first cells pass; the last one carries the check
    page = (pages / "slider.html").read_text(encoding="utf-8")
    assert "IntSliderModel" in page and '"sevens"' in page and "done" in page
    assert "Labeling: 1 of 2 pairs labelled" in page and "Labeling: 0 of 2" not in page
