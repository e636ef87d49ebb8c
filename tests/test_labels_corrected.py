"""Corrected means on the card, in comparisons and in the gates (issue 35, item 6).

Real data: Cranfield, 40 queries, BM25 and LSA vectors on two recipes. The original labels
are every other qrels row (holes made on purpose); a judge (wrong on a quarter of the pool,
seeded) fills the depth-10 pool; people label, with the truth, every judge-labelled pair of
15 queries drawn by ``queries_to_label``. pytrec_eval is the per-query oracle.
"""

from __future__ import annotations

import random
import re
import warnings

import numpy as np
import pytest
import pytrec_eval

from heta_notebook import BeirBenchmark, Recipe, compare, labeled, labels_of, pool, run_benchmark
from heta_notebook.analysis._corrected import (
    NoHumanLabelsError,
    corrected_difference,
    corrected_report_score,
    corrected_scores,
    per_query,
    queries_to_label,
    touched_queries,
)
from heta_notebook.cli import main
from heta_notebook.kb import Chunking
from heta_notebook.labels import Label, LabelSet, corrected_mean
from heta_notebook.labels import _benchmark as label_registry
from heta_notebook.testing import check_regression, check_scores
from heta_notebook.testing._gates import GateInputError

CASES, SCORE = 40, "beir_ndcg@10"


@pytest.fixture(scope="module")
def world():
    bench = BeirBenchmark.cranfield()
    truth = labels_of(bench).qrels()
    half = LabelSet({q: dict(list(d.items())[::2]) for q, d in truth.items()}, name="half")
    options = {
        "recipes": {
            "docs": Recipe(name="whole-documents"),
            "chunks": Recipe(name="chunks-100", chunking=Chunking(unit="words", size=100)),
        },
        "query_modes": ("full_text_search", "vector_search"),
        "limit": CASES,
        "progress": False,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = run_benchmark(benchmark=labeled(bench, half), **options)
        rng = random.Random(0)
        labels = LabelSet(half.original, name="filled")
        for q, d in pool(list(first.reports.values()), depth=10, labels=half):
            grade = truth.get(q, {}).get(d, 0)
            if rng.random() < 0.25:  # a judge wrong on a quarter of the pairs
                grade = 0 if grade > 0 else rng.randint(1, 3)
            labels.add(Label(q, d, grade, "judge", who="sim"))
        judge_only = LabelSet(labels.original, labels.added, name="judge-only")
        for q, d in queries_to_label(labels, 15, seed=1):
            labels.add(Label(q, d, truth.get(q, {}).get(d, 0), "human", who="ana"))
        scored = run_benchmark(benchmark=labeled(bench, labels), **options)
        unlabelled = run_benchmark(benchmark=labeled(bench, judge_only), **options)
        on_truth = run_benchmark(benchmark=labeled(bench, LabelSet(truth)), **options)
    return {
        "labels": labels,
        "truth": truth,
        "docs": scored.reports["docs"],
        "chunks": scored.reports["chunks"],
        "no_humans": unlabelled.reports["docs"],
        "on_truth": on_truth.reports["docs"],
        "half": (first.reports["docs"], first.reports["chunks"]),
    }


def _oracle(report, mode, qrels):
    """Per-query nDCG@10 by pytrec_eval on the report's rankings (best result per document)."""
    results = report.frames().results()
    rows = results[results.query_mode == mode]
    run: dict[str, dict[str, float]] = {}
    for r in rows.itertuples():
        run.setdefault(str(r.case_id), {}).setdefault(str(r.document_id), float(r.score))
    queries = {q: {d: int(g) for d, g in qrels.get(q, {}).items()} for q in run}
    queries = {q: d for q, d in queries.items() if d}
    values = pytrec_eval.RelevanceEvaluator(queries, {"ndcg_cut"}).evaluate(
        {q: run[q] for q in queries}
    )
    return {q: v["ndcg_cut_10"] for q, v in values.items()}


def _qrels(labels, source):
    out = {q: dict(d) for q, d in labels.original.items()}
    for (q, d), label in labels.labels(source).items():
        if d not in labels.original.get(q, {}):
            out.setdefault(q, {})[d] = label.grade
    return out


def test_the_cards_corrected_mean_is_the_labels_modules_ppi_of_pytrec_eval_values(world):
    report, labels = world["docs"], world["labels"]
    mode = "full_text_search"
    cases = report.frames().cases()
    scored = [str(q) for q in cases[(cases.query_mode == mode) & cases[SCORE].notna()].case_id]
    f_all, y_all = _oracle(report, mode, _qrels(labels, "judge")), None
    y_all = _oracle(report, mode, _qrels(labels, "human"))
    touched, labelled = touched_queries(labels)
    lab = sorted(q for q in scored if q in labelled)
    f = [f_all.get(q, 0.0) for q in scored]
    expected = corrected_mean(
        f,
        [y_all.get(q, 0.0) for q in lab],
        [f_all.get(q, 0.0) for q in lab],
        exact=sum(1 for q in scored if q not in touched),
    )
    (shown,) = [c for c in corrected_scores(report, [SCORE]) if c.mode == mode]
    assert shown.mean.estimate == pytest.approx(expected.estimate, abs=1e-9)
    assert shown.mean.low == pytest.approx(expected.low, abs=1e-9)
    assert shown.labelled == len(lab) == 15
    html = str(report.card()._repr_html_())
    block = html[html.index("Corrected means") :]
    assert (
        f"{expected.estimate:.3f}" in block
        and f"[{expected.low:.3f}, {expected.high:.3f}]" in block
    )
    assert f"judge-filled {expected.judge_only:.3f}" in block
    assert re.search(r"on the 15 of \d+ judge-touched queries", block)
    # the judge alone is biased upward; the corrected interval covers the full-label mean
    on_truth = world["on_truth"].summary()
    true_mean = on_truth[(on_truth.score == SCORE) & (on_truth.query_mode == mode)]["mean"].iloc[0]
    assert shown.mean.low <= true_mean <= shown.mean.high
    assert shown.mean.judge_only > true_mean + 0.05


def test_stratified_ppi_scales_the_rectifier_by_the_touched_share():
    rng = np.random.default_rng(3)
    f, y = rng.random(50), rng.random(10)
    fl = f[:10]
    plain = corrected_mean(f, y, fl)
    assert plain == corrected_mean(f, y, fl, exact=0)
    strat = corrected_mean(f, y, fl, exact=20)
    share = 30 / 50
    assert strat.estimate == pytest.approx(f.mean() + share * (y - fl).mean())
    se = np.sqrt(f.var(ddof=1) / 50 + share**2 * (y - fl).var(ddof=1) / 10)
    assert strat.high - strat.estimate == pytest.approx(1.959964 * se, rel=1e-5)
    with pytest.raises(ValueError, match="exact"):
        corrected_mean(f, y, fl, exact=45)


def test_the_gate_passes_and_fails_on_the_corrected_mean(world):
    report = world["docs"]
    (c,) = [x for x in corrected_scores(report, [SCORE]) if x.mode == "full_text_search"]
    floor = {SCORE: f">= {(c.mean.estimate + c.mean.judge_only) / 2:.6f}"}
    modes = ["full_text_search"]
    judge_filled = world["no_humans"]
    assert check_scores(judge_filled, floor, modes=modes).passed  # the judge-filled mean passes
    gated = check_scores(report, floor, modes=modes, corrected=True)
    assert not gated.passed and gated.rows["mean"].iloc[0] == pytest.approx(c.mean.estimate)
    assert gated.message().startswith("corrected means below their floor")
    low = {SCORE: f">= {c.mean.estimate - 0.01:.6f}"}
    assert check_scores(report, low, modes=modes, corrected=True).passed


def test_no_human_labels_is_a_clear_error_everywhere(world, tmp_path, capsys):
    report = world["no_humans"]
    with pytest.raises(GateInputError, match="0 human label"):
        check_scores(report, {SCORE: 0.1}, corrected=True)
    with pytest.raises(NoHumanLabelsError, match="queries_to_label"):
        report.card(corrected=True)._repr_html_()
    assert "Corrected means" not in report.card()._repr_html_()  # nothing to say: quiet
    plain = BeirBenchmark.cranfield()
    with pytest.raises(GateInputError, match="not scored on a label set"):
        check_scores(_plain_report(plain), {SCORE: 0.1}, corrected=True)


def _plain_report(bench):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = run_benchmark(
            benchmark=bench,
            recipes={"docs": Recipe(name="whole-documents")},
            query_modes=("full_text_search",),
            limit=5,
            progress=False,
        )
    return run.reports["docs"]


def test_regression_gate_and_comparison_use_the_paired_corrected_difference(world):
    old, new = world["docs"], world["chunks"]
    result = check_regression(new, old, scores=[SCORE], corrected=True, write_page=False)
    d = corrected_difference(old, new, SCORE, modes=("full_text_search", "full_text_search"))
    row = result.rows[result.rows["mode"] == "full_text_search"].iloc[0]
    assert row["delta"] == pytest.approx(d.delta.estimate) and row["test"] == "ppi-z"
    assert row["p_value"] == pytest.approx(d.p_value)
    assert row["baseline_mean"] == pytest.approx(d.baseline.estimate)
    assert "corrected (prediction-powered) z-test" in result.message()
    table = compare({"docs": old, "chunks": new}).corrected()
    assert len(table) == 4 and table["corrected"].notna().all()
    notes = " ".join(compare({"docs": old, "chunks": new}).notes())
    assert "Corrected means of beir_ndcg@10" in notes and "labels in force" in notes


@pytest.mark.slow  # the gate writes its comparison page (~4 s)
def test_cli_gate_corrected_needs_the_label_set_in_a_new_session(world, tmp_path, monkeypatch):
    old, new = world["docs"], world["chunks"]
    paths = [str(old.save(tmp_path / "old")), str(new.save(tmp_path / "new"))]
    world["labels"].save(tmp_path / "labels")
    monkeypatch.setattr(label_registry, "_SNAPSHOTS", {})  # a new session holds no label set
    args = ["gate", paths[1], "--baseline", paths[0], "--corrected"]
    args += ["--no-page"]  # the verdict is what this checks
    assert main(args) == 2  # unusable input: which label set?
    again = LabelSet.load(tmp_path / "labels")
    verdict = check_regression(new, old, corrected=True, labels=again, write_page=False)
    assert main([*args, "--labels", str(tmp_path / "labels")]) == (0 if verdict.passed else 1)
    assert main([*args, "--labels", str(tmp_path / "missing")]) == 2  # named, not a crash


def test_corrected_ndcg_covers_the_pool_truth_where_the_judge_only_mean_misses(world):
    """50 seeded judges (20% of grades wrong, always upward) and 50 draws of 15 queries
    people label, on the same real rankings: the corrected interval covers the target (nDCG
    with every hole labelled by people) in at least 45 seeds; the judge alone is biased."""
    report, base, truth = world["docs"], world["labels"], world["truth"]
    mode = "full_text_search"
    holes = sorted(base.labels("judge"))
    grade = {p: truth.get(p[0], {}).get(p[1], 0) for p in holes}
    everyone = LabelSet(base.original, [Label(*p, grade[p], "human", who="t") for p in holes])
    _, target = per_query(report, everyone, SCORE, mode)
    truth_mean = float(np.mean(list(target.values())))
    covered, biased, at = 0, 0, "2026-12-03T00:00:00+00:00"
    for seed in range(50):
        rng = random.Random(seed)
        labels = LabelSet(base.original)
        for p in holes:
            wrong = grade[p] == 0 and rng.random() < 0.2
            labels.add(Label(*p, rng.randint(1, 3) if wrong else grade[p], "judge", "sim", time=at))
        for p in queries_to_label(labels, 15, seed=seed):
            labels.add(Label(*p, grade[p], "human", "t", time=at))
        c = corrected_report_score(report, SCORE, mode, labels=labels).mean
        covered += c.low <= truth_mean <= c.high
        biased += c.judge_only > truth_mean
    assert covered >= 45
    assert biased == 50  # the judge-only mean is above the truth in every seed


def test_a_saved_label_set_is_found_by_its_path_until_it_changes(world, tmp_path, monkeypatch):
    base = world["labels"]
    on_disk = LabelSet.open(tmp_path / "labels", base.original, name="on disk")
    on_disk.extend(base.added)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = run_benchmark(
            benchmark=labeled(BeirBenchmark.cranfield(), on_disk),
            recipes={"docs": Recipe(name="whole-documents")},
            query_modes=("full_text_search",),
            limit=CASES,
            progress=False,
        )
    report = run.reports["docs"]
    expected = corrected_scores(report, [SCORE])[0].mean
    monkeypatch.setattr(label_registry, "_SNAPSHOTS", {})  # a new session: only the files
    assert corrected_scores(report, [SCORE])[0].mean == expected
    assert "Corrected means" in report.card()._repr_html_()
    q, d = next(iter(on_disk.labels("judge")))
    on_disk.add(Label(q, d, 3, "human", who="late"))  # journaled: the set on disk has changed
    monkeypatch.setattr(label_registry, "_SNAPSHOTS", {})  # another new session
    with pytest.raises(NoHumanLabelsError, match="has changed since the report was scored"):
        corrected_scores(report, [SCORE])
    html = report.card()._repr_html_()
    assert "has changed since the report was scored" in html  # the card says why, and renders
    assert corrected_scores(report, [SCORE], labels=LabelSet.load(tmp_path / "labels"))


def test_judged_at_k_is_gated_like_any_score_and_the_filled_labels_judge_everything(world):
    old, new = world["half"]
    means = {
        name: r.summary().query("score == 'judged@10'").set_index("query_mode")["mean"]
        for name, r in (("old", old), ("new", new))
    }
    assert 0 < means["old"].min() < 1  # holes made on purpose
    result = check_regression(new, old, scores=["judged@10"], write_page=False)
    for row in result.rows.to_dict("records"):
        delta = means["new"][row["mode"]] - means["old"][row["mode"]]
        assert row["delta"] == pytest.approx(delta)
    assert not check_scores(old, {"judged@10": ">= 0.99"}).passed
    filled = world["docs"].summary().query("score == 'judged@10'")["mean"]
    assert (filled == 1.0).all()  # the judge filled every hole of the pool's depth
