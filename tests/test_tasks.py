"""`python3 tasks.py test FILE` runs that file's tests, slow ones included, and fails without a traceback."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tasks():
    spec = importlib.util.spec_from_file_location("tasks_under_test", ROOT / "tasks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_focused_run_selects_slow_tests_unless_the_user_chose_markers():
    args = _tasks().focused_pytest_args
    assert args(["tests/test_x.py", "-x"]) == ["-m", "", "tests/test_x.py", "-x"]
    assert args(["tests/test_x.py", "-m", "not ray"]) == ["tests/test_x.py", "-m", "not ray"]
    assert args(["--markexpr=slow"]) == ["--markexpr=slow"]


def test_a_file_of_slow_tests_runs_them_with_the_projects_addopts(tmp_path):
    test_file = tmp_path / "test_only_slow.py"
    test_file.write_text("import pytest\n\n@pytest.mark.slow\ndef test_slow():\n    pass\n")
    config = ["-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path)]
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *config]
    run = subprocess.run(
        [*command, *_tasks().focused_pytest_args([str(test_file)])],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # a faster start
    )
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr


def test_a_failing_step_exits_with_its_code_and_no_traceback(capsys):
    with pytest.raises(SystemExit) as info:
        _tasks().sh(sys.executable, "-c", "raise SystemExit(5)")
    assert info.value.code == 5
    assert "exit code 5" in capsys.readouterr().err


def test_an_installed_venv_is_reused_while_pyproject_is_unchanged(tmp_path, monkeypatch, capsys):
    tasks = _tasks()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    venv_dir = tmp_path / ".venv"
    (venv_dir / "bin").mkdir(parents=True)
    (venv_dir / "bin" / "python").write_text("")
    monkeypatch.setattr(tasks, "ROOT", tmp_path)
    monkeypatch.setattr(tasks, "VENV", venv_dir)
    monkeypatch.setattr(tasks, "PY", venv_dir / "bin" / "python")
    installs = []
    monkeypatch.setattr(tasks, "sh", lambda *args, **kw: installs.append(args))
    tasks.install("test")  # no stamp yet: pip runs, then the stamp is written
    tasks.install("test")  # unchanged: reused
    assert len(installs) == 1 and "up to date" in capsys.readouterr().out
    tasks.install("notebook")  # other extras: pip runs
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\nversion = '2'\n")
    tasks.install("notebook")  # pyproject changed: pip runs
    tasks.install("notebook")
    assert len(installs) == 3
    assert (venv_dir / tasks.STAMP).read_text().strip() == tasks.install_stamp("notebook")


def test_the_test_command_runs_three_workers_at_least():
    args = _tasks().parallel_args()
    workers = int(args[args.index("-n") + 1])
    assert workers >= 3 and args[-3:] == ["--dist", "loadfile", "--no-loadscope-reorder"]


def test_the_tests_processes_import_jsonschema_without_building_rfc3987s_parser():
    """offline_env's PYTHONPATH hides rfc3987_syntax (its parser cost ~1 CPU s per process);
    jsonschema still validates, without an IRI format checker."""
    env = _tasks().offline_env()
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT / "tests" / "_hidden_modules")
    script = (
        "import sys, jsonschema\n"
        "jsonschema.validate({'a': 1}, {'properties': {'a': {'type': 'integer'}}})\n"
        "print(sorted(m for m in ('lark', 'rfc3987_syntax') if m in sys.modules))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert run.stdout.strip() == "[]", run.stdout + run.stderr
