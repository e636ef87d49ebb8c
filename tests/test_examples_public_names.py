"""Examples and notebooks use public names only: importing a private module of the package
(``heta_notebook._x`` or ``heta_notebook.pkg._x``) in one of them fails this test."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def private_imports(source: str) -> list[str]:
    """The private ``heta_notebook`` modules ``source`` imports (``import`` or ``from``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "heta_notebook" and any(p.startswith("_") for p in parts[1:]):
                found.append(name)
    return found


def _notebook_code(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    lines = []
    for cell in cells:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            lines += [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


SOURCES = sorted((ROOT / "examples").rglob("*.py")) + sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_and_notebooks_import_public_names_only(path: Path) -> None:
    source = _notebook_code(path) if path.suffix == ".ipynb" else path.read_text()
    assert private_imports(source) == [], f"{path.relative_to(ROOT)} imports private modules"


def test_the_rule_catches_both_private_forms() -> None:
    source = (
        "import heta_notebook._util.loop\n"
        "from heta_notebook.benchmarks._beir import cranfield_folder\n"
        "from heta_notebook import compare\n"
        "from heta_notebook.testing import assert_scores\n"
    )
    assert private_imports(source) == ["heta_notebook._util.loop", "heta_notebook.benchmarks._beir"]
