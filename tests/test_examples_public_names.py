"""Examples, notebooks and the python blocks of README.md and docs/*.md use public names only:
importing a private module or name of the package (``heta_notebook._x``,
``heta_notebook.pkg._x``, ``from heta_notebook.pkg import _x``) in one of them fails this test."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests._doc_blocks import PAGES, block_id, page_blocks

ROOT = Path(__file__).resolve().parents[1]


def private_imports(source: str) -> list[str]:
    """The private ``heta_notebook`` modules and names ``source`` imports, dotted in full
    (``import a._b``; ``from a import _b`` and ``from a._b import c`` alike); dunders such as
    ``__version__`` are public."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "heta_notebook" and any(_private(p) for p in parts[1:]):
                found.append(name)
    return found


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


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


BLOCKS = [block for page in PAGES for block in page_blocks(page)]


@pytest.mark.parametrize("block", BLOCKS, ids=block_id)
def test_readme_and_docs_blocks_import_public_names_only(block) -> None:
    """Every python block a reader may copy, skipped ones (a Ray cluster, an API key) too."""
    assert private_imports(block[2]) == [], f"{block_id(block)} imports private names"


def test_the_rule_catches_private_modules_and_private_names() -> None:
    source = (
        "import heta_notebook._util.loop\n"
        "from heta_notebook.benchmarks._beir import cranfield_folder\n"
        "from heta_notebook.benchmarks import BeirBenchmark, _beir\n"
        "from heta_notebook import compare, __version__\n"
        "from heta_notebook.testing import assert_scores\n"
        "def later():\n"
        "    from heta_notebook._util import redaction\n"
    )
    assert private_imports(source) == [
        "heta_notebook._util.loop",
        "heta_notebook.benchmarks._beir.cranfield_folder",
        "heta_notebook.benchmarks._beir",
        "heta_notebook._util.redaction",
    ]
