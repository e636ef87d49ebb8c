"""The project's two commands, runnable on a fresh machine with only Python 3.

    python3 tasks.py quickstart   # install into .venv, run the quickstart notebook headless
    python3 tasks.py test         # install into .venv (with test extras), lint, run every test

Both create ``.venv`` next to this file on first use and reuse it afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"


def sh(*args: object, **kwargs: object) -> None:
    """Run a command from the repo root, echoing it; stop on failure."""
    print("+", " ".join(str(a) for a in args), flush=True)
    subprocess.run([str(a) for a in args], cwd=ROOT, check=True, **kwargs)  # type: ignore[arg-type]


def install(extras: str) -> None:
    """Create .venv if needed and install the project (editable) with ``extras``."""
    if not PY.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
        sh(PY, "-m", "pip", "install", "-q", "--upgrade", "pip")
    sh(PY, "-m", "pip", "install", "-q", "-e", f".[{extras}]")


def test() -> None:
    """Lint, then run the whole suite: unit, integration, notebooks (nbval), browser checks."""
    install("test")
    sh(PY, "-m", "ruff", "check", ".")
    sh(PY, "-m", "ruff", "format", "--check", ".")
    sh(PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *sys.argv[2:])


def quickstart() -> None:
    """Run notebooks/01_quickstart.ipynb headless; write the executed notebook and its HTML."""
    install("notebook")
    sh(PY, "-m", "heta_notebook", "run-notebook", "notebooks/01_quickstart.ipynb", "-o", "out")


if __name__ == "__main__":
    commands = {"test": test, "quickstart": quickstart}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(f"usage: python3 tasks.py {{{'|'.join(commands)}}} [pytest args]")
    commands[sys.argv[1]]()
