"""An executed notebook exported by nbconvert shows the explorer's static fallback.

nbconvert's HTML export renders only the first mimetype of an output in its priority order
(widget views first), so the readable fallback must be an output of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
nbconvert = pytest.importorskip("nbconvert")

ROOT = Path(__file__).resolve().parents[1]


def test_exported_notebook_shows_card_and_explorer_fallback(tmp_path):
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from tests._display_helpers import make_report\n"
        "report = make_report(6)\n"
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(code + "report"),
        nbformat.v4.new_code_cell("report.explore(page_size=5)"),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    try:
        nbclient.NotebookClient(
            nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
        ).execute()
    except Exception as exc:  # noqa: BLE001 - no kernel available is an environment issue
        if "No such kernel" in str(exc):
            pytest.skip(f"no python3 kernel for {sys.executable}")
        raise
    outputs = nb.cells[1].outputs
    kinds = [sorted(o.get("data", {})) for o in outputs]
    assert any("text/html" in k and len(k) == 2 for k in kinds), kinds  # the fallback output
    assert any("application/vnd.jupyter.widget-view+json" in k for k in kinds), kinds
    html, _ = nbconvert.HTMLExporter(template_name="lab").from_notebook_node(nb)
    assert "hn-explorer-fallback" in html and "Case explorer (static view" in html
    assert "Expected evidence" in html  # the selected case's detail is readable offline
    assert "Evaluation report · bm25-chunks" in html  # the card
