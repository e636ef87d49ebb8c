"""TREC files: a report's run and qrels files reproduce its numbers in pytrec_eval for every mode
(hybrid ties included), and an outside run file reads back into a scored report."""

from __future__ import annotations

import functools
import tempfile

import pytest
import pytrec_eval

from heta_notebook import (
    BenchmarkRunConfig,
    Recipe,
    read_trec_run,
    report_from_trec,
    run_benchmark,
    write_trec_qrels,
)
from heta_notebook.benchmarks._beir import BeirBenchmark
from heta_notebook.evaluators._retrieval import evaluate_run
from tests._kb_helpers import cranfield

K = (1, 3, 5, 10, 100)
MEASURES = {f"{m}.{','.join(map(str, K))}" for m in ("ndcg_cut", "map_cut", "recall", "P")}
OURS = {"ndcg_cut": "ndcg", "map_cut": "map", "recall": "recall", "P": "precision"}


@functools.cache
def _report():
    """Cranfield, default recipe (BM25, LSA dense, hybrid), top 100: 3 modes × 225 queries."""
    with tempfile.TemporaryDirectory() as workspace:
        return run_benchmark(
            benchmark=BeirBenchmark.cranfield(),
            recipe=Recipe(name="default"),
            config=BenchmarkRunConfig(top_k=100),
            progress=False,
            workspace=workspace,
        ).report


def _pytrec(qrels_path, run_path) -> dict[str, dict[str, float]]:
    """pytrec_eval on the files as trec_eval reads them (its own plain split, not our reader)."""
    qrels: dict = {}
    for line in qrels_path.read_text().splitlines():
        qid, _, doc, rel = line.split()
        qrels.setdefault(qid, {})[doc] = int(rel)
    run: dict = {}
    for line in run_path.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    return pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)


@pytest.mark.parametrize("mode", ["full_text_search", "vector_search", "hybrid_search"])
def test_written_files_reproduce_the_report_in_pytrec_eval(tmp_path, mode):
    report = _report()
    qrels = write_trec_qrels(cranfield(), tmp_path / "qrels.txt")
    run = report.to_trec(tmp_path / f"{mode}.run", mode=mode)
    assert report.to_trec_qrels(tmp_path / "q2.txt").read_text() == qrels.read_text()
    theirs = _pytrec(qrels, run)
    compared = 0
    for result in report.case_results:
        if result.query_mode != mode or result.case_id not in theirs:
            continue
        for measure, metric in OURS.items():
            for k in K:
                ours = result.score(f"beir_{metric}@{k}").value
                assert ours == pytest.approx(theirs[result.case_id][f"{measure}_{k}"], abs=1e-12)
                compared += 1
    assert compared >= 200 * 20  # nearly every judged query, every measure


def test_hybrid_scores_tie_so_a_naive_export_would_differ():
    """Why rank-consistent scores matter: the fused scores tie, trec_eval reorders ties."""
    report = _report()
    tied = 0
    for result in report.case_results:
        if result.query_mode == "hybrid_search":
            scores = [r.score for r in result.response.results[:10]]
            tied += len(scores) != len(set(scores))
    assert tied > 0


def test_a_run_file_reads_back_into_the_same_scores(tmp_path):
    report = _report()
    run = report.to_trec(tmp_path / "hybrid.run", mode="hybrid_search", run_tag="mine")
    back = report_from_trec(run, cranfield(), label="outside", mode="hybrid_search")
    assert back.label == "outside" and back.query_modes == ("hybrid_search",)
    assert back.benchmark.key == report.benchmark.key
    ours = {
        (r.case_id, s.name): s.value
        for r in report.case_results
        if r.query_mode == "hybrid_search"
        for s in r.scores
    }
    for result in back.case_results:
        for score in result.scores:
            assert score.value == pytest.approx(ours[(result.case_id, score.name)], abs=1e-12)
    assert back.score_summary["hybrid_search.beir_ndcg@10"] == pytest.approx(
        report.score_summary["hybrid_search.beir_ndcg@10"]
    )


def test_an_outside_run_with_ties_is_ranked_as_trec_eval_ranks_it(tmp_path):
    lines = ["1 Q0 184 1 2.0 x", "1 Q0 29 2 2.0 x", "1 Q0 51 3 2.0 x", "1 Q0 12 4 1.0 x"]
    lines += ["2 Q0 12 1 0.5 x", "2 Q0 196 2 0.5 x"]
    path = tmp_path / "outside.run"
    path.write_text("\n".join(lines) + "\n")
    report = report_from_trec(path, cranfield())
    assert len(report.case_results) == 225  # queries absent from the run score 0
    qrels = write_trec_qrels(cranfield(), tmp_path / "qrels.txt")
    theirs = _pytrec(qrels, path)
    from tests._kb_helpers import qrels_of

    ours_plain = evaluate_run(qrels_of(cranfield().cases), read_trec_run(path))
    for result in report.case_results:
        if result.case_id in theirs:
            value = result.score("beir_ndcg@10").value
            assert value == pytest.approx(theirs[result.case_id]["ndcg_cut_10"], abs=1e-12)
            assert value == pytest.approx(ours_plain[result.case_id]["beir_ndcg@10"], abs=1e-12)
        else:
            assert result.score("beir_ndcg@10").value == 0.0


def test_bad_files_and_arguments_say_what_is_wrong(tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 184 1 2.0 x\n1 Q0 29 2\n")
    with pytest.raises(ValueError, match=r"bad.run:2: a TREC run line has 6 fields"):
        read_trec_run(bad)
    bad.write_text("1 Q0 184 1 high x\n")
    with pytest.raises(ValueError, match=r"bad.run:1: score 'high' is not a number"):
        read_trec_run(bad)
    bad.write_text("q-unknown Q0 184 1 1.0 x\n")
    with pytest.raises(ValueError, match=r"not cases of beir_cranfield.*'q-unknown'"):
        report_from_trec(bad, cranfield())
    with pytest.raises(ValueError, match=r"has modes full_text_search, .*pass mode="):
        _report().to_trec(tmp_path / "x.run")
    with pytest.raises(FileNotFoundError, match="no TREC run file"):
        read_trec_run(tmp_path / "missing.run")


def test_a_columnar_report_writes_the_same_run(tmp_path):
    from heta_notebook import EvaluationReport

    report = _report()
    folder = report.save(tmp_path / "columnar", format="columnar")
    lazy = EvaluationReport.load(folder)
    a = report.to_trec(tmp_path / "a.run", mode="vector_search", run_tag="x")
    b = lazy.to_trec(tmp_path / "b.run", mode="vector_search", run_tag="x")
    assert a.read_text() == b.read_text() and a.read_text().count("\n") > 225 * 50
