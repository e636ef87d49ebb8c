"""Fixtures of the browser tests: Chromium (Debian's /usr/bin/chromium via Playwright).

Without Chromium, Playwright or JupyterLab the tests skip with the reason, except on CI
(CI=true), where they must run and therefore fail instead. Screenshots go to
``$HETA_SCREENS_DIR`` when set (for people looking at them), else to the test's tmp_path.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser._lab import CHROMIUM, CHROMIUM_ARGS, LabServer, unavailable

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"


@pytest.fixture(scope="session")
def chromium_browser():
    """A headless Chromium, launched once per session and always closed."""
    if not CHROMIUM.exists():
        unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright (python package) is not installed: pip install -e '.[test]'")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def screens(tmp_path: Path) -> Path:
    """Where this test writes its screenshots."""
    folder = Path(os.environ.get("HETA_SCREENS_DIR") or tmp_path / "screens")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def copy_notebooks(target: Path) -> Path:
    """A private copy of notebooks/ (running a notebook writes stores and caches next to it)."""
    ignore = shutil.ignore_patterns("_heta", "out", ".ipynb_checkpoints", "*.html")
    shutil.copytree(NOTEBOOKS, target, ignore=ignore)
    return target


@pytest.fixture
def notebooks_copy(tmp_path: Path) -> Path:
    """A private copy of notebooks/ for one test."""
    return copy_notebooks(tmp_path / "notebooks")


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory, chromium_browser: Any) -> Iterator[LabServer]:
    """One JupyterLab server for the session (a start costs ~5 s), rooted at a private copy
    of notebooks/; each test opens its own notebook, and so its own kernel."""
    if importlib.util.find_spec("jupyterlab") is None:
        unavailable("jupyterlab is not installed: pip install -e '.[test]'")
    root = tmp_path_factory.mktemp("lab")
    server = LabServer(copy_notebooks(root / "notebooks"), root / "lab-home")
    server.start()
    try:
        yield server
    finally:
        server.stop()
