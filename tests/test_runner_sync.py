"""Entry points: await in a running loop, run_benchmark in a script and inside a running loop
(a notebook), nest-asyncio2 only applied when needed (at the first sync call in a loop)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from heta_notebook import BenchmarkRunner, run_benchmark
from tests._runner_helpers import ListBenchmark, TopHit, ToyKB, make_cases

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> str:
    script = textwrap.dedent(code)
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_await_run_inside_a_running_loop():
    result = await BenchmarkRunner().run(
        benchmark=ListBenchmark(cases=make_cases(3), evaluators=(TopHit(),)),
        recipe=ToyKB(),
        progress=False,
    )
    assert len(result.report.case_results) == 6


def test_run_benchmark_in_plain_code_without_a_loop():
    result = run_benchmark(
        benchmark=ListBenchmark(cases=make_cases(3), evaluators=(TopHit(),)),
        recipe=ToyKB(),
        progress=False,
    )
    assert len(result.report.case_results) == 6
    assert result.report.score_summary["alpha.top_hit"] == 1.0


def test_import_does_not_patch_asyncio_and_sync_entry_works_inside_a_running_loop():
    # A subprocess, so nothing else in the test session can have patched asyncio.
    out = _run(
        f"""
        import asyncio, sys
        sys.path.insert(0, {str(ROOT)!r})
        import heta_notebook, heta_notebook.runner
        assert not getattr(asyncio, "_nest_patched", False), "patched at import"
        from heta_notebook import BenchmarkRunner, run_benchmark
        from tests._runner_helpers import ListBenchmark, ToyKB, TopHit, make_cases

        async def cell():  # like a notebook cell: a loop is already running
            bench = ListBenchmark(cases=make_cases(3), evaluators=(TopHit(),))
            a = run_benchmark(benchmark=bench, recipe=ToyKB(), progress=False)
            b = BenchmarkRunner().run_sync(benchmark=bench, recipe=ToyKB(), progress=False)
            c = await BenchmarkRunner().run(benchmark=bench, recipe=ToyKB(), progress=False)
            return [len(x.report.case_results) for x in (a, b, c)]

        print(asyncio.run(cell()), getattr(asyncio, "_nest_patched", False))
        """
    )
    assert out.split() == ["[6,", "6,", "6]", "True"]  # patched at the first nested call


def test_entry_points_in_a_real_jupyter_kernel(tmp_path):
    """Top-level await and the sync entry, in an ipykernel (the running loop of a notebook)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cells = [
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from heta_notebook import BenchmarkRunner, run_benchmark, evaluate\n"
        "from tests._runner_helpers import ListBenchmark, ToyKB, TopHit, make_cases\n"
        "bench = ListBenchmark(cases=make_cases(3), evaluators=(TopHit(),))",
        "a = await BenchmarkRunner().run(benchmark=bench, recipe=ToyKB(), progress=False)",
        "b = run_benchmark(benchmark=bench, recipe=ToyKB(), progress=True)",
        "c = evaluate(lambda inputs: 'x', [{'inputs': {'query': 'q'}, 'ground_truth': {}}], progress=False)",
        "print(len(a.report.case_results), len(b.report.case_results), len(c.case_results))",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    output = notebook.cells[-1].outputs[0]["text"]
    assert output.split() == ["6", "6", "1"]
