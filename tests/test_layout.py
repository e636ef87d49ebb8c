"""The package layout keeps its rules: checked on the import graph (AST), so they stay.

Data goes one way (inputs → run → report → analysis → display). ``_util/`` imports nothing
else of ours; schema, evaluators, benchmarks and the KB never import the runner; analysis
imports no integration; upward imports exist only as declared lazy doors (inside a
function, listed below); internal modules are ``_name.py``; every module says what it holds.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "heta_notebook"

# Public module names outside a package's __init__ (everything else is ``_name.py``).
PUBLIC_MODULES = {
    "heta_notebook",
    "heta_notebook.__main__",
    "heta_notebook.cli",
    "heta_notebook.store",
    "heta_notebook.testing.pytest_plugin",  # pytest's entry point names it
}
# Inside ``_util/`` (a private package) names need no underscore.
PRIVATE_PACKAGES = ("heta_notebook._util.",)

# Declared lazy doors: a lower box reaching a higher one, only inside a function body.
DOORS = {
    # a report renders itself and builds its frames on first use
    ("heta_notebook.schema._records", "heta_notebook.analysis._frames"),
    ("heta_notebook.schema._records", "heta_notebook.display._card"),
    ("heta_notebook.schema._records", "heta_notebook.display._figures"),
    ("heta_notebook.schema._records", "heta_notebook.display._explorer"),
    ("heta_notebook.schema._records", "heta_notebook.display._export"),
    ("heta_notebook.schema._records", "heta_notebook.schema._columnar"),
    # a comparison renders itself
    ("heta_notebook.analysis._compare", "heta_notebook.display._comparison_figures"),
    ("heta_notebook.analysis._compare", "heta_notebook.display._comparison_explorer"),
    ("heta_notebook.analysis._compare", "heta_notebook.display._comparison"),
    # paper tables (issue 28): summaries, comparisons and multi-benchmark views format themselves
    ("heta_notebook.schema._records", "heta_notebook.display._tables"),
    ("heta_notebook.analysis._compare", "heta_notebook.display._tables"),
    ("heta_notebook.analysis._benchmarks", "heta_notebook.display._tables"),
    ("heta_notebook.analysis._benchmarks", "heta_notebook.display._benchmarks"),
    ("heta_notebook.analysis._compare", "heta_notebook.display._export"),  # to_html: its page
}


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported module (a name imported from a package resolves to its module)
    lazy: bool  # inside a function body
    type_only: bool  # under ``if TYPE_CHECKING:``
    line: int


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(module: str, name: str) -> str:
    full = f"{module}.{name}"
    return full if full in MODULES else module


def _imports(name: str, path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[Import] = []

    def walk(node: ast.AST, lazy: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            child_lazy = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            child_type = type_only or (
                isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            )
            if isinstance(child, ast.ImportFrom) and (child.module or "").startswith(
                "heta_notebook"
            ):
                for alias in child.names:
                    target = _resolve(child.module or "", alias.name)
                    found.append(Import(name, target, lazy, type_only, child.lineno))
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("heta_notebook"):
                        found.append(Import(name, alias.name, lazy, type_only, child.lineno))
            walk(child, child_lazy, child_type)

    walk(tree, False, False)
    return found


IMPORTS = [imp for name, path in MODULES.items() for imp in _imports(name, path)]


def _box(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _violations(source_box: str, target_boxes: tuple[str, ...]) -> list[str]:
    return [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if _box(imp.source) == source_box and _box(imp.target) in target_boxes
    ]


def test_util_imports_nothing_else_of_ours() -> None:
    bad = [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if _box(imp.source) == "heta_notebook._util" and _box(imp.target) != "heta_notebook._util"
    ]
    assert not bad, "_util/ must import nothing else of ours:\n" + "\n".join(bad)


@pytest.mark.parametrize("box", ["kb", "evaluators", "benchmarks", "schema"])
def test_lower_layers_never_import_the_runner(box: str) -> None:
    bad = _violations(f"heta_notebook.{box}", ("heta_notebook.runner",))
    assert not bad, f"{box}/ must not import the runner:\n" + "\n".join(bad)


def test_analysis_imports_no_integration() -> None:
    bad = _violations("heta_notebook.analysis", ("heta_notebook.integrations",))
    assert not bad, "analysis/ must not import integrations:\n" + "\n".join(bad)


UPWARD = {
    "heta_notebook.schema": ("heta_notebook.analysis", "heta_notebook.display"),
    "heta_notebook.evaluators": ("heta_notebook.analysis", "heta_notebook.display"),
    "heta_notebook.analysis": ("heta_notebook.display",),
}


def test_upward_imports_are_declared_lazy_doors() -> None:
    bad = []
    for imp in IMPORTS:
        upward = _box(imp.target) in UPWARD.get(_box(imp.source), ())
        if upward and ((imp.source, imp.target) not in DOORS or not imp.lazy):
            bad.append(f"{imp.source}:{imp.line} imports {imp.target} (lazy={imp.lazy})")
    assert not bad, "undeclared upward imports:\n" + "\n".join(bad)


def test_doors_are_still_used() -> None:
    used = {(imp.source, imp.target) for imp in IMPORTS}
    assert used >= DOORS, f"declared doors no longer used: {sorted(DOORS - used)}"


def test_internal_modules_are_private() -> None:
    public = [
        name
        for name, path in MODULES.items()
        if path.name != "__init__.py"
        and not path.stem.startswith("_")
        and name not in PUBLIC_MODULES
        and not name.startswith(PRIVATE_PACKAGES)
    ]
    assert not public, f"internal modules must be _name.py: {public}"


def test_every_module_says_what_it_holds() -> None:
    missing = [
        name for name, path in MODULES.items() if not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert not missing, f"modules without a docstring: {missing}"


def test_deprecated_aliases_are_gone() -> None:
    for old in ("run", "experiments", "sync", "columnar", "numbers", "chat", "paths"):
        assert f"heta_notebook.{old}" not in MODULES


def test_the_report_folder_is_spelled_once() -> None:
    """Only schema.report_folder names a report's folder ("evaluations")."""
    spelled = [
        f"{name}"
        for name, path in MODULES.items()
        if '"evaluations"' in path.read_text(encoding="utf-8")
    ]
    assert spelled == ["heta_notebook.schema._records"], spelled


def test_the_fingerprint_check_exists_once() -> None:
    spelled = [
        name
        for name, path in MODULES.items()
        if "was run with other settings" in path.read_text(encoding="utf-8")
    ]
    assert spelled == ["heta_notebook.store"], spelled


def test_subpackages_export_what_they_say() -> None:
    import importlib

    for name, path in MODULES.items():
        if path.name != "__init__.py" or name == "heta_notebook":
            continue
        package = importlib.import_module(name)
        for export in getattr(package, "__all__", ()):
            assert getattr(package, export) is not None, f"{name}.{export}"
