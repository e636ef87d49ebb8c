"""The notebook's stop button (a kernel interrupt) during a built-in-KB run in a real kernel:
the cell returns a partial report, saved, that resumes to the full run.

Not timed: the run is stopped once its first case is checkpointed, and must end with fewer
cases than the benchmark has (with queries on the loop, the stop waited for all of them).
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from pathlib import Path

import pytest

from heta_notebook import ReportStore

ROOT = Path(__file__).resolve().parents[1]


def _cells(store: Path) -> list[str]:
    return [
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "import warnings; warnings.simplefilter('ignore', RuntimeWarning)\n"
        "from heta_notebook import BeirBenchmark, BenchmarkRunConfig, Recipe, ReportStore\n"
        "from heta_notebook import run_benchmark\n"
        f"store = ReportStore({str(store)!r})\n"
        "config = BenchmarkRunConfig(report_id='stopped', checkpoint_every=1)\n"
        "options = dict(benchmark=BeirBenchmark.cranfield(), recipe=Recipe(name='hybrid'),\n"
        "               knowledge_base_name='cran', store=store, config=config)",
        "stopped = run_benchmark(**options)  # the test presses stop once cases are saved",
        "saved = store.load('cran', 'stopped')\n"
        "print('STOPPED', len(stopped.report.case_results), stopped.report.is_partial,\n"
        "      saved.is_partial, len(saved.case_results))",
        "resumed = run_benchmark(**options, resume=True)\n"
        "print('RESUMED', len(resumed.report.case_results), resumed.report.is_partial,\n"
        "      resumed.report.metadata['resumed'])",
    ]


def _press_stop_when_cases_are_saved(client, store: Path, pressed: list[float]) -> None:
    while not ReportStore(store).checkpoint_keys("cran", "stopped"):
        time.sleep(0.01)  # polling the checkpoint the run writes, not guessing a duration
    interrupt = client.km.interrupt_kernel()  # what JupyterLab's stop button asks for
    if inspect.isawaitable(interrupt):  # the async manager nbclient made, from this thread
        asyncio.run(_awaited(interrupt))
    pressed.append(time.monotonic())


async def _awaited(awaitable):
    return await awaitable


def _stdout(cell) -> str:
    """What a cell printed (warnings go to stderr)."""
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")


@pytest.mark.slow
def test_stop_button_ends_a_builtin_kb_run_with_a_saved_partial_report(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    store = tmp_path / "store"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in _cells(store)])
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    pressed: list[float] = []
    with client.setup_kernel():
        presser = threading.Thread(
            target=_press_stop_when_cases_are_saved,
            args=(client, store, pressed),
            daemon=True,
        )
        presser.start()
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
    assert pressed, "the stop button was never pressed"
    stopped = _stdout(notebook.cells[2]).split()
    assert stopped[0] == "STOPPED" and stopped[2:4] == ["True", "True"]
    done = int(stopped[1])
    assert 0 < done < 675 and int(stopped[4]) == done  # partial, and saved as such
    resumed = _stdout(notebook.cells[3]).split()
    assert resumed == ["RESUMED", "675", "False", str(done)]
