"""The project's two commands, runnable on a fresh machine with only Python 3.

    python3 tasks.py quickstart   # install into .venv, run the quickstart notebook headless -> out/
    python3 tasks.py test         # install into .venv (test extras), lint, run every test
    python3 tasks.py test tests/test_cli.py -x   # extra arguments: only that pytest run
                                                 # (slow and browser tests included unless -m)

``test`` runs: ruff; mypy (zero errors on heta_notebook/); pytest over tests/ and, through
nbval, every notebook in notebooks/ (test files spread over pytest-xdist workers, one more
than the cores); and, beside it in their own process, the browser tests (JupyterLab +
exported HTML in headless Chromium; they wait on kernels and pages much of the time, so
running them alongside took 316 s in all where one after the other took 345 s on a quiet
2-core box; they must not share an xdist worker's event loop with the async tests). On CI
(CI=true), as root, a missing /usr/bin/chromium is installed with apt-get; elsewhere browser tests skip
when there is no Chromium. LLM judge credentials (HETA_JUDGE_*, OPENAI_*) are removed from the
tests' environment, so no test calls a paid endpoint. Both commands create ``.venv`` next to this
file and reuse it: pip runs again only when pyproject.toml (or the extras) changed since the
last install (``.venv/.heta-install-stamp`` holds their hash).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
CHROMIUM = Path("/usr/bin/chromium")
HIDDEN = ROOT / "tests" / "_hidden_modules"  # stand-ins for packages the tests need not load
STAMP = ".heta-install-stamp"  # sha256 of pyproject.toml + extras of the last install
PYTEST = [PY, "-m", "pytest", "-p", "no:cacheprovider"]


def sh(*args: object, **kwargs: object) -> None:
    """Run a command from the repo root, echoing it; stop with its exit code on failure."""
    print("+", " ".join(str(a) for a in args), flush=True)
    code = subprocess.run([str(a) for a in args], cwd=ROOT, **kwargs).returncode  # type: ignore[call-overload]
    if code:
        print(f"failed with exit code {code}: {args[0]} ... {args[-1]}", file=sys.stderr)
        raise SystemExit(code)


def focused_pytest_args(user_args: list[str]) -> list[str]:
    """A developer's own pytest arguments; without their own ``-m``, every marker is selected
    (pyproject's addopts deselects slow and browser tests, so a slow-only file would run none)."""
    gave_marker = any(a == "-m" or a.startswith(("-m=", "--markexpr")) for a in user_args)
    return user_args if gave_marker else ["-m", "", *user_args]


def install_stamp(extras: str) -> str:
    """What an install depends on: pyproject.toml's bytes and the extras (a sha256)."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    digest.update(f"\0{extras}".encode())
    return digest.hexdigest()


def install(extras: str) -> None:
    """Create .venv if needed and install the project (editable) with ``extras``; skip pip when
    ``.venv`` already holds an install of this pyproject.toml with these extras (the stamp)."""
    stamp_file, stamp = VENV / STAMP, install_stamp(extras)
    if PY.exists() and stamp_file.exists() and stamp_file.read_text().strip() == stamp:
        print(
            f"+ .venv is up to date with pyproject.toml [{extras}] (delete {stamp_file} to reinstall)"
        )
        return
    if not PY.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
        sh(PY, "-m", "pip", "install", "-q", "--upgrade", "pip")
    stamp_file.unlink(missing_ok=True)
    sh(PY, "-m", "pip", "install", "-q", "-e", f".[{extras}]")
    stamp_file.write_text(stamp + "\n")


def on_ci() -> bool:
    """True on a CI runner (CI=true/1), where the browser tests must run, not skip."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def ensure_chromium() -> None:
    """On CI, as root on Debian/Ubuntu, apt-get install chromium if it is missing."""
    if CHROMIUM.exists() or not on_ci():
        return
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("apt-get") is None:
        print(f"CI: {CHROMIUM} is missing and cannot be installed here (needs root + apt-get)")
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    sh("apt-get", "update", "-qq", env=env)
    sh("apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium", env=env)


def offline_env() -> dict[str, str]:
    """The environment for tests, minus LLM judge credentials: tests never call a paid API.

    ``PYTHONDONTWRITEBYTECODE`` is dropped too: the suite starts many interpreters (xdist
    workers, subprocess tests, kernels, Ray workers), and without cached bytecode each one
    compiled the package again and pytest re-rewrote every plugin's asserts (collection
    took 18 s per worker instead of 12).

    ``PYTHONPATH`` starts with ``tests/_hidden_modules``: every process of the run (pytest and
    its workers, notebook kernels, JupyterLab, subprocesses) imports ``jsonschema`` through
    nbformat, which built ``rfc3987_syntax``'s parser at import, ~1 CPU s each; the tests
    check no IRI format, so the stand-in there hides that package."""
    secret = ("HETA_JUDGE_", "HETA_ANSWER_", "OPENAI_API_KEY", "OPENAI_BASE_URL")
    dropped = (*secret, "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    paths = [str(HIDDEN), *filter(None, [env.get("PYTHONPATH")])]
    return {**env, "PYTHONPATH": os.pathsep.join(paths)}


def parallel_args() -> list[str]:
    """pytest-xdist workers for the main run: one more than the cores (3 at least, 5 at most):
    many tests wait on subprocesses, kernels, Ray and sleeps, so one worker per core left the
    2-core box at 119% CPU for the main run (the command took 401 s on a quiet box, 2026-12-08)
    where three workers kept it at 136% (364 s and 345 s); four were no faster (414 s vs 406 s
    with three, one after the other, bench/README.md). A test file stays on one worker (its
    module fixtures, e.g. the Ray cluster, start once). Files go out in the order
    tests/conftest.py sets, the longest first, not xdist's most-tests-first."""
    workers = max(3, min(5, (os.cpu_count() or 2) + 1))
    return ["-n", str(workers), "--dist", "loadfile", "--no-loadscope-reorder"]


def test() -> None:
    """Lint, then run the whole suite: unit, integration, notebooks (nbval), browser checks."""
    started = time.perf_counter()
    install("test")
    env = offline_env()
    if len(sys.argv) > 2:  # a developer's focused run: only what they asked for
        sh(*PYTEST, *focused_pytest_args(sys.argv[2:]), env=env)
        return
    ensure_chromium()
    sh(PY, "-m", "ruff", "check", ".")
    sh(PY, "-m", "ruff", "format", "--check", ".")
    sh(PY, "-m", "mypy")  # pyproject's [tool.mypy]: zero errors on heta_notebook/
    browser = Background(*PYTEST, "-q", "-m", "browser", "-rs", "tests/browser", env=env)
    try:
        sh(
            *PYTEST,
            "-q",
            *parallel_args(),
            "-m",
            "not browser and not soak",
            "tests",
            "notebooks",
            "--nbval-lax",
            "--nbval-current-env",
            "--nbval-cell-timeout=900",
            env=env,
        )
    finally:
        browser.finish()
    print(f"all tests passed in {time.perf_counter() - started:.0f} s")


class Background:
    """A command run beside the main one (its output kept in a file, printed when it ends)."""

    def __init__(self, *args: object, env: dict[str, str]) -> None:
        print("+ (beside the main run)", " ".join(str(a) for a in args), flush=True)
        self.args = args
        self.log = open(ROOT / ".browser-tests.log", "w+b")  # noqa: SIM115 - closed in finish
        self.process = subprocess.Popen(
            [str(a) for a in args], cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )

    def finish(self) -> None:
        """Wait for it, print what it printed; stop with its exit code on failure."""
        code = self.process.wait()
        self.log.seek(0)
        sys.stdout.write(self.log.read().decode("utf-8", "replace"))
        self.log.close()
        if code:
            print(
                f"failed with exit code {code}: {self.args[0]} ... {self.args[-1]}", file=sys.stderr
            )
            raise SystemExit(code)


def quickstart() -> None:
    """Run notebooks/01_quickstart.ipynb headless; write the executed notebook and its HTML."""
    started = time.perf_counter()
    install("notebook")
    sh(PY, "-m", "heta_notebook", "run-notebook", "notebooks/01_quickstart.ipynb", "-o", "out")
    print(f"quickstart done in {time.perf_counter() - started:.0f} s: open out/01_quickstart.html")


if __name__ == "__main__":
    commands = {"test": test, "quickstart": quickstart}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(f"usage: python3 tasks.py {{{'|'.join(commands)}}} [pytest args]")
    commands[sys.argv[1]]()
