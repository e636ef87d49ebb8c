"""Scores that cut deeper than a run retrieved are named, not passed off as deeper figures.

``beir_recall@100`` on ``top_k=10`` results equals recall@10: the run records which scores cut
deeper than ``top_k`` (``report.metadata["deeper_than_top_k"]``), warns once per call, and the
card and the CLI say it in a line. Scores within ``top_k`` say nothing.
"""

from __future__ import annotations

import warnings

import pytest

from heta_notebook import (
    BeirBenchmark,
    DepthWarning,
    EvidenceRecallAtK,
    beir_default_metrics,
    run_benchmark,
)
from heta_notebook.cli import main
from heta_notebook.schema._status import KEY, deeper_scores, depth_line


def _run(**options):
    from heta_notebook import Recipe

    recipes = {
        "a": Recipe(name="a", dense=None, hybrid=None, answer=None),
        "b": Recipe(name="b", dense=None, hybrid=None, answer=None),
    }
    return run_benchmark(
        benchmark=BeirBenchmark.cranfield(), recipes=recipes, limit=5, progress=False, **options
    )


def test_scores_deeper_than_top_k_are_recorded_and_warned_once_per_call() -> None:
    with pytest.warns(DepthWarning) as caught:
        runs = _run(evaluators=beir_default_metrics(k_values=(5, 10, 20)), config={"top_k": 10})
    assert len([w for w in caught if w.category is DepthWarning]) == 1  # not once per recipe
    message = str(caught[0].message)
    assert "beir_ndcg@20" in message and "top_k=20" in message and "those 10" in message
    for label in ("a", "b"):
        report = runs[label]
        assert report.metadata[KEY] == {f"beir_{m}@20": 20 for m in _METRICS}
        assert "<b>Depth</b>: 5 scores cut deeper than the 10 results" in report._repr_html_()
    # the same figures as recall@10: nothing deeper was there to find
    summary = runs["a"].summary().set_index("score")["mean"]
    assert summary["beir_recall@20"] == summary["beir_recall@10"]


_METRICS = ("ndcg", "map", "recall", "precision", "mrr")


def test_scores_within_top_k_say_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DepthWarning)
        runs = _run(evaluators=beir_default_metrics(k_values=(1, 10)), config={"top_k": 10})
    report = runs["a"]
    assert KEY not in report.metadata and "Depth" not in report._repr_html_()
    assert depth_line(report.metadata) is None


def test_the_rule_reads_each_evaluators_k() -> None:
    evaluators = [*beir_default_metrics(k_values=(3,)), EvidenceRecallAtK(k=50)]
    assert deeper_scores(evaluators, top_k=3) == {"evidence_recall@50": 50}
    assert deeper_scores(evaluators, top_k=50) == {}
    line = depth_line({KEY: {"evidence_recall@50": 50}, "config": {"top_k": 3}}, how="--top-k {k}")
    assert line == (
        "1 score cut deeper than the 3 results each query asked for: evidence_recall@50 is "
        "computed on those 3, not as deep as its name says; run with --top-k 50 for it"
    )


def test_the_cli_says_it_in_one_line_and_not_as_a_python_warning(tmp_path, capsys) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DepthWarning)  # the CLI must not let it through
        assert main(["run", "cranfield", "--recipe", "bm25", "--limit", "3", "--top-k", "10"]) == 0
    out = capsys.readouterr().out
    assert "note: 5 scores cut deeper than the 10 results" in out and "--top-k 100" in out
    assert main(["run", "cranfield", "--recipe", "bm25", "--limit", "3", "--top-k", "100"]) == 0
    assert "cut deeper" not in capsys.readouterr().out


def test_the_cli_summary_says_what_the_card_says(tmp_path, capsys) -> None:
    """Depth, ties and misses: the plain-text summary carries the card's lines."""
    from heta_notebook import EvaluationReport
    from heta_notebook.analysis._misses import miss_line
    from heta_notebook.analysis._ties import notable_ties, tie_line

    store = tmp_path / "store"
    assert main(["run", "cranfield", "--limit", "30", "--top-k", "10", "--out", str(store)]) == 0
    out = capsys.readouterr().out
    saved = EvaluationReport.load(next(store.rglob("header.json")).parent)
    counts = saved.frames().misses()
    lines = [f"{m}: {miss_line(counts[counts['query_mode'] == m])}" for m in saved.query_modes]
    lines += [f"ties: {tie_line(r)}" for r in notable_ties(saved.frames().ties()).itertuples()]
    assert lines and all(line in out for line in lines), (lines, out)
    html = saved._repr_html_()
    for mode in saved.query_modes:  # the card, in the same mode order
        assert miss_line(counts[counts["query_mode"] == mode]) in html
    assert "cut deeper" in out and "cut deeper" in html


def test_paper_tables_say_which_scores_cut_deeper_than_the_run_retrieved() -> None:
    from heta_notebook import compare

    with pytest.warns(DepthWarning):
        runs = _run(evaluators=beir_default_metrics(k_values=(10, 100)), config={"top_k": 10})
    note = "nDCG@100 is computed on the top 10 results retrieved per query, fewer than the cutoff"
    deep, within = ["beir_ndcg@10", "beir_ndcg@100"], ["beir_ndcg@10"]
    comparison = compare(runs)
    assert note in comparison.to_latex(scores=deep) and note in comparison.to_markdown(deep)
    assert note in runs["a"].to_markdown(scores=deep)
    assert "computed on the top" not in comparison.to_markdown(scores=within)
    assert "computed on the top" not in runs["a"].to_latex(scores=within)


def test_a_comparison_notes_it_once_for_reports_that_share_it() -> None:
    from heta_notebook import compare

    with pytest.warns(DepthWarning):
        runs = _run(evaluators=beir_default_metrics(k_values=(10, 100)), config={"top_k": 10})
    comparison = compare(runs)
    notes = [n for n in comparison.notes() if "cut deeper" in n]
    assert len(notes) == 1 and notes[0].startswith("a, b: 5 scores cut deeper than the 10")
    assert "cut deeper" in comparison._repr_html_()


def test_a_multi_benchmark_comparison_notes_it_per_benchmark() -> None:
    from heta_notebook import compare_benchmarks

    with pytest.warns(DepthWarning):
        runs = _run(evaluators=beir_default_metrics(k_values=(10, 100)), config={"top_k": 10})
    notes = compare_benchmarks(runs).notes()
    assert any(n.startswith("beir_cranfield") and "a, b: 5 scores cut deeper" in n for n in notes)


def test_a_default_run_retrieves_as_deep_as_its_scores_cut_and_warns_about_nothing() -> None:
    """The defaults agree: BEIR's metrics cut at @100, so an unset ``top_k`` asks for 100."""
    from heta_notebook import BenchmarkRunConfig

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs = _run()
        chosen = _run(config=BenchmarkRunConfig(max_concurrent_queries=2))  # top_k left unset
    for report in (runs["a"], chosen["a"]):
        assert report.metadata["config"]["top_k"] == 100 and KEY not in report.metadata
    summary = runs["a"].summary().set_index("score")["mean"]
    assert summary["beir_recall@100"] >= summary["beir_recall@10"]
    shallow = _run(evaluators=beir_default_metrics(k_values=(1, 5)))  # never shallower than 10
    assert shallow["a"].metadata["config"]["top_k"] == 10


def test_the_cli_default_run_says_nothing_about_depth(capsys) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["run", "cranfield", "--recipe", "bm25", "--limit", "3"]) == 0
    assert "cut deeper" not in capsys.readouterr().out
