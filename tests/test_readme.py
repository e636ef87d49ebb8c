"""Every ```python block of README.md runs as written, in order, in one namespace (as in one
notebook); so do the blocks of each docs/*.md page that continues from the README's first look
(it uses ``runs``, ``report`` or ``comparison``), in order, in a copy of the README's namespace.
The other docs pages run in tests/test_docs_blocks.py. Helpers and rules: tests/_doc_blocks.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests._doc_blocks import (
    AFTER_README,
    DOCS,
    ON_THEIR_OWN,
    README_BLOCKS,
    SKIP,
    block_id,
    run_block,
)

pytestmark = pytest.mark.slow  # runs Cranfield with the embedded KB a few times

BLOCKS = README_BLOCKS + AFTER_README
FAILED: dict[str, list[int]] = {}  # per page, lines of blocks that failed: later ones skip


@pytest.fixture(scope="module")
def namespaces() -> dict[str, dict[str, Any]]:
    """Per page, the names its blocks define: README's shared in order as in one notebook; a
    docs page's start as a copy of README's (made when its first block runs)."""
    return {"README.md": {"__name__": "__readme__"}}


def test_the_pages_have_python_blocks_and_skip_only_with_a_reason():
    every = README_BLOCKS + [b for blocks in DOCS.values() for b in blocks]
    assert len(README_BLOCKS) >= 3 and len(every) >= 10
    assert sorted(map(block_id, AFTER_README + ON_THEIR_OWN)) == sorted(
        block_id(b) for blocks in DOCS.values() for b in blocks
    )  # every docs block runs in exactly one of the two files
    for page, line, source in every:
        first = source.splitlines()[0]
        assert not first.startswith("# README") or SKIP.match(first), f"{page}:{line}: {first}"


@pytest.mark.parametrize(("page", "line", "source"), BLOCKS, ids=map(block_id, BLOCKS))
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
