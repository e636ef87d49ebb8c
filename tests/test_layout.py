"""The package layout keeps its rules: checked on the import graph (AST), so they stay.

Data goes one way (inputs → run → report → analysis → display). One table (``ALLOWED``, the
same as docs/architecture.md's, checked) lists what every package may import, lazy export
tables included; anything else is a declared lazy door (inside a function or a lazy export,
listed in ``DOORS``). The nevers (``NEVER``), the
largest import cycle and who imports pyarrow are checked too; internal modules are
``_name.py``; every module says what it holds.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "heta_notebook"

# Public module names outside a package's __init__ (everything else is ``_name.py``).
PUBLIC_MODULES = {
    "heta_notebook",
    "heta_notebook.__main__",
    "heta_notebook.cli",
    "heta_notebook.testing.pytest_plugin",  # pytest's entry point names it
}
# Inside ``_util/`` (a private package) names need no underscore.
PRIVATE_PACKAGES = ("heta_notebook._util.",)

# The library's packages, bottom up: what "every package" means below and in the docs.
PACKAGES = (
    "_util", "schema", "reports", "evaluators", "benchmarks", "labels", "kb", "systems",
    "integrations", "runner", "analysis", "display", "testing",
)  # fmt: skip

# THE import rules, one table (docs/architecture.md shows the same, checked below): for every
# package, the packages it may import (at module level or lazily; a package's lazy export
# table, ``_EXPORTS``, counts as lazy imports of the modules it names). Anything else is an
# upward import and must be a declared lazy door below. A package missing from this table
# fails the test.
ALLOWED: dict[str, set[str]] = {
    "_util": set(),
    "schema": {"_util"},
    "reports": {"_util", "schema"},
    "evaluators": {"_util", "schema", "reports"},
    "benchmarks": {"_util", "schema", "evaluators"},
    "labels": {"_util", "schema", "reports", "evaluators", "benchmarks"},
    "kb": {"_util", "schema", "reports", "evaluators"},
    "systems": {"_util", "schema", "evaluators", "kb"},
    "integrations": {"_util", "schema", "reports", "evaluators", "benchmarks", "kb", "systems"},
    "runner": {
        "_util", "schema", "reports", "evaluators", "labels", "benchmarks", "kb", "systems",
        "integrations",
    },
    "analysis": {"_util", "schema", "reports", "evaluators", "labels", "benchmarks", "systems"},
    "display": {"_util", "schema", "reports", "evaluators", "labels", "benchmarks", "analysis"},
    "testing": {"_util", "schema", "reports", "evaluators", "analysis", "display"},
    "cli": set(PACKAGES),
    "__main__": {"cli"},
    "heta_notebook": set(PACKAGES),  # the public API: each name loaded lazily from its module
}  # fmt: skip

# Declared lazy doors: a lower box reaching a higher one, only inside a function body (or
# through a package's lazy export table).
DOORS = {
    # names the last version exported from heta_notebook.schema, kept there (lazily) since
    # their homes moved to reports/
    ("heta_notebook.schema", "heta_notebook.reports._checkpoint"),  # CheckpointWarning
    ("heta_notebook.schema", "heta_notebook.reports._tables"),  # CorruptReportError
    ("heta_notebook.schema", "heta_notebook.reports._heta_json"),  # from_heta_report
    # a report renders itself, builds its frames and opens/writes its stored forms on first use
    ("heta_notebook.schema._records", "heta_notebook.analysis._frames"),
    ("heta_notebook.schema._records", "heta_notebook.display._card"),
    ("heta_notebook.schema._records", "heta_notebook.display._figures"),
    ("heta_notebook.schema._records", "heta_notebook.display._explorer"),
    ("heta_notebook.schema._records", "heta_notebook.display._export"),
    ("heta_notebook.schema._records", "heta_notebook.display._tables"),
    ("heta_notebook.schema._records", "heta_notebook.reports._stored"),
    ("heta_notebook.schema._records", "heta_notebook.reports._resolve"),
    ("heta_notebook.schema._records", "heta_notebook.reports._folder"),
    ("heta_notebook.schema._records", "heta_notebook.benchmarks._trec"),  # report.to_trec()
    # a comparison and the multi-benchmark views render and format themselves
    ("heta_notebook.analysis._compare", "heta_notebook.display._comparison_figures"),
    ("heta_notebook.analysis._compare", "heta_notebook.display._comparison_explorer"),
    ("heta_notebook.analysis._compare", "heta_notebook.display._comparison"),
    ("heta_notebook.analysis._compare", "heta_notebook.display._tables"),
    ("heta_notebook.analysis._compare", "heta_notebook.display._export"),  # to_html: its page
    ("heta_notebook.analysis._benchmarks", "heta_notebook.display._tables"),
    ("heta_notebook.analysis._benchmarks", "heta_notebook.display._benchmarks"),
    # the public load_benchmark accepts heta-framework benchmarks (imported only when seen)
    ("heta_notebook.benchmarks._loader", "heta_notebook.integrations.heta._common"),
    ("heta_notebook.benchmarks._loader", "heta_notebook.integrations.heta"),
    # a run result compares itself
    ("heta_notebook.runner._result", "heta_notebook.analysis._compare"),
    # a generated benchmark opens its review widget (benchmark.review())
    ("heta_notebook.benchmarks._generate", "heta_notebook.display._review"),
    # validate_benchmark(generated, reference, systems=...) runs the systems it is given
    # when handed benchmarks rather than RunCollections already run
    ("heta_notebook.analysis._validate", "heta_notebook.runner"),
    # a comparison's pairing notes read which settings each embedded-recipe mode reads
    ("heta_notebook.analysis._pairing", "heta_notebook.kb._recipe"),
    # a run in a notebook shows its live card
    ("heta_notebook.runner._progress", "heta_notebook.display._live_card"),
}

# Packages that never import the runner or an integration, not even through a door but
# those declared above (DESIGN.md's nevers).
NEVER = {
    box: {"runner", "integrations"}
    for box in ("schema", "reports", "evaluators", "labels", "benchmarks", "kb")
}
NEVER["analysis"] = {"runner", "integrations", "display"}  # display: only through doors


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
    if path.name == "__init__.py":
        found += _lazy_exports(name, tree)
    return found


def _lazy_exports(name: str, tree: ast.Module) -> list[Import]:
    """A package's lazy export table (``_EXPORTS = {"Name": "heta_notebook.x._y", ...}``, served
    by ``_util.lazy.lazy_exports`` or the root's ``__getattr__``): each module it names is
    imported when the name is first used, so it counts as a lazy import of that module."""
    found = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        named = any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets)
        if named and isinstance(node.value, ast.Dict):
            for value in node.value.values:
                if isinstance(value, ast.Constant) and str(value.value).startswith("heta_notebook"):
                    found.append(Import(name, value.value, True, False, value.lineno))
    return found


@functools.cache
def imports() -> list[Import]:
    """Every import of the package (parsed when a test first asks: both pytest-xdist workers
    collect this file, only one runs it)."""
    return [imp for name, path in MODULES.items() for imp in _imports(name, path)]


def _package(module: str) -> str:
    """The package a module belongs to (``cli``, ``__main__`` and the root count as one)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _arrows() -> list[Import]:
    return [i for i in imports() if not i.type_only and _package(i.source) != _package(i.target)]


def test_every_package_is_in_the_table() -> None:
    missing = sorted({_package(m) for m in MODULES} - set(ALLOWED))
    assert not missing, f"packages without a row in ALLOWED: {missing}"


def test_every_import_follows_the_table() -> None:
    bad = [
        f"{i.source}:{i.line} imports {i.target} (lazy={i.lazy})"
        for i in _arrows()
        if _package(i.target) not in ALLOWED[_package(i.source)]
        and not ((i.source, i.target) in DOORS and i.lazy)
    ]
    assert not bad, "imports outside the table and its declared lazy doors:\n" + "\n".join(bad)


def test_the_nevers_hold() -> None:
    bad = [
        f"{i.source}:{i.line} imports {i.target}"
        for i in _arrows()
        if _package(i.target) in NEVER.get(_package(i.source), set())
        and (i.source, i.target) not in DOORS
    ]
    assert not bad, "a never is broken:\n" + "\n".join(bad)


def test_doors_are_lazy_and_still_used() -> None:
    """Every door is still imported when the code runs, and only lazily (an import for type
    checkers alone never runs)."""
    running = [i for i in imports() if not i.type_only]
    used = {(i.source, i.target) for i in running}
    assert used >= DOORS, f"declared doors no longer used: {sorted(DOORS - used)}"
    eager = [
        f"{i.source}:{i.line}" for i in running if (i.source, i.target) in DOORS and not i.lazy
    ]
    assert not eager, f"a door imported at module level: {eager}"


def _docs_table() -> tuple[dict[str, set[str]], set[tuple[str, str]]]:
    """The import table and the doors as docs/architecture.md shows them."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## The import table")[1].split("\n## ")[0]
    allowed: dict[str, set[str]] = {}
    doors: set[tuple[str, str]] = set()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or not cells[0].startswith("`"):
            continue
        names = set(re.findall(r"`([^`]+)`", cells[1]))
        if len(cells) == 2:
            allowed[cells[0].strip("`")] = set(PACKAGES) if cells[1] == "every package" else names
        else:
            doors |= {(f"heta_notebook.{cells[0].strip('`')}", f"heta_notebook.{n}") for n in names}
    return allowed, doors


def test_the_docs_show_the_same_table() -> None:
    allowed, doors = _docs_table()
    assert allowed == ALLOWED, "docs/architecture.md's import table differs from ALLOWED"
    assert doors == DOORS, (
        f"doors only in the docs: {sorted(doors - DOORS)}; only here: {sorted(DOORS - doors)}"
    )


def largest_cycle() -> list[str]:
    """The largest strongly connected set of modules, type-only imports and doors left out."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for i in imports():
        if not i.type_only and (i.source, i.target) not in DOORS and i.target in graph:
            graph[i.source].add(i.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    best: list[str] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        nonlocal best
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            best = max(best, sorted(component), key=len)

    for node in graph:
        if node not in index:
            visit(node)
    return best


def test_no_large_import_cycle() -> None:
    cycle = largest_cycle()
    assert len(cycle) <= 9, f"an import cycle of {len(cycle)} modules: {cycle}"


def test_only_reports_imports_pyarrow() -> None:
    importers = sorted(
        name
        for name, path in MODULES.items()
        if any(
            isinstance(n, (ast.Import, ast.ImportFrom))
            and any(
                (n.module if isinstance(n, ast.ImportFrom) else a.name or "").startswith("pyarrow")
                for a in n.names
            )
            for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )
    outside = [name for name in importers if _package(name) != "reports"]
    assert not outside, f"pyarrow imported outside reports/: {outside}"


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
    for old in ("run", "experiments", "sync", "columnar", "numbers", "chat", "paths", "store"):
        assert f"heta_notebook.{old}" not in MODULES
    for old in ("_columnar", "_lazy_results", "_heta_json"):  # moved to reports/, no alias
        assert f"heta_notebook.schema.{old}" not in MODULES


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
    assert spelled == ["heta_notebook.reports._run"], spelled


def test_subpackages_export_what_they_say() -> None:
    import importlib

    for name, path in MODULES.items():
        if path.name != "__init__.py" or name == "heta_notebook":
            continue
        package = importlib.import_module(name)
        for export in getattr(package, "__all__", ()):
            assert getattr(package, export) is not None, f"{name}.{export}"
