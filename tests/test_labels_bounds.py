"""Scores that admit holes on every surface (issue 35, item 2): a trec_eval score and its
upper bound are one interval (card, comparison, paper tables, ``frames().bounds()``), and each
shown score states its convention for unjudged documents, read from its metadata."""

from __future__ import annotations

import re
import warnings

import pytest

from heta_notebook import (
    BeirBenchmark,
    Chunking,
    EvaluationReport,
    Recipe,
    compare,
    compare_benchmarks,
    labeled,
    labels_of,
    run_benchmark,
)
from heta_notebook.analysis._bounds import (
    bound_pairs,
    comparison_bound_pairs,
    conventions,
    interval_text,
    name_list,
    unjudged_sentence,
    upper_of,
)
from heta_notebook.analysis._judged import judged_caption, judged_line
from heta_notebook.labels import LabelSet

CASES = 12
NDCG, UPPER, CONDENSED = "beir_ndcg@10", "beir_ndcg_upper@10", "beir_ndcg_condensed@10"


@pytest.fixture(scope="module")
def reports():
    """Two recipes (BM25 on whole documents and on 50-word chunks), 12 Cranfield queries,
    scored on half of each query's labels with the condensed and upper-bound twins; and the
    first recipe on the full labels without them."""
    bench = BeirBenchmark.cranfield()
    full = labels_of(bench)
    half = LabelSet(
        {q: dict(list(docs.items())[::2]) for q, docs in full.qrels().items()}, name="half"
    )
    recipes = {
        "whole": Recipe(name="whole-documents"),
        "chunks": Recipe(name="chunks-50", chunking=Chunking(unit="words", size=50, overlap=10)),
    }
    options = {"query_modes": ("full_text_search",), "limit": CASES, "progress": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scored on labels with holes: it warns
        holes = run_benchmark(
            benchmark=labeled(bench, half, holes=True), recipes=recipes, **options
        )
        plain = run_benchmark(
            benchmark=labeled(bench, full), recipes={"whole": recipes["whole"]}, **options
        )
    return holes.reports["whole"], holes.reports["chunks"], plain.reports["whole"]


def _means(report: EvaluationReport) -> dict[str, float]:
    return report.frames().summary().set_index("score")["mean"].to_dict()


def test_a_score_pairs_with_its_upper_bound_by_name_and_recorded_convention(reports) -> None:
    whole, _, plain = reports
    assert upper_of(NDCG) == UPPER and upper_of(UPPER) is None and upper_of(CONDENSED) is None
    assert upper_of("judged@10") is None
    names = [NDCG, UPPER, CONDENSED, "beir_map@10", "judged@10"]
    assert bound_pairs(names) == {NDCG: UPPER}
    assert bound_pairs(names, {NDCG: "nonrelevant", UPPER: "condensed"}) == {}  # says otherwise
    known = conventions([whole])  # read from the evaluator manifests the report recorded
    assert (known[NDCG], known[UPPER], known[CONDENSED]) == ("nonrelevant", "relevant", "condensed")
    assert "judged@10" not in known
    bare = whole.model_copy(update={"metadata": {**whole.metadata, "evaluators": []}})
    assert conventions([bare])[UPPER] == "relevant"  # else from the scores' own metadata
    assert bound_pairs(plain.score_names, conventions([plain])) == {}


def test_frames_and_comparisons_give_the_interval_as_columns(reports) -> None:
    whole, chunks, plain = reports
    bounds = whole.frames().bounds()
    assert list(bounds.columns) == [
        "query_mode",
        "score",
        "upper_score",
        "lower",
        "upper",
        "condensed",
    ]
    row = bounds.set_index("score").loc[NDCG]
    means = _means(whole)
    assert row["upper_score"] == UPPER
    assert (row["lower"], row["upper"], row["condensed"]) == pytest.approx(
        (means[NDCG], means[UPPER], means[CONDENSED])
    )
    assert (bounds["lower"] <= bounds["upper"] + 1e-12).all() and len(bounds) == 25
    assert plain.frames().bounds().empty
    # a comparison narrowed to nDCG@10 still finds its upper bound in the reports
    both = compare([whole, chunks]).select(scores=[NDCG])
    assert comparison_bound_pairs(both) == {NDCG: UPPER}
    table = both.bounds().set_index("variant")
    assert table.loc["chunks · full_text_search", "upper"] == pytest.approx(_means(chunks)[UPPER])


def test_the_card_shows_one_interval_and_says_how_each_score_counts_unjudged(reports) -> None:
    whole, _, plain = reports
    html = whole.card()._repr_html_()
    means = _means(whole)
    assert interval_text(means[NDCG], means[UPPER]).split(" ", 1)[1] in html  # [0.296, 0.697]
    rows = re.findall(r"<tr><td>(.*?)</td>", html)
    assert not any(r.startswith("beir_ndcg_upper@") for r in rows)  # folded into the interval
    assert any(r.startswith(CONDENSED) and "overestimates" in r for r in rows)
    line = judged_line(whole)
    assert line is not None and "judged@10" in line
    assert (
        "beir_ndcg/map/recall/precision/mrr@1/3/5/10/100: trec_eval's value with its bounds" in line
    )
    assert "overestimates systems that retrieve many unjudged documents" in line
    assert "so these scores are lower bounds" not in line  # no longer one claim for all
    # the plain report on full labels still says what it said: trec_eval's convention only
    plain_line = judged_line(plain)
    assert plain_line is not None and "lower bounds" in plain_line
    assert "bounds [" not in plain_line and 'class="hn-bounds"' not in plain.card()._repr_html_()


def test_a_comparison_shows_intervals_and_notes_each_convention(reports) -> None:
    whole, chunks, plain = reports
    both = compare([whole, chunks]).select(scores=[NDCG, UPPER, CONDENSED, "judged@10"])
    html = both._repr_html_()
    for report in (whole, chunks):
        means = _means(report)
        assert interval_text(means[NDCG], means[UPPER]).split(" ", 1)[1] in html
    rows = re.findall(r"<tr><td><b>(.*?)</b>", html)
    assert rows == [NDCG, CONDENSED, "judged@10"]  # the upper bound is in nDCG@10's cells
    (note,) = [n for n in both.notes() if "unjudged documents" in n]
    assert "beir_ndcg@10: trec_eval's value with its bounds" in note
    assert "beir_ndcg_condensed@10: condensed lists drop unjudged documents" in note
    assert not [n for n in compare([plain]).notes() if "how each score counts" in n]


def test_paper_tables_and_captions_show_the_interval_and_each_convention(reports) -> None:
    whole, chunks, _ = reports
    means = _means(whole)
    both = compare([whole, chunks])
    markdown = both.to_markdown([NDCG, UPPER, CONDENSED])
    header = markdown.splitlines()[0]
    assert header == "| System | nDCG@10 | nDCG@10 (condensed) |"  # the upper: in the cells
    assert f"{means[NDCG]:.3f}** \\[{means[NDCG]:.3f}, {means[UPPER]:.3f}\\]" in markdown
    assert "nDCG@10: trec\\_eval's value with its bounds" in markdown
    assert "nDCG@10 (condensed): condensed lists drop unjudged documents" in markdown
    latex = whole.to_latex([NDCG, UPPER, CONDENSED])
    assert f"[{means[NDCG]:.3f}, {means[UPPER]:.3f}]" in latex and "(upper)" not in latex
    bench = compare_benchmarks([whole, chunks]).to_markdown()  # the headline and its Mean
    bounds = f"\\[{means[NDCG]:.3f}, {means[UPPER]:.3f}\\]"
    (row,) = [line for line in bench.splitlines() if line.startswith("| whole")]
    assert row.count(bounds) == 2 and "nDCG@10: trec\\_eval's value with its bounds" in bench
    assert "overestimates systems that retrieve many unjudged documents" in latex
    # the caption of the trec_eval score alone still names its bounds, never "non-relevant" only
    caption = judged_caption([whole], [NDCG])
    assert "Labelled share of the top k (judged@10" in caption
    assert "with its bounds [unjudged documents as non-relevant, as relevant" in caption
    alone = judged_caption([whole], [UPPER])  # an upper bound shown on its own
    assert "unjudged documents count as relevant (grade 1): upper bounds" in alone


def test_conventions_survive_a_saved_report(reports, tmp_path) -> None:
    whole, _, _ = reports
    for fmt in ("heta", "columnar"):
        again = EvaluationReport.load(whole.save(tmp_path / f"{fmt}.out", format=fmt))
        assert conventions([again]) == conventions([whole])
        assert unjudged_sentence([again], [NDCG, CONDENSED]) == unjudged_sentence(
            [whole], [NDCG, CONDENSED]
        )
        assert again.frames().bounds().equals(whole.frames().bounds())


def test_names_are_listed_with_their_cutoffs_and_metrics_together() -> None:
    names = ["beir_ndcg@1", "beir_ndcg@10", "beir_map@1", "beir_map@10", "beir_ndcg_condensed@10"]
    assert name_list(names) == "beir_ndcg/map@1/10, beir_ndcg_condensed@10"
    assert name_list(["nDCG@10", "R@10", "judged"]) == "nDCG@10, R@10, judged"


def test_conventions_without_evaluator_manifests_read_score_metadata_and_build_no_record(
    reports, tmp_path, monkeypatch
) -> None:
    """A report that recorded no evaluator list (an older or hand-made one) has its scores'
    conventions read from the first case results' score metadata: for a stored report, from
    the scores table alone, with no case record built (the card built 50 for it before, and
    every record of a labelled report for a corrected mean it then could not give)."""
    from heta_notebook.reports import _stored

    whole, _, _ = reports
    metadata = {k: v for k, v in whole.metadata.items() if k != "evaluators"}
    bare = whole.model_copy(update={"metadata": metadata})
    stored = EvaluationReport.load(bare.save(tmp_path / "bare.out", format="columnar"))
    built: list[int] = []
    build = _stored._build_rows  # every record of a stored report is built here
    monkeypatch.setattr(
        _stored, "_build_rows", lambda c, a, b, *k: built.append(b - a) or build(c, a, b, *k)
    )
    assert conventions([stored]) == conventions([bare]) == conventions([whole])
    assert "condensed" in conventions([stored]).values()
    assert unjudged_sentence([stored], [NDCG, CONDENSED]) == unjudged_sentence(
        [whole], [NDCG, CONDENSED]
    )
    stored._repr_html_()  # its label set has no human label: no corrected mean to read runs for
    assert sum(built) == 0
