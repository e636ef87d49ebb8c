"""The TYPE_CHECKING block of heta_notebook/__init__.py lists every lazy export (issue #16),
and the renamed ``mode`` still works with a DeprecationWarning."""

from __future__ import annotations

import ast
import importlib
import warnings
from pathlib import Path

import pytest

import heta_notebook


def _type_checking_imports() -> dict[str, tuple[str, str]]:
    """Public name -> (module, name in module) from the ``if TYPE_CHECKING:`` block."""
    tree = ast.parse(Path(heta_notebook.__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(block):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module, alias.name)
    return found


def test_type_checking_block_equals_the_lazy_exports():
    static = _type_checking_imports()
    assert set(static) == set(heta_notebook._EXPORTS)
    for name, (module, _) in static.items():
        assert heta_notebook._EXPORTS[name] == module, name


def test_every_static_import_names_the_object_exported_at_run_time():
    for name, (module, attribute) in _type_checking_imports().items():
        assert getattr(importlib.import_module(module), attribute) is getattr(heta_notebook, name)


def test_mode_is_renamed_with_a_deprecated_alias():
    from heta_notebook import EvaluationScore, most_common

    scores = [EvaluationScore(name="s", value=v) for v in (1.0, 2.0, 2.0)]
    assert most_common(scores) == 2.0
    assert "mode" not in heta_notebook.__all__ and "most_common" in heta_notebook.__all__
    with pytest.warns(DeprecationWarning, match="use heta_notebook.most_common"):
        old = heta_notebook.mode
    assert old is most_common
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from heta_notebook import most_common as again  # noqa: F401 - no warning for the new name


def test_dead_code_is_gone():
    from heta_notebook import schema
    from heta_notebook.analysis import _compare as compare
    from heta_notebook.runner import _scoring

    assert not hasattr(schema, "dumps")
    assert not hasattr(compare, "_order_rows")
    assert not hasattr(_scoring.CaseScorer, "score")


ROOT = Path(__file__).resolve().parent.parent


def _user_code() -> dict[str, str]:
    """README code, notebook cells and example scripts: what a newcomer copies."""
    import json

    texts = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    for path in sorted((ROOT / "examples").glob("*.py")):
        texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        texts[str(path.relative_to(ROOT))] = "\n".join("".join(c["source"]) for c in cells)
    return texts


def test_readme_notebooks_and_examples_import_from_the_top_level_only():
    import re

    # heta_notebook.testing is the one public submodule (like pandas.testing): it is for test
    # files, and importing it at the top level would load pytest into every notebook.
    deep = re.compile(
        r"^\s*(from heta_notebook\.(?!testing\b)\w+|import heta_notebook\.(?!testing\b)\w+)",
        re.MULTILINE,
    )
    offenders = {name: deep.findall(text) for name, text in _user_code().items()}
    assert {name: found for name, found in offenders.items() if found} == {}
