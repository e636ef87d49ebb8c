"""Label sets, judged@k, hole conventions, pools, agreement and the corrected mean."""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

from heta_notebook.benchmarks import BeirBenchmark
from heta_notebook.benchmarks._beir import cranfield_folder
from heta_notebook.benchmarks._io import BenchmarkFormatError
from heta_notebook.evaluators._matching import document_scores
from heta_notebook.evaluators._retrieval import BeirRetrievalMetric, evaluate_run
from heta_notebook.labels import (
    HoleAwareMetric,
    JudgedAtK,
    Label,
    LabelSet,
    UnjudgedWarning,
    agreement,
    case_qrels,
    cohen_kappa,
    corrected_mean,
    labeled,
    labels_of,
    pool,
    score_with_labels,
)
from heta_notebook.labels._pool import rankings_of
from heta_notebook.labels._set import files_of, journal_of, read_trec_qrels
from heta_notebook.schema._records import (
    BenchmarkCase,
    BenchmarkManifest,
    EvaluationCaseResult,
    EvaluationError,
    EvaluationReport,
    QueryResponse,
    QueryResult,
)

ORIGINAL = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}


def _set() -> LabelSet:
    labels = LabelSet(ORIGINAL, name="toy")
    labels.add(Label("q1", "d9", 3, "judge", "umbrela", model="m", prompt_hash="abc", reason="x"))
    labels.add(Label("q1", "d9", 1, "human", "ana"))  # a person's label wins over the judge's
    labels.add(Label("q1", "d1", 0, "human", "ana"))  # never replaces an original label
    labels.add(Label("q2", "d4", 0, "judge", "umbrela", model="m", prompt_hash="abc"))
    return labels


def test_label_set_round_trips_with_provenance_and_never_changes_the_original(
    tmp_path: Path,
) -> None:
    labels = _set()
    assert labels.qrels() == {"q1": {"d1": 2, "d2": 0, "d9": 1}, "q2": {"d3": 1, "d4": 0}}
    assert labels.original == ORIGINAL
    with pytest.raises(TypeError):
        labels.original["q1"]["d1"] = 5  # type: ignore[index]
    labels.save(tmp_path / "set")
    qrels_file, sidecar = files_of(tmp_path / "set")
    assert read_trec_qrels(qrels_file) == labels.qrels()
    assert json.loads(sidecar.read_text())["format"] == "heta_notebook.labels"
    back = LabelSet.load(tmp_path / "set")
    assert back.added == labels.added  # provenance included: who, model, prompt hash, time, reason
    assert back.qrels() == labels.qrels() and back.original == ORIGINAL
    assert back.fingerprint() == labels.fingerprint() != LabelSet(ORIGINAL).fingerprint()


def test_tampered_files_are_refused_naming_the_file_and_field(tmp_path: Path) -> None:
    labels = _set()
    labels.save(tmp_path / "set")
    qrels_file, sidecar = files_of(tmp_path / "set")
    qrels_file.write_text(qrels_file.read_text().replace("d9 1", "d9 2"))
    with pytest.raises(BenchmarkFormatError, match=r"set\.qrels.*does not match its sidecar"):
        LabelSet.load(tmp_path / "set")
    with pytest.raises(FileExistsError, match=r"set\.qrels.*does not match its sidecar"):
        labels.save(tmp_path / "set")  # a hand-edited file is not silently written over
    qrels_file.unlink()
    sidecar.unlink()
    labels.save(tmp_path / "set")
    meta = json.loads(sidecar.read_text())
    meta["added"][0]["grade"] = "high"
    sidecar.write_text(json.dumps(meta))
    with pytest.raises(BenchmarkFormatError, match=r"labels\.json.*added\[0\].*grade"):
        LabelSet.load(tmp_path / "set")
    qrels_file.write_text("q1 0 d1\n")
    with pytest.raises(BenchmarkFormatError, match=r"set\.qrels:1: a TREC qrels line has 4 fields"):
        read_trec_qrels(qrels_file)


def test_an_open_set_journals_every_label_so_a_restart_loses_nothing(tmp_path: Path) -> None:
    labels = LabelSet.open(tmp_path / "mine", ORIGINAL)
    labels.add(Label("q2", "d7", 3, "human", "ana"))
    assert journal_of(tmp_path / "mine").exists()
    del labels  # "the kernel restarts": nothing saved but the journal
    again = LabelSet.open(tmp_path / "mine", ORIGINAL)
    assert again.grade("q2", "d7") == 3 and again.added[0].who == "ana"
    with pytest.raises(ValueError, match="other original qrels"):
        LabelSet.open(tmp_path / "mine", {"q1": {"d1": 1}})
    with journal_of(tmp_path / "mine").open("a") as handle:
        handle.write('{"query_id": "q2", "doc_id"')  # a torn last line
    with pytest.raises(BenchmarkFormatError, match=r"mine\.journal\.jsonl:2: not JSON"):
        LabelSet.load(tmp_path / "mine")


CRANFIELD_QRELS = cranfield_folder() / "qrels" / "test.tsv"  # the package's copy


def _cranfield_trec_qrels(folder: Path) -> Path:
    """Cranfield's qrels as a benchmark ships TREC qrels: ``cranfield.qrels``, ``Q0`` column."""
    rows = [line.split("\t") for line in CRANFIELD_QRELS.read_text().splitlines()[1:]]
    target = folder / "cranfield.qrels"
    target.write_text("".join(f"{q} Q0 {d} {g.strip()}\n" for q, d, g in rows))
    return target


def test_saving_over_original_qrels_refuses_and_leaves_their_bytes_unchanged(
    tmp_path: Path,
) -> None:
    original = _cranfield_trec_qrels(tmp_path)
    before = original.read_bytes()
    plain = LabelSet(read_trec_qrels(original))  # no origin known: the sidecar rule refuses
    for labels in (LabelSet.from_qrels(original), plain):
        labels.add(Label("1", "999", 2, "human", "ana"))
        with pytest.raises(FileExistsError, match=r"cranfield\.qrels.*choose another path"):
            labels.save(tmp_path / "cranfield")
    with pytest.raises(FileExistsError, match=r"cranfield\.qrels.*choose another path"):
        LabelSet.open(tmp_path / "cranfield", plain.original)
    assert original.read_bytes() == before
    assert not files_of(tmp_path / "cranfield")[1].exists()  # no sidecar left behind either


def test_a_set_resaves_to_its_own_path_but_never_over_another_sets_or_its_origin(
    tmp_path: Path,
) -> None:
    labels = _set()
    labels.save(tmp_path / "set")
    labels.add(Label("q2", "d8", 1, "human", "ana"))
    labels.save(tmp_path / "set")  # saving as labels are made: the same path again
    assert LabelSet.load(tmp_path / "set").added == labels.added
    other = LabelSet({"q1": {"d1": 1}}, name="other")
    with pytest.raises(FileExistsError, match=r"set\.labels\.json: .*other original qrels"):
        other.save(tmp_path / "set")
    assert LabelSet.load(tmp_path / "set").added == labels.added
    qrels_file, _ = files_of(tmp_path / "set")
    from_file = LabelSet.from_qrels(qrels_file)  # a set whose original is that saved file
    with pytest.raises(FileExistsError, match=r"set\.qrels: is the file .* read from"):
        from_file.save(tmp_path / "set")
    assert from_file.save(tmp_path / "copy") == files_of(tmp_path / "copy")[0]


def _case(qrels: dict[str, int], nonrelevant: dict[str, int] | None = None) -> BenchmarkCase:
    from heta_notebook.schema._records import BenchmarkEvidence, BenchmarkExpected

    evidence = tuple(
        BenchmarkEvidence(reference_id=d, metadata={"relevance": g}) for d, g in qrels.items()
    )
    meta = {"judged_nonrelevant": nonrelevant} if nonrelevant else {}
    return BenchmarkCase(
        case_id="c", query="q", expected=BenchmarkExpected(evidence=evidence, metadata=meta)
    )


def _response(docs: list[str]) -> QueryResponse:
    results = tuple(
        QueryResult(id=f"r{i}", score=10.0 - i, source={"benchmark_document_id": d})
        for i, d in enumerate(docs)
    )
    return QueryResponse(mode="m", results=results)


def test_judged_at_k_counts_grade_zero_as_judged_and_warns_on_holes() -> None:
    case = _case({"a": 2}, nonrelevant={"b": 0})
    with pytest.warns(UnjudgedWarning, match="unjudged documents in their top 4"):
        (score,) = JudgedAtK(4).evaluate_batch([case], [_response(["a", "x", "b", "y"])])
    assert score.value == 0.5 and score.metadata["judged"] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (full,) = JudgedAtK(2).evaluate_batch([case], [_response(["b", "a", "x"])])
    assert full.value == 1.0


def test_beir_loader_keeps_grade_zero_labels_as_judged(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    docs = [{"_id": d, "title": "", "text": f"text of {d}"} for d in ("d1", "d2", "d3")]
    (tmp_path / "corpus.jsonl").write_text("\n".join(map(json.dumps, docs)))
    (tmp_path / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "what"}))
    (tmp_path / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n"
    )
    _, _, cases = BeirBenchmark.from_folder(tmp_path).load()
    assert case_qrels(cases[0]) == {"d1": 1, "d2": 0}
    assert [e.reference_id for e in cases[0].expected.evidence] == ["d1"]  # evidence unchanged
    assert labels_of(BeirBenchmark.from_folder(tmp_path)).qrels() == {"q1": {"d1": 1, "d2": 0}}


def _random_runs(seed: int, queries: int = 30) -> tuple[dict, dict]:
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(queries):
        docs = [f"d{i}" for i in range(40)]
        judged = rng.sample(docs, 15)
        qrels[f"q{q}"] = {d: rng.choice([0, 0, 1, 2, 3]) for d in judged}
        qrels[f"q{q}"][judged[0]] = 2  # at least one relevant
        run[f"q{q}"] = {d: round(rng.random(), 3) for d in rng.sample(docs, 20)}
    return qrels, run


def test_condensed_equals_pytrec_eval_on_the_run_without_unjudged_documents() -> None:
    qrels, run = _random_runs(1)
    with pytest.warns(UnjudgedWarning):
        ours = score_with_labels(
            run, qrels, [BeirRetrievalMetric("ndcg", 10)], unjudged="condensed"
        )
    condensed = {q: {d: s for d, s in r.items() if d in qrels[q]} for q, r in run.items()}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(condensed)
    for q in qrels:
        assert ours[q]["beir_ndcg_condensed@10"] == pytest.approx(
            oracle[q]["ndcg_cut_10"], abs=1e-12
        )
        assert 0 < ours[q]["judged@10"] < 1


def test_bounds_hold_the_trec_eval_value_and_the_upper_equals_unjudged_as_relevant() -> None:
    qrels, run = _random_runs(2)
    metrics = [BeirRetrievalMetric(m, 10) for m in ("ndcg", "recall", "precision", "map")]
    with pytest.warns(UnjudgedWarning):
        low = score_with_labels(run, qrels, metrics)
        high = score_with_labels(run, qrels, metrics, unjudged="relevant")
    plain = evaluate_run(qrels, run, metrics)
    for q in qrels:
        for m in ("ndcg", "recall", "precision", "map"):
            assert low[q][f"beir_{m}@10"] == plain[q][f"beir_{m}@10"]
            assert high[q][f"beir_{m}_upper@10"] >= low[q][f"beir_{m}@10"] - 1e-12
        top = sorted(run[q].items(), key=lambda x: (x[1], x[0].encode()), reverse=True)[:10]
        filled = {**qrels[q], **{d: 1 for d, _ in top if d not in qrels[q]}}
        oracle = pytrec_eval.RelevanceEvaluator({q: filled}, {"P.10"}).evaluate({q: run[q]})
        assert high[q]["beir_precision_upper@10"] == pytest.approx(oracle[q]["P_10"])


def test_hole_aware_metric_on_cases_equals_the_run_path() -> None:
    case = _case({"a": 2, "c": 1}, nonrelevant={"b": 0})
    response = _response(["x", "a", "y", "b", "c"])
    for unjudged in ("condensed", "relevant"):
        (score,) = HoleAwareMetric(BeirRetrievalMetric("ndcg", 3), unjudged).evaluate_batch(
            [case], [response]
        )
        run = {"c": {d: 10.0 - i for i, d in enumerate(["x", "a", "y", "b", "c"])}}
        with pytest.warns(UnjudgedWarning):
            want = score_with_labels(
                run, {"c": case_qrels(case)}, [BeirRetrievalMetric("ndcg", 3)], unjudged=unjudged
            )  # type: ignore[arg-type]
        name = "beir_ndcg_condensed@3" if unjudged == "condensed" else "beir_ndcg_upper@3"
        assert score.name == name and score.value == want["c"][name]
        assert score.metadata["unjudged"] == unjudged


def test_pool_lists_unjudged_pairs_by_how_many_systems_ranked_them_then_best_rank() -> None:
    a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d5": 1.0, "d6": 1.0}}
    b = {"q1": {"d3": 3.0, "d4": 2.0, "d1": 1.0}}
    result = pool([a, b], depth=2, labels={"q1": {"d1": 1}})
    frame = result.frame.set_index(["query_id", "doc_id"])
    assert frame.loc[("q1", "d3"), "systems"] == 1  # a ranks d3 third: beyond depth 2
    assert ("q1", "d1") not in frame.index  # judged
    # rank 1 before rank 2; q2's tie d5/d6 is broken by id descending (trec_eval): d6 first
    assert result.pairs() == [("q1", "d3"), ("q2", "d6"), ("q1", "d2"), ("q1", "d4"), ("q2", "d5")]
    both = pool([a, b], depth=3)
    assert both.pairs()[:2] == [("q1", "d1"), ("q1", "d3")]  # ranked by both systems
    with pytest.raises(TypeError, match="pool\\(\\) takes reports"):
        pool([3])


def _hit(rid: str, score: float | None, **where: object) -> QueryResult:
    source = {k: v for k, v in where.items() if k != "metadata"}
    return QueryResult(id=rid, score=score, source=source, metadata=where.get("metadata") or {})


def _pool_report(seed: int) -> EvaluationReport:
    """Two modes over 40 cases: chunks of one document, ids named in metadata or a raw key,
    results naming no document, tied scores, an unscored case, errors, empty responses."""
    rng = random.Random(seed)
    results = []
    for i in range(40):
        for mode in ("bm25", "dense"):
            if i == 3 and mode == "dense":
                error = EvaluationError(message="timed out", error_type="TimeoutError")
                results.append(
                    EvaluationCaseResult(case_id=f"q{i}", query="x", query_mode=mode, error=error)
                )
                continue
            hits = []
            for r in range(rng.randint(0, 14)):
                doc, score = f"d{rng.randint(0, 25)}", round(rng.random(), 1)  # ties
                kind = rng.randint(0, 5)
                if kind == 0:  # metadata naming no document key: read as none
                    meta = {"rank": r, "title": f"t{r}"}
                    hits.append(_hit(f"{doc}#{r}", score, benchmark_document_id=doc, metadata=meta))
                elif kind == 1:
                    hits.append(_hit(f"c{r}", score, metadata={"document_id": doc}))
                elif kind == 2:
                    hits.append(_hit(f"c{r}", score, source_key=f"raw/benchmarks/b/test/{doc}/f"))
                elif kind == 3:
                    hits.append(_hit(f"c{r}", score, title="names no document"))
                else:
                    hits.append(_hit(f"{doc}#{r}", score, benchmark_document_id=doc, page=r % 2))
            if i == 5 and hits:
                hits[-1] = hits[-1].model_copy(update={"score": None})  # the case is unscored
            response = QueryResponse(mode=mode, results=tuple(hits))
            results.append(
                EvaluationCaseResult(case_id=f"q{i}", query="x", query_mode=mode, response=response)
            )
    return EvaluationReport(
        report_id=f"r{seed}",
        benchmark=BenchmarkManifest(name="toy", version="1", split="test"),
        knowledge_base_name=f"kb{seed}",
        case_results=tuple(results),
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:01:00Z",
    )


def _record_runs(report: EvaluationReport) -> list[dict[str, object]]:
    """Each mode of ``report`` as a plain run, one record at a time by the metrics' own
    collapse (``document_scores``); an unscored case as its ranked list."""
    runs: dict[str, dict[str, object]] = {}
    for result in report.case_results:
        if result.response is not None:
            ids, scores = document_scores(result.response.results)
            run = ids if scores is None else dict(zip(ids, scores, strict=True))
            runs.setdefault(result.query_mode, {})[result.case_id] = run
    return list(runs.values())


def test_pool_of_reports_equals_the_pool_of_their_runs_in_memory_and_stored(
    tmp_path: Path,
) -> None:
    reports = [_pool_report(seed) for seed in range(3)]
    stored = [
        EvaluationReport.load(r.save(tmp_path / r.report_id, format="columnar")) for r in reports
    ]
    runs = [run for r in reports for run in _record_runs(r)]
    labels = {"q1": {"d1": 1, "d2": 0}, "q7": {"d3": 2}}
    for depth in (1, 3, 10):
        expected = pool(runs, depth=depth, labels=labels)
        for given in (reports, stored):
            found = pool(given, depth=depth, labels=labels)
            pd.testing.assert_frame_equal(found.frame, expected.frame)  # order included
            assert found.pairs() == expected.pairs() and len(found.systems) == 6
    for depth in (None, 4):
        expected_rankings = list(rankings_of(runs, depth).values())
        assert list(rankings_of(stored, depth).values()) == expected_rankings
        assert list(rankings_of(reports, depth).values()) == expected_rankings


def test_kappa_matches_statsmodels_plain_and_weighted() -> None:
    from statsmodels.stats.inter_rater import cohens_kappa

    rng = np.random.default_rng(0)
    truth = rng.integers(0, 4, 300)
    judge = np.clip(truth + rng.choice([-1, 0, 0, 0, 1, 2], 300), 0, 3)
    table = np.zeros((4, 4))
    np.add.at(table, (judge, truth), 1)
    assert cohen_kappa(judge, truth) == pytest.approx(cohens_kappa(table).kappa)
    for weights in ("linear", "quadratic"):
        want = cohens_kappa(table, wt=weights).kappa
        assert cohen_kappa(judge, truth, weights=weights) == pytest.approx(want)  # type: ignore[arg-type]
    pairs = [(f"q{i % 5}", f"d{i}") for i in range(300)]
    result = agreement(
        dict(zip(pairs, judge.tolist(), strict=True)),
        dict(zip(pairs, truth.tolist(), strict=True)),
        by=lambda p: p[0],
    )
    assert result.n == 300 and result.confusion.to_numpy().sum() == 300
    assert list(result.by_slice["n"]) == [60] * 5  # type: ignore[index]


def test_corrected_mean_covers_the_truth_where_the_judge_only_mean_is_biased() -> None:
    """The issue's coverage test on arrays: real Cranfield grades as the truth; a judge wrong
    on 20% of the pairs, always upward; 150 human labels per seed; 50 seeds."""
    truth_qrels = labels_of(BeirBenchmark.cranfield()).qrels()
    truth = np.array([min(g, 3) for docs in truth_qrels.values() for g in docs.values()], float)
    truth = np.concatenate([truth, np.zeros(len(truth))])  # the pool's non-relevant half
    covered, biased = 0, 0
    for seed in range(50):
        rng = np.random.default_rng(seed)
        wrong = rng.random(len(truth)) < 0.2
        judge = np.where(wrong, np.minimum(truth + rng.integers(1, 3, len(truth)), 3), truth)
        judge = np.where(wrong & (truth == 3), 3, judge)  # cannot go above 3: stays right
        labelled = rng.choice(len(truth), 150, replace=False)
        result = corrected_mean(judge, truth[labelled], judge[labelled])
        covered += result.low <= truth.mean() <= result.high
        se = (result.high - result.low) / (2 * 1.959964)
        biased += result.judge_only > truth.mean() + 3 * se
    assert covered >= 45  # >= 90% of 50 seeds
    assert biased == 50  # the judge-only mean misses upward by more than 3 standard errors


def test_a_benchmark_on_a_label_set_names_it_and_never_equals_another(tmp_path: Path) -> None:
    bench = BeirBenchmark.cranfield()
    labels = labels_of(bench)
    more = LabelSet(labels.original, [Label("1", "999", 2, "human", "ana")])
    one, two = labeled(bench, labels), labeled(bench, more)
    assert one.manifest.key != two.manifest.key != bench.manifest.key
    assert one.manifest.metadata["label_set"]["fingerprint"] == labels.fingerprint()
    _, _, cases = two.load()
    first = next(c for c in cases if c.case_id == "1")
    assert case_qrels(first)["999"] == 2
    assert "judged@10" in [e.name for e in one.evaluators()]
