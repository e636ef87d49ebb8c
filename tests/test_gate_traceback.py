"""A failing gate in pytest shows the user's line and the gate's message, not the gate's source."""

from __future__ import annotations

from tests._compare_helpers import scored_report
from tests._pytest_run_helpers import UNUSED_PLUGINS

pytest_plugins = ("pytester",)

GATE_TESTS = """
from heta_notebook import EvaluationReport
from heta_notebook.testing import assert_no_regression, assert_scores


def test_floor():
    assert_scores(EvaluationReport.load("new.json"), {"beir_ndcg@10": ">= 0.9"})


def test_regression():
    new, old = EvaluationReport.load("new.json"), EvaluationReport.load("old.json")
    assert_no_regression(new, old, n_resamples=500, output_dir="pages")
"""


def test_gate_failures_hide_the_gates_own_frames(pytester):
    old = [0.6 + 0.01 * (i % 7) for i in range(40)]
    new = [v - 0.3 for v in old]
    scored_report("old", {"beir_ndcg@10": old}).save(pytester.path / "old.json")
    scored_report("new", {"beir_ndcg@10": new}).save(pytester.path / "new.json")
    pytester.makepyfile(test_gates=GATE_TESTS)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest("-p", "no:cacheprovider", *UNUSED_PLUGINS)
    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    assert "assert_scores(EvaluationReport.load" in output  # the user's own line
    assert "assert_no_regression(new, old" in output
    assert "result = check_scores(" not in output  # not the gates' bodies
    assert "result = check_regression(" not in output and "def assert_no_regression" not in output
    assert "beir_ndcg@10" in output
