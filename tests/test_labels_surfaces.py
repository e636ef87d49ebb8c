"""judged@k in a real Cranfield run: frames, slices, the gate, the card, comparisons, captions;
a report's label set is part of its identity."""

from __future__ import annotations

import warnings

import pytest

from heta_notebook import (
    BeirBenchmark,
    Recipe,
    UnjudgedWarning,
    compare,
    corrected_score,
    labeled,
    labels_of,
    pool,
    run_benchmark,
)
from heta_notebook.analysis._judged import (
    judged_caption,
    judged_line,
    judged_means,
    judged_notes,
)
from heta_notebook.labels import LabelSet
from heta_notebook.testing import check_scores

CASES = 12


def labeled_half():
    bench = BeirBenchmark.cranfield()
    full = labels_of(bench)
    half = LabelSet(
        {q: dict(list(docs.items())[::2]) for q, docs in full.qrels().items()}, name="half"
    )
    return labeled(bench, half, holes=True)


@pytest.fixture(scope="module")
def runs():
    """One recipe, BM25 only, 12 Cranfield queries: on full labels, and on a label set holding
    only the even-ranked half of each query's labels (holes made on purpose)."""
    bench = BeirBenchmark.cranfield()
    full = labels_of(bench)
    options = {
        "recipes": {"whole-documents": Recipe(name="whole-documents")},
        "query_modes": ("full_text_search",),
        "limit": CASES,
        "progress": False,
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        on_full = run_benchmark(benchmark=labeled(bench, full), **options)
        on_half = run_benchmark(benchmark=labeled_half(), **options)
    (a,) = on_full.reports.values()
    (b,) = on_half.reports.values()
    return a, b, caught


def test_judged_at_k_is_a_score_in_frames_slices_and_the_gate(runs) -> None:
    _, half, caught = runs
    assert any(w.category is UnjudgedWarning for w in caught)  # never scored without a warning
    summary = half.frames().summary()
    judged = summary[summary.score == "judged@10"]["mean"].iloc[0]
    assert 0 < judged < 1
    cases = half.frames().cases()
    assert "judged@10" in cases.columns and len(cases) == CASES
    assert "judged@10" in set(half.summary(by="dataset").score)
    gate = check_scores(half, {"judged@10": ">= 0.99"})  # the gate, without its summary line
    assert not gate.passed and list(gate.failures["score"]) == ["judged@10"]
    assert check_scores(half, {"judged@10": ">= 0.01"}).passed


def test_hole_conventions_are_stated_and_bound_the_trec_eval_value(runs) -> None:
    _, half, _ = runs
    means = half.frames().summary().set_index("score")["mean"]
    assert means["beir_ndcg_upper@10"] >= means["beir_ndcg@10"]
    scores = {s.name: s for s in half.case_results[0].scores}
    assert scores["beir_ndcg_condensed@10"].metadata["unjudged"] == "condensed"
    assert "overestimates" in scores["beir_ndcg_condensed@10"].metadata["note"]
    assert scores["beir_ndcg_upper@10"].metadata["unjudged"] == "relevant"


def test_card_comparison_and_caption_say_how_much_was_judged(runs) -> None:
    full, half, _ = runs
    # Cranfield's BEIR qrels list relevant documents only: even its full labels leave holes
    key = ("full_text_search", 10)
    assert judged_means(half)[key] < judged_means(full)[key] < 1
    assert judged_line(full, scores=["beir_map@100"]) is None  # no judged@100 behind that
    line = judged_line(full)  # trec_eval's scores only: lower bounds
    assert line is not None and "judged@10" in line and "lower bounds" in line
    line = judged_line(half)  # with its condensed and upper-bound twins: each one's convention
    assert line is not None and "bounds [unjudged" in line and "overestimates" in line
    assert "Judged" in half.card()._repr_html_()
    notes = judged_notes({"full": full, "half": half})
    assert len(notes) == 1 and "biases this comparison" in notes[0]
    assert "judged@10" in judged_caption([half], ["beir_ndcg@10"])
    assert judged_caption([full], ["beir_map@100"]) == ""  # no judged@100 behind it
    caption = judged_caption([half], ["beir_map@100"])  # none, but an interval is shown
    assert "judged@" not in caption and "beir_map@100: trec_eval's value with its bounds" in caption


def test_pool_of_reports_lists_what_the_half_labels_miss(runs) -> None:
    full, half, _ = runs
    holes = pool([half], depth=10, labels=labels_of(labeled_half()))
    assert len(holes) > 0 and holes.systems == ("whole-documents · full_text_search",)
    assert holes.frame["best_rank"].between(1, 10).all()
    assert (
        pool([full, half], depth=10, labels=labels_of(labeled_half())).frame["systems"].max() == 2
    )


def test_custom_evaluators_on_a_label_set_still_say_how_much_was_judged() -> None:
    bench = labeled(BeirBenchmark.cranfield(), labels_of(BeirBenchmark.cranfield()), evaluators=[])
    assert [e.name for e in bench.evaluators()] == ["judged@10"]


def test_reports_on_different_label_sets_never_compare_as_equal(runs) -> None:
    full, half, _ = runs
    assert full.benchmark.key != half.benchmark.key
    assert full.metadata["fingerprint"] != half.metadata["fingerprint"]
    with pytest.raises(ValueError, match="different benchmarks"):
        compare([full, half])
    side_by_side = compare([full, half], allow_different_benchmarks=True)
    assert any("judged@10 differs" in n for n in side_by_side.notes())


def test_corrected_score_from_reports_and_mappings(runs) -> None:
    full, half, _ = runs
    # the half labels play the judge (biased low here), the full labels the people on 6 queries
    truth = full.frames().cases().set_index("case_id")["beir_ndcg@10"].dropna()
    people = {q: float(truth[q]) for q in list(truth.index)[::2]}
    result = corrected_score(half, people)
    judge_only = half.frames().cases()["beir_ndcg@10"].mean()
    assert result.judge_only == pytest.approx(judge_only)
    assert abs(result.estimate - truth.mean()) < abs(judge_only - truth.mean())
    with pytest.raises(ValueError, match="not judged"):
        corrected_score({"a": 1.0, "b": 0.5}, {"c": 1.0, "a": 1.0})
