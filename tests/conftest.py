"""The order in which pytest-xdist hands test files to its workers (``python3 tasks.py test``).

With ``--dist loadfile`` a file runs whole on one worker. tasks.py turns xdist's own order off
(``--no-loadscope-reorder``: files with the most tests first, which sent the long files of one
or two tests, a Ray cluster or a kernel each, last) and this hook sends the files that take
longest first, the rest in collection order: the end of the run is many short files, spread
over the workers. The list is a scheduling hint only (measured with ``--durations``; a file
missing from it just runs later); a run on one process keeps pytest's own order.
"""

from __future__ import annotations

import os

import pytest

LONGEST_FIRST = (  # wall s per file, -n 3 beside the browser tests, quiet box, 2026-12-08
    "tests/test_runner_ray.py",  # a local Ray cluster, workers and a driver killed: ~160 s
    "tests/test_readme.py",
    "tests/test_bench_quick.py",
    "tests/test_misses_fast.py",
    "tests/test_notebook_guard.py",
    "tests/test_kb_array_results.py",
    "tests/test_reproducible.py",
    "tests/test_pytest_plugin.py",
    "tests/test_kb_deep_rank.py",
    "tests/test_display_explorer_data.py",
    "tests/test_snapshot_saves.py",
    "notebooks/03_saved_reports.ipynb",
    "notebooks/04_answers.ipynb",
    "notebooks/01_quickstart.ipynb",
    "tests/test_cli_run.py",
    "tests/test_stats_paired.py",
    "tests/test_clean_exit.py",
    "notebooks/05_your_system.ipynb",
    "tests/test_notebooks_export.py",
    "notebooks/08_no_labels.ipynb",
    "tests/test_docs_blocks.py",
    "notebooks/07_labels.ipynb",
    "tests/test_runner_stop.py",
    "notebooks/06_paper_tables.ipynb",
    "tests/test_store_checkpoints.py",
    "tests/test_runner_stop_kernel.py",
    "tests/test_http_client.py",
    "tests/test_testing.py",
    "tests/test_labels_corrected.py",
    "tests/test_nbval_kernel.py",
    "tests/test_trec.py",
    "tests/test_fuzz_reports.py",
)


def file_rank(nodeid: str) -> int:
    """Where a test's file goes: its place in ``LONGEST_FIRST``, else after all of them."""
    path = nodeid.split("::", 1)[0]
    return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker: the longest files first (a stable sort: the other files, and
    the tests inside every file, keep their order)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: file_rank(item.nodeid))
