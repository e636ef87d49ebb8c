"""Every example notebook, executed and exported as it is shared (``run-notebook``), stays
within 6 MB of HTML and carries plotly.js once, compressed (issue 34 / 38). The quickstart is
budgeted, and opened offline, by ``tests/browser/test_quickstart_html.py``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from heta_notebook.display._notebook import run_notebook
from tests._display_helpers import plotly_js_copies

pytestmark = pytest.mark.slow  # each notebook runs in its own kernel (~30-60 s)

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MAX_HTML_BYTES = 6_000_000
OTHERS = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb") if p.name != "01_quickstart.ipynb")


@pytest.mark.parametrize("name", OTHERS)
def test_exported_notebook_within_budget_with_one_plotly_js(name, tmp_path):
    ignore = shutil.ignore_patterns("_heta", "out", ".ipynb_checkpoints", "*.html")
    folder = shutil.copytree(NOTEBOOKS, tmp_path / "notebooks", ignore=ignore)
    run = run_notebook(folder / name, tmp_path / "out", timeout=600)
    html = run.html.read_text(encoding="utf-8")
    assert len(html.encode("utf-8")) <= MAX_HTML_BYTES, f"{name}: {len(html) / 1e6:.2f} MB"
    copies = plotly_js_copies(html)
    assert copies["raw"] == 0 and copies["compressed"] <= 1, copies
