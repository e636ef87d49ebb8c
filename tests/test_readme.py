"""Every ```python block of README.md and of every docs/*.md page runs as written, in order.

README.md's blocks share one namespace, as in one notebook. Each docs page continues from the
README's first look: its blocks run in order in a copy of the README's namespace (so ``runs``,
``report`` and ``comparison`` are there), independent of the other pages; pages added to
``docs/`` are picked up by the glob.

A block that needs what a test run does not have (an API key, a Ray cluster, a dataset that is
not shipped) starts with ``# README: skip (the reason)`` and is skipped with that reason. Each
top-level expression is rendered the way a notebook would show it (``_repr_html_`` of our
objects), so a README line that renders badly fails too. Blocks run in a temporary folder.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
SKIP = re.compile(r"^# README: skip \((?P<reason>[^)]+)\)")
FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

pytestmark = pytest.mark.slow  # runs Cranfield with the embedded KB a few times (~1 min)


def readme_blocks(page: Path = README) -> list[tuple[int, str]]:
    """(line number, source) of each python block of ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m[1]) for m in BLOCK.finditer(text)]


def page_name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def run_block(source: str, namespace: dict[str, Any], filename: str) -> None:
    """Run ``source`` statement by statement, awaiting top-level awaits and rendering values."""
    for statement in ast.parse(source, filename).body:
        if isinstance(statement, ast.Expr):
            code = compile(ast.Expression(statement.value), filename, "eval", flags=FLAGS)
        else:
            code = compile(ast.Module([statement], []), filename, "exec", flags=FLAGS)
        value = eval(code, namespace)
        if code.co_flags & inspect.CO_COROUTINE:
            value = asyncio.run(value)
        if isinstance(statement, ast.Expr):
            render(value)


def render(value: Any) -> None:
    """Show ``value`` as a notebook would: our objects' HTML, anything's repr."""
    if type(value).__module__.startswith("heta_notebook") and hasattr(value, "_repr_html_"):
        html = value._repr_html_()
        assert html is None or isinstance(html, str)
    repr(value)


@pytest.fixture(scope="module")
def namespaces() -> dict[str, dict[str, Any]]:
    """Per page, the names its blocks define: README's shared in order as in one notebook; a
    docs page's start as a copy of README's (made when its first block runs)."""
    return {"README.md": {"__name__": "__readme__"}}


FAILED: dict[str, list[int]] = {}  # per page, lines of blocks that failed: later ones skip


BLOCKS = readme_blocks()
DOC_BLOCKS = [(page_name(p), line, src) for p in PAGES for line, src in readme_blocks(p)]


def test_the_readme_has_python_blocks_and_skips_only_with_a_reason():
    assert len(BLOCKS) >= 3 and len(DOC_BLOCKS) >= 10
    for page, line, source in DOC_BLOCKS:
        first = source.splitlines()[0]
        assert not first.startswith("# README") or SKIP.match(first), f"{page}:{line}: {first}"


@pytest.mark.parametrize(
    ("page", "line", "source"), DOC_BLOCKS, ids=[f"{p}:{line}" for p, line, _ in DOC_BLOCKS]
)
def test_readme_block_runs(page, line, source, namespaces, tmp_path_factory, monkeypatch):
    skip = SKIP.match(source)
    if skip:
        pytest.skip(skip["reason"])
    for before in ("README.md", page):
        if FAILED.get(before):
            pytest.skip(f"an earlier block failed first ({before}:{FAILED[before][0]})")
    namespace = namespaces.setdefault(page, dict(namespaces["README.md"]))
    monkeypatch.chdir(tmp_path_factory.getbasetemp())  # one folder for every block
    try:
        run_block(source, namespace, f"{page}:{line}")
    except BaseException:
        FAILED.setdefault(page, []).append(line)
        raise
