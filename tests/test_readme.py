"""Every ```python block of README.md runs as written, in order, in one namespace.

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

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
SKIP = re.compile(r"^# README: skip \((?P<reason>[^)]+)\)")
FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

pytestmark = pytest.mark.slow  # runs Cranfield with the embedded KB a few times (~1 min)


def readme_blocks() -> list[tuple[int, str]]:
    """(line number, source) of each python block, in README order."""
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m[1]) for m in BLOCK.finditer(text)]


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
def namespace() -> dict[str, Any]:
    """The names the README's blocks define, shared in order as in one notebook."""
    return {"__name__": "__readme__"}


FAILED: list[int] = []  # lines of blocks that failed: later blocks skip, naming the first


BLOCKS = readme_blocks()


def test_the_readme_has_python_blocks_and_skips_only_with_a_reason():
    assert len(BLOCKS) >= 10
    for line, source in BLOCKS:
        first = source.splitlines()[0]
        assert not first.startswith("# README") or SKIP.match(first), f"README.md:{line}: {first}"


@pytest.mark.parametrize(("line", "source"), BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
def test_readme_block_runs(line, source, namespace, tmp_path_factory, monkeypatch):
    skip = SKIP.match(source)
    if skip:
        pytest.skip(skip["reason"])
    if FAILED:
        pytest.skip(f"an earlier block failed first (README.md:{FAILED[0]})")
    monkeypatch.chdir(tmp_path_factory.getbasetemp())  # one folder for every block
    try:
        run_block(source, namespace, f"README.md:{line}")
    except BaseException:
        FAILED.append(line)
        raise
