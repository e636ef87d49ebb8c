"""Every ```python block of the docs/*.md pages that stand on their own (they use no name of
the README's first look) runs as written, in order, in one namespace per page. The pages that
continue from the README run in tests/test_readme.py; helpers: tests/_doc_blocks.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests._doc_blocks import ON_THEIR_OWN, SKIP, block_id, run_block

pytestmark = pytest.mark.slow  # a few small Cranfield runs

FAILED: dict[str, list[int]] = {}  # per page, lines of blocks that failed: later ones skip


@pytest.fixture(scope="module")
def namespaces() -> dict[str, dict[str, Any]]:
    """Per page, the names its blocks define, shared in order as in one notebook."""
    return {}


@pytest.mark.parametrize(("page", "line", "source"), ON_THEIR_OWN, ids=map(block_id, ON_THEIR_OWN))
def test_docs_block_runs(page, line, source, namespaces, tmp_path_factory, monkeypatch):
    skip = SKIP.match(source)
    if skip:
        pytest.skip(skip["reason"])
    if FAILED.get(page):
        pytest.skip(f"an earlier block failed first ({page}:{FAILED[page][0]})")
    if page not in namespaces:  # a page's first block: its namespace and its folder
        namespaces[page] = {"__name__": "__docs__", "__folder__": tmp_path_factory.mktemp("docs")}
    namespace = namespaces[page]
    monkeypatch.chdir(namespace["__folder__"])  # one folder for a page's blocks
    try:
        run_block(source, namespace, f"{page}:{line}")
    except BaseException:
        FAILED.setdefault(page, []).append(line)
        raise
