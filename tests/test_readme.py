"""Every ```python block of README.md runs as written, in order, in one namespace (as in one
notebook); so do the blocks of each docs/*.md page that continues from the README's first look
(it uses ``runs``, ``report`` or ``comparison``), in order, in a copy of the README's namespace.
The other docs pages run in tests/test_docs_blocks.py. Helpers and rules: tests/_doc_blocks.py.

The README keeps its promises: it reads in five minutes (at most 300 lines), and its first block
(a default run) raises no warning of ours: ``DepthWarning`` and the package's other warning
classes are errors there, and any other warning the package raises fails the test too.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

import heta_notebook
from heta_notebook import BenchmarkWarning, DepthWarning, SaturationWarning, UnjudgedWarning
from heta_notebook.reports import CheckpointWarning, ReportWarning
from tests._doc_blocks import (
    AFTER_README,
    DOCS,
    ON_THEIR_OWN,
    README,
    README_BLOCKS,
    SKIP,
    block_id,
    run_block,
)

OURS = (DepthWarning, BenchmarkWarning, CheckpointWarning, ReportWarning, SaturationWarning)
OURS += (UnjudgedWarning,)
PACKAGE = str(Path(heta_notebook.__file__).parent)

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


def test_the_readme_reads_in_five_minutes():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; the manual lives in docs/"


@pytest.mark.slow  # runs Cranfield with the embedded KB a few times
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
        if (page, line, source) == README_BLOCKS[0]:
            _run_without_our_warnings(source, namespace, f"{page}:{line}")
        else:
            run_block(source, namespace, f"{page}:{line}")
    except BaseException:
        FAILED.setdefault(page, []).append(line)
        raise


def _run_without_our_warnings(source: str, namespace: dict[str, Any], filename: str) -> None:
    """Run a block with the package's warning classes as errors; fail on any other warning the
    package raises (from inside it, or pointing at the block's line as ours do)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for category in OURS:
            warnings.simplefilter("error", category)
        run_block(source, namespace, filename)
    ours = [
        f"{w.category.__name__} at {w.filename}:{w.lineno}: {w.message}"
        for w in caught
        if w.filename.startswith(filename) or w.filename.startswith(PACKAGE)
    ]
    assert ours == [], "the README's first block warns"
