"""In a real Jupyter kernel, sync ``evaluate()``/``run_benchmark()`` run on the kernel's loop:
a notebook-made ``httpx.AsyncClient`` works inside them and after them (nest-asyncio2)."""

from __future__ import annotations

import pytest

from tests._loop_notebook import DONE, AnswerServer, cells


def test_loop_bound_client_works_through_the_sync_entry_points(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    with AnswerServer() as server:
        notebook = nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_code_cell(c) for c in cells(server.url)]
        )
        nbclient.NotebookClient(
            notebook,
            timeout=120,
            kernel_name="python3",
            resources={"metadata": {"path": str(tmp_path)}},
        ).execute()
        requests = server.requests
    printed = "".join(o.get("text", "") for o in notebook.cells[-1].outputs)
    assert DONE in printed and "answer 1" in printed
    assert requests == 1 + 6 + 6 + 8  # warm-up, evaluate, run_benchmark, after
