"""Fixtures of the browser tests: Chromium (Debian's /usr/bin/chromium via Playwright).

Without Chromium, Playwright or JupyterLab the tests skip with the reason, except on CI
(CI=true), where they must run and therefore fail instead. Screenshots go to
``$HETA_SCREENS_DIR`` when set (for people looking at them), else to the test's tmp_path.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.browser._lab import CHROMIUM, CHROMIUM_ARGS, unavailable

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


@pytest.fixture
def notebooks_copy(tmp_path: Path) -> Path:
    """A private copy of notebooks/ (running a notebook writes stores and caches next to it)."""
    target = tmp_path / "notebooks"
    ignore = shutil.ignore_patterns("_heta", "out", ".ipynb_checkpoints", "*.html")
    shutil.copytree(NOTEBOOKS, target, ignore=ignore)
    return target
