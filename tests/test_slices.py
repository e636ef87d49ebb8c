"""Slices: summary(by=), the card's per-slice table, compare(by=) and BEIR labels, checked
against means and paired differences computed by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from heta_notebook.analysis import _stats as stats
from heta_notebook.analysis._compare import compare
from heta_notebook.benchmarks._beir import BeirBenchmark
from heta_notebook.benchmarks._io import BenchmarkFormatError, BenchmarkWarning
from heta_notebook.benchmarks._labels import read_labels
from heta_notebook.schema import (
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationError,
    EvaluationReport,
    EvaluationScore,
    QueryResponse,
)

# case id → (topic, difficulty); the topic is a case label, difficulty a metadata key
CASES = {
    "c1": ("flow", "hard"),
    "c2": ("heat", "easy"),
    "c3": ("flow", "easy"),
    "c4": ("heat", "hard"),
    "c5": ("flow", "easy"),
    "c6": (None, "easy"),
}
# values of score "m" per case under bm25 and dense; None = skipped
BM25 = {"c1": 0.2, "c2": 0.8, "c3": 0.6, "c4": None, "c5": 0.1, "c6": 0.5}
DENSE = {"c1": 0.4, "c2": 1.0, "c3": 0.7, "c4": 0.3, "c5": 0.3, "c6": 0.5}


def result(case_id, mode, value, *, shift=0.0, fail=False):
    topic, difficulty = CASES[case_id]
    metadata = {"difficulty": difficulty, **({"labels": {"topic": topic}} if topic else {})}
    if fail:
        error = EvaluationError(message="timeout", error_type="TimeoutError")
        return EvaluationCaseResult(
            case_id=case_id,
            query=f"query {case_id}",
            query_mode=mode,
            error=error,
            metadata=metadata,
        )
    if value is None:
        score = EvaluationScore.skipped_score("m", "no qrels")
    else:
        score = EvaluationScore(name="m", value=value + shift, passed=value + shift >= 0.5)
    return EvaluationCaseResult(
        case_id=case_id,
        query=f"query {case_id}",
        query_mode=mode,
        scores=(score,),
        response=QueryResponse(mode=mode),
        metadata=metadata,
    )


def report(name="base", shift=None, fail=()):
    shift = shift or {}
    results = [
        result(c, "bm25", v, shift=shift.get(c, 0.0), fail=c in fail) for c, v in BM25.items()
    ]
    results += [result(c, "dense", v, shift=shift.get(c, 0.0)) for c, v in DENSE.items()]
    return EvaluationReport(
        report_id=name,
        benchmark=BenchmarkManifest(name="toy"),
        knowledge_base_name=name,
        recipe_manifest={"name": name},
        query_modes=("bm25", "dense"),
        case_results=tuple(results),
        started_at="2026-01-01T00:00:00",
        finished_at="2026-01-01T00:01:00",
    )


def test_summary_by_label_matches_hand_computed_means():
    summary = report().summary(by="topic").set_index(["topic", "query_mode", "score"])
    # flow: c1, c3, c5; heat: c2, c4 (c4 skipped under bm25); (none): c6
    assert summary.loc[("flow", "bm25", "m"), "mean"] == pytest.approx((0.2 + 0.6 + 0.1) / 3)
    assert summary.loc[("flow", "dense", "m"), "mean"] == pytest.approx((0.4 + 0.7 + 0.3) / 3)
    assert summary.loc[("heat", "bm25", "m"), "mean"] == pytest.approx(0.8)
    assert summary.loc[("heat", "bm25", "m"), ["n", "n_skipped"]].tolist() == [1, 1]
    assert summary.loc[("heat", "dense", "m"), "mean"] == pytest.approx((1.0 + 0.3) / 2)
    assert summary.loc[("(none)", "dense", "m"), "mean"] == pytest.approx(0.5)
    flow = np.array([0.4, 0.7, 0.3])
    assert summary.loc[("flow", "dense", "m"), "std"] == pytest.approx(flow.std(ddof=1))
    assert summary.loc[("flow", "dense", "m"), "pass_rate"] == pytest.approx(1 / 3)
    assert list(dict.fromkeys(summary.index.get_level_values(0))) == ["flow", "heat", "(none)"]


def test_summary_by_metadata_key_and_failed_queries_count_as_errors_in_their_slice():
    summary = report(fail=("c2",)).summary(by="difficulty").set_index(["difficulty", "query_mode"])
    easy_bm25 = summary.loc[("easy", "bm25")]
    assert easy_bm25["mean"] == pytest.approx((0.6 + 0.1 + 0.5) / 3)  # c2 failed, c3, c5, c6
    assert (easy_bm25["n"], easy_bm25["n_error"]) == (3, 1)
    assert summary.loc[("hard", "bm25"), "n_error"] == 0
    assert summary.loc[("hard", "dense"), "mean"] == pytest.approx((0.4 + 0.3) / 2)


def test_one_slice_of_everything_equals_the_overall_summary():
    r = report()
    overall = r.summary().set_index(["query_mode", "score"])
    one = (
        r.summary(by=lambda result: "all").set_index(["query_mode", "score"]).drop(columns="slice")
    )
    for column in ("mean", "n", "std", "ci_low", "ci_high", "pass_rate", "n_skipped"):
        np.testing.assert_array_equal(one[column].to_numpy(), overall[column].to_numpy())


def test_card_shows_a_per_slice_table_escaped():
    r = report()
    html = r.card(by="topic")._repr_html_()
    assert "By topic" in html and "flow" in html and "heat" in html and "(none)" in html
    assert "0.300" in html  # flow · bm25 mean (0.2 + 0.6 + 0.1) / 3
    assert "By topic" not in r._repr_html_()  # the default card is unchanged
    with pytest.raises(KeyError, match="no score 'nope'"):
        r.card(by="topic", scores=["nope"])._repr_html_()


def test_the_card_slices_the_headline_score_by_default():
    # the same rule as every headline (analysis._headline): a preferred @10 score over the first
    r = report()
    extra = EvaluationScore(name="beir_map@10", value=0.25, passed=False)
    r = r.model_copy(
        update={
            "case_results": tuple(
                c.model_copy(update={"scores": (*c.scores, extra)}) if c.scores else c
                for c in r.case_results
            )
        }
    )
    html = r.card(by="topic")._repr_html_()
    table = html[html.index("By topic") :]
    assert "beir_map@10" in table and "<td>m</td>" not in table


def test_compare_by_tests_each_slice_inside_one_holm_family():
    gain = {"c1": 0.1, "c3": 0.2, "c5": 0.3}  # the new recipe helps "flow" only
    c = compare([report("base"), report("new", shift=gain)], by="topic", n_resamples=2000)
    sig = c.significance()
    assert set(sig["slice"]) == {"flow", "heat", "(none)"}
    assert len(sig) == 3 * 2  # slices × modes (one score, one pair per mode)
    flow = sig[(sig["slice"] == "flow") & (sig["variant"] == "new · bm25")].iloc[0]
    assert flow["delta"] == pytest.approx(np.mean([0.1, 0.2, 0.3]))
    assert flow["n_pairs"] == 3 and flow["wins"] == 3
    assert flow["baseline_mean"] == pytest.approx((0.2 + 0.6 + 0.1) / 3)
    heat = sig[(sig["slice"] == "heat") & (sig["variant"] == "new · bm25")].iloc[0]
    assert heat["delta"] == 0 and heat["n_pairs"] == 1  # c4 is skipped under bm25
    # Holm over every slice × score × pair together, not per slice
    np.testing.assert_allclose(sig["p_holm"], stats.holm(sig["p_value"].to_numpy()))
    # each slice's test equals the test on that slice's cases alone
    alone = stats.paired_test(np.array([0.1, 0.2, 0.3]), n_resamples=2000)
    assert flow["p_value"] == pytest.approx(alone.p_value[0])
    # the overall table is unchanged, and the page shows the per-slice tests
    assert "slice" not in c.significance(by=None).columns
    assert "By slice" in c.to_html()
    with_difficulty = c.significance(by="difficulty")
    assert set(with_difficulty["slice"]) == {"hard", "easy"}


def _beir_folder(tmp_path):
    folder = tmp_path / "mini"
    (folder / "qrels").mkdir(parents=True)
    docs = [
        {"_id": f"d{i}", "title": "", "text": f"document {i} about wing flow"} for i in range(4)
    ]
    queries = [{"_id": "1", "text": "wing"}, {"_id": "2", "text": "flow"}]
    (folder / "corpus.jsonl").write_text("\n".join(map(__import__("json").dumps, docs)))
    (folder / "queries.jsonl").write_text("\n".join(map(__import__("json").dumps, queries)))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td0\t1\n2\td1\t2\n")
    return folder


def test_beir_labels_from_a_tsv_file_a_jsonl_file_or_a_mapping(tmp_path):
    folder = _beir_folder(tmp_path)
    tsv = tmp_path / "labels.tsv"
    tsv.write_text("query-id\ttopic\tdifficulty\n1\taero\thard\n2\tflow\t\n")
    _, _, cases = BeirBenchmark(folder, labels=tsv).load()
    assert cases[0].labels == {
        "dataset": "mini",
        "split": "test",
        "topic": "aero",
        "difficulty": "hard",
    }
    assert cases[1].labels["topic"] == "flow" and "difficulty" not in cases[1].labels
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text('{"_id": "1", "labels": {"topic": "aero"}}\n{"query_id": "2", "topic": "x"}\n')
    _, _, cases = BeirBenchmark(folder, labels=jsonl).load()
    assert [c.labels["topic"] for c in cases] == ["aero", "x"]
    _, _, cases = BeirBenchmark(folder, labels={"2": {"topic": "flow"}}).load()
    assert "topic" not in cases[0].labels and cases[1].labels["topic"] == "flow"


def test_bad_labels_name_the_file_and_line_and_unknown_queries_warn(tmp_path):
    folder = _beir_folder(tmp_path)
    bad = tmp_path / "bad.tsv"
    bad.write_text("query-id\ttopic\n1\taero\textra\n")
    with pytest.raises(BenchmarkFormatError, match=r"bad.tsv:2: expected 2 columns"):
        BeirBenchmark(folder, labels=bad).load()
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"_id": "1", "topic": "a"}\n{"_id": "1", "topic": "b"}\n')
    with pytest.raises(BenchmarkFormatError, match=r"dup.jsonl:2: duplicate query id '1'"):
        read_labels(dup)
    with pytest.warns(BenchmarkWarning, match="dropped labels of 1 unknown query"):
        BeirBenchmark(folder, labels={"99": {"topic": "x"}, "1": {"topic": "a"}}).load()
    with pytest.raises(BenchmarkFormatError, match="must be a mapping"):
        read_labels({"1": "aero"})  # type: ignore[dict-item]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_labels({"1": {"topic": "a"}}, known={"1"})


@pytest.mark.slow
async def test_cranfield_run_with_labels_sliced_end_to_end(tmp_path):
    """BEIR labels travel through a real run into summary(by=) and compare(by=)."""
    from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, Recipe

    topics = {str(q): ("even" if q % 2 == 0 else "odd") for q in range(1, 226)}
    bench = BeirBenchmark.cranfield(labels={q: {"parity": t} for q, t in topics.items()})
    config = BenchmarkRunConfig(max_concurrent_queries=4)  # top_k: as deep as the scores
    runs = [
        (
            await BenchmarkRunner().run(
                benchmark=bench,
                recipe=Recipe(name=n, dense=None, hybrid=None, **kw),
                config=config,
                progress=False,
            )
        ).report
        for n, kw in (("bm25", {}), ("bm25-k1", {"bm25": {"k1": 0.5}}))
    ]
    r = runs[0]
    summary = r.summary(by="parity").set_index(["parity", "score"])
    values = {res.case_id: res.score("beir_ndcg@10").value for res in r.case_results}
    even = [v for c, v in values.items() if topics[c] == "even"]
    assert summary.loc[("even", "beir_ndcg@10"), "mean"] == pytest.approx(np.mean(even))
    assert summary.loc[("even", "beir_ndcg@10"), "n"] == len(even)
    sig = compare(runs, by="parity", n_resamples=500).significance()
    assert set(sig["slice"]) == {"even", "odd"}
