"""Everything a notebook imports from ``heta_notebook`` exists, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import heta_notebook


def test_every_exported_name_resolves() -> None:
    missing = []
    for name in heta_notebook.__all__:
        try:
            getattr(heta_notebook, name)
        except Exception as exc:  # noqa: BLE001 - report every broken name at once
            missing.append(f"{name}: {exc!r}")
    assert missing == []


def test_import_does_not_pull_in_display_libraries_or_patch_asyncio() -> None:
    code = (
        "import sys, asyncio, heta_notebook;"
        "heavy = [m for m in ('plotly', 'ipywidgets', 'nest_asyncio', 'heta_framework') if m in sys.modules];"
        "print(heavy, hasattr(asyncio, '_nest_patched'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] False"
