"""The quick performance check (``bench/quick.py``) in the test command: each hot path beside
its peer or floor in the same run, failing only past 3x the ratio bench/README.md records; and
proof that a 10x slowdown of the comparison HTML does not pass."""

from __future__ import annotations

import time

import pytest

from bench import quick
from heta_notebook.analysis._compare import Comparison


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("bench-quick")


@pytest.fixture(scope="module")
def recorded():
    return quick.recorded_ratios()


def test_every_check_has_a_recorded_ratio(recorded):
    assert set(quick.CHECKS) <= set(recorded)


@pytest.mark.parametrize("name", sorted(quick.CHECKS))
def test_within_bound_of_the_recorded_ratio(name, work, recorded):
    got = quick.CHECKS[name](work)
    assert got.project > 0 and got.peer > 0
    assert quick.verdict(got, recorded) is None


def test_a_tenfold_slower_comparison_html_fails_the_check(work, recorded, monkeypatch):
    """At a fifth of the check's size: the ratio is about the same there (1.25 vs 1.20 at 300
    and 1,500 case results on a quiet box), so ten times it is far past the bound. Most of
    the test's CPU is the ten pages; the warm-up (the store written, imports done) is one
    untimed round, not two."""
    quick.comparison_html(work, rounds=1, warm=False, cases=300)
    render = Comparison._repr_html_

    def ten_times(self):  # the same page, ten times the CPU
        start = time.process_time()
        page = render(self)
        spent = time.process_time() - start
        while time.process_time() - start < 10 * spent:
            pass
        return page

    monkeypatch.setattr(Comparison, "_repr_html_", ten_times)
    got = quick.comparison_html(work, rounds=1, warm=False, cases=300)
    problem = quick.verdict(got, recorded)
    assert problem is not None and "comparison_html" in problem


@pytest.mark.parametrize(
    "script", sorted(p.stem for p in quick.ROOT.joinpath("bench").glob("*.py"))
)
def test_every_bench_script_imports_at_head(script):
    """Each script's imports still resolve (modules move; a bench nobody runs would rot)."""
    import importlib

    module = importlib.import_module(f"bench.{script}")
    assert callable(getattr(module, "main", None))
