"""Running the ```python blocks of README.md and docs/*.md (tests/test_readme.py and
tests/test_docs_blocks.py share these helpers).

A block that needs what a test run does not have (an API key, a Ray cluster, a dataset that is
not shipped) starts with ``# README: skip (the reason)`` and is skipped with that reason. Each
top-level expression is rendered the way a notebook would show it (``_repr_html_`` of our
objects), so a line that renders badly fails too.

A docs page that uses a name the README's blocks define (``runs``, ``report``, ...) without
defining it continues from the README's first look; every other page runs on its own. The two
kinds run in two test files, so pytest-xdist (``--dist loadfile``) spreads them over two
workers.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import inspect
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
SKIP = re.compile(r"^# README: skip \((?P<reason>[^)]+)\)")
FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

Block = tuple[str, int, str]  # page, line number, source


def page_blocks(page: Path) -> list[Block]:
    """(page name, line number, source) of each python block of ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    name = page.relative_to(ROOT).as_posix()
    return [(name, text.count("\n", 0, m.start()) + 2, m[1]) for m in BLOCK.finditer(text)]


def _names(blocks: list[Block]) -> tuple[set[str], set[str]]:
    """The names the blocks that run (not skipped) bind, and the names they read."""
    bound: set[str] = set()
    read: set[str] = set()
    for _, _, source in blocks:
        if SKIP.match(source):
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Name):
                (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
    return bound, read - {n for n in read if hasattr(builtins, n)}


README_BLOCKS = page_blocks(README)
_README_BOUND, _ = _names(README_BLOCKS)


def continues_from_readme(blocks: list[Block]) -> bool:
    """Whether a page's blocks read a name only the README's blocks define."""
    bound, read = _names(blocks)
    return bool((read - bound) & _README_BOUND)


DOCS = {page: page_blocks(page) for page in PAGES[1:]}
AFTER_README = [b for blocks in DOCS.values() if continues_from_readme(blocks) for b in blocks]
ON_THEIR_OWN = [b for blocks in DOCS.values() if not continues_from_readme(blocks) for b in blocks]


def block_id(block: Block) -> str:
    return f"{block[0]}:{block[1]}"


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
