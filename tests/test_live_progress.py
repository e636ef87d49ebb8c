"""A run shows itself while it goes: the bar carries the running headline score, a notebook's
live card the running figures per mode, both refreshed at a bounded rate."""

from __future__ import annotations

import time

import pytest

from heta_notebook import BeirBenchmark, Recipe, run_benchmark
from heta_notebook.display._live_card import live_card_html
from heta_notebook.runner import _progress
from heta_notebook.runner._progress import RunningScores, RunProgress


@pytest.fixture(scope="module")
def report():
    recipe = Recipe(name="bm25", dense={"dims": 16}, hybrid=None)
    run = run_benchmark(
        benchmark=BeirBenchmark.cranfield(), recipe=recipe, limit=12, progress=False
    )
    return run.report


def test_running_figures_end_at_the_reports_means(report) -> None:
    running = RunningScores(label="bm25", total=len(report.case_results), headline="beir_ndcg@10")
    for result in report.case_results:
        running.add(result)
    means = report.summary().set_index(["query_mode", "score"])["mean"]
    for mode, tally in running.modes.items():
        assert tally.done == 12 and tally.errors == 0
        assert tally.mean == pytest.approx(means[(mode, "beir_ndcg@10")])
    assert running.done == len(report.case_results)


def test_the_bar_shows_the_running_headline_score(report, capsys) -> None:
    progress = RunProgress(total=len(report.case_results), desc="bm25", headline="beir_ndcg@10")
    for result in report.case_results:
        progress.update(result)
    progress.close()
    err = capsys.readouterr().err
    assert "beir_ndcg@10=0." in err and "errors=0" in err


def test_the_live_card_refreshes_at_a_bounded_rate(report, monkeypatch) -> None:
    shown: list[str] = []

    class Card:
        def __init__(self, running):
            self.running = running

        def update(self):
            shown.append(live_card_html(self.running))

    import heta_notebook.display._live_card as live

    monkeypatch.setattr(live, "LiveCard", Card)
    monkeypatch.setattr(_progress, "REFRESH_SECONDS", 0.05)
    results = list(report.case_results) * 40  # 960 cases: far more cases than renders
    started = time.monotonic()
    progress = RunProgress(total=len(results), desc="bm25", headline="beir_ndcg@10", live=True)
    for result in results:
        progress.update(result)
    progress.close()
    elapsed = time.monotonic() - started
    assert len(shown) <= 2 + elapsed / 0.05  # the rule: one render per interval, plus the last
    assert len(shown) < len(results) / 10
    assert 'data-state="finished"' in shown[-1] and f'data-done="{len(results)}"' in shown[-1]


def test_the_live_card_escapes_what_it_shows() -> None:
    running = RunningScores(label="<b>x</b>", total=2, headline="h<i>")
    running.modes["<script>"] = _progress.ModeTally(done=1, scored=1, total=0.5)
    page = live_card_html(running)
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;x" in page
    assert 'data-done="1"' in page and "0.500" in page


def test_the_live_rows_keep_the_runs_mode_order_whatever_finishes_first(report) -> None:
    modes = tuple(reversed(report.query_modes))  # the order the run asks for
    progress = RunProgress(total=len(report.case_results), desc="bm25", enabled=False, modes=modes)
    for result in sorted(report.case_results, key=lambda r: r.query_mode):  # finish order
        progress.update(result)
    assert tuple(progress.running.modes) == modes
    html = live_card_html(progress.running)
    assert [html.index(f"<td>{m}</td>") for m in modes] == sorted(
        html.index(f"<td>{m}</td>") for m in modes
    )
