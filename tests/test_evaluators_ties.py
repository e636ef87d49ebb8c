"""Tie rules of the BEIR metrics (trec_eval / as_returned / expected) and evaluate_run's
query sets (missing="drop" / "zero"), checked against pytrec_eval and brute force."""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from heta_notebook.evaluators import _retrieval, _tie_rules  # noqa: E402
from heta_notebook.evaluators._retrieval import (  # noqa: E402
    BeirRetrievalMetric,
    _decreasing,
    beir_default_metrics,
    evaluate_batch,
    evaluate_run,
    ranked_by_rule,
)
from tests._evaluators_helpers import chunk, qrels_case, response  # noqa: E402

K_VALUES = (1, 2, 3, 5, 10)
TREC = {"ndcg": "ndcg_cut_{k}", "map": "map_cut_{k}", "recall": "recall_{k}", "precision": "P_{k}"}


def pytrec(qrels: dict, run: dict) -> dict:
    """pytrec_eval's per-query values for TREC's cut-off measures at K_VALUES."""
    cutoffs = ",".join(map(str, K_VALUES))
    measures = {template.split("_{")[0] + "." + cutoffs for template in TREC.values()}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


def tied_run(seed: int, n_docs: int = 8) -> tuple[dict, dict]:
    """A random graded case whose scores come from a few values (many exact ties)."""
    rng = random.Random(seed)
    docs = [f"d{rng.randint(0, 99)}-{i}" for i in range(n_docs)]
    scores = {d: float(rng.choice((1, 2, 2, 3, 3, 3))) for d in docs}
    qrels = {d: rng.choice((0, 0, 1, 2)) for d in docs} | {"unretrieved": 1}
    return qrels, scores


def permutations_within_ties(scores: dict[str, float]):
    """Every order of the run that keeps scores descending (all orders of each tied group)."""
    groups: dict[float, list[str]] = {}
    for doc, score in scores.items():
        groups.setdefault(score, []).append(doc)
    tied = [groups[s] for s in sorted(groups, reverse=True)]
    for choice in itertools.product(*(itertools.permutations(g) for g in tied)):
        yield {d: scores[d] for group in choice for d in group}


@pytest.mark.parametrize("convention", ["trec_eval", "heta"])
@pytest.mark.parametrize("seed", range(12))
def test_expected_is_the_average_over_every_order_of_the_tied_documents(seed, convention):
    qrels, scores = tied_run(seed)
    expected = evaluate_run(
        {"q": qrels},
        {"q": scores},
        beir_default_metrics(K_VALUES, ties="expected", convention=convention),
    )["q"]
    as_returned = beir_default_metrics(K_VALUES, ties="as_returned", convention=convention)
    orders = [
        evaluate_run({"q": qrels}, {"q": o}, as_returned)["q"]
        for o in permutations_within_ties(scores)
    ]
    assert len(orders) > 1
    for name, value in expected.items():
        assert value == pytest.approx(sum(o[name] for o in orders) / len(orders), abs=1e-12), name


def test_expected_equals_the_plain_metric_without_ties():
    qrels = {"a": 1, "b": 0, "c": 2, "d": 1}
    scores = {"a": 0.9, "b": 0.8, "c": 0.5, "d": 0.1}
    plain = evaluate_run({"q": qrels}, {"q": scores}, beir_default_metrics(K_VALUES))["q"]
    aware = evaluate_run(
        {"q": qrels}, {"q": scores}, beir_default_metrics(K_VALUES, ties="expected")
    )
    assert aware["q"] == plain


def ranked_chunks(scores: dict[str, float], order: list[str]) -> list:
    """Chunk results in ``order`` (the system's), each document as two chunks with its score."""
    return [chunk(d, i, score=scores[d] - 0.001 * i) for d in order for i in (0, 1)]


def test_trec_eval_rule_equals_pytrec_eval_on_tied_runs_case_by_case():
    """The default rule re-sorts by score, ties by id descending as bytes: pytrec_eval's numbers,
    whatever order the system returned its tied documents in."""
    cases, responses, qrels, run = [], [], {}, {}
    for seed in range(40):
        q = f"q{seed}"
        qrels[q], run[q] = tied_run(seed, n_docs=14)
        system_order = sorted(run[q], key=lambda d: (-run[q][d], d))  # ties by id ascending
        cases.append(qrels_case(qrels[q], case_id=q))
        responses.append(response(ranked_chunks(run[q], system_order)))
    metrics = beir_default_metrics(K_VALUES)
    rows = evaluate_batch([m for m in metrics if m.metric in TREC], cases, responses)
    truth = pytrec(qrels, run)
    differs = 0
    for case, scores in zip(cases, rows, strict=True):
        for score in scores:
            metric, k = score.name.removeprefix("beir_").split("@")
            reference = truth[case.case_id][TREC[metric].format(k=k)]
            assert score.value == pytest.approx(reference, abs=1e-12), (case.case_id, score.name)
    as_returned = [
        m for m in beir_default_metrics(K_VALUES, ties="as_returned") if m.metric in TREC
    ]
    for case, scores in zip(cases, evaluate_batch(as_returned, cases, responses), strict=True):
        for score in scores:
            metric, k = score.name.removeprefix("beir_").split("@")
            differs += score.value != pytest.approx(truth[case.case_id][TREC[metric].format(k=k)])
    assert differs > 0  # the system's tie order really is another order


def test_as_returned_keeps_the_system_order_and_trec_eval_uses_ids():
    case = qrels_case({"a": 1, "b": 0})
    tied = response([chunk("a", score=1.0), chunk("b", score=1.0)])  # trec_eval: b before a
    got = {
        ties: evaluate_batch([BeirRetrievalMetric("ndcg", 1, ties=ties)], [case], [tied])[0][0]
        for ties in ("trec_eval", "as_returned", "expected")
    }
    assert got["as_returned"].value == 1.0
    assert got["trec_eval"].value == 0.0
    assert got["expected"].value == pytest.approx(0.5)


def test_a_tied_top_k_is_flagged_and_the_rule_recorded():
    case = qrels_case({"a": 1, "b": 0, "c": 0})
    untied_top = response([chunk("a", score=3.0), chunk("b", score=2.0), chunk("c", score=2.0)])
    metrics = [BeirRetrievalMetric("ndcg", 1), BeirRetrievalMetric("ndcg", 2)]
    at_1, at_2 = evaluate_batch(metrics, [case], [untied_top])[0]
    assert "tied" not in at_1.metadata  # ranks 1 and 2 differ
    assert at_2.metadata["tied"] is True  # rank 2 ties with rank 3: the cut crosses a tie
    assert "ties" not in at_2.metadata  # the default rule is not repeated on every score
    aware = evaluate_batch([BeirRetrievalMetric("ndcg", 2, ties="expected")], [case], [untied_top])
    assert aware[0][0].metadata["ties"] == "expected"
    assert BeirRetrievalMetric("map", 5, ties="as_returned").manifest() == {
        "metric": "map",
        "k": 5,
        "convention": "trec_eval",
        "ties": "as_returned",
        "unjudged": "nonrelevant",
    }
    with pytest.raises(ValueError, match="ties must be one of"):
        BeirRetrievalMetric("ndcg", 10, ties="random")


def test_results_without_scores_are_ranked_as_returned():
    case = qrels_case({"a": 1, "b": 0})
    unscored = response([chunk("a"), chunk("b")])
    (score,) = evaluate_batch([BeirRetrievalMetric("ndcg", 1)], [case], [unscored])[0]
    assert score.value == 1.0 and "tied" not in score.metadata


# --------------------------------------------------------------------------- missing queries

QRELS = {
    "answered": {"d1": 1, "d2": 0, "d3": 2},
    "no_run": {"d1": 1},
    "empty_run": {"d2": 1},
    "no_relevant": {"d1": 0, "d4": 0},
}
RUN = {
    "answered": {"d1": 0.5, "d3": 0.5, "d9": 0.9},
    "empty_run": {},
    "no_relevant": {"d1": 1.0, "d4": 0.3},
    "not_judged": {"d1": 1.0},
}


def test_missing_zero_is_trec_eval_c_and_equals_pytrec_eval_query_by_query():
    metrics = [m for m in beir_default_metrics(K_VALUES) if m.metric in TREC]
    got = evaluate_run(QRELS, RUN, metrics, missing="zero")
    assert list(got) == list(QRELS)  # every judged query counts; unjudged ones never do
    truth = pytrec(QRELS, {q: RUN.get(q, {}) for q in QRELS})
    for q, values in got.items():
        for m in metrics:
            assert values[m.name] == pytest.approx(
                truth[q][TREC[m.metric].format(k=m.k)], abs=1e-12
            )
    assert all(v == 0.0 for q in ("no_run", "empty_run", "no_relevant") for v in got[q].values())


def test_missing_drop_keeps_only_scorable_queries():
    got = evaluate_run(QRELS, RUN, [BeirRetrievalMetric("ndcg", 10)])
    assert list(got) == ["answered"]
    with pytest.raises(ValueError, match="missing must be"):
        evaluate_run(QRELS, RUN, missing="skip")


def test_evaluate_run_takes_each_metrics_tie_rule():
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 1.0}}
    metrics = [
        BeirRetrievalMetric("ndcg", 1),
        BeirRetrievalMetric("precision", 1, ties="as_returned"),
        BeirRetrievalMetric("mrr", 1, ties="expected"),
    ]
    got = evaluate_run(qrels, run, metrics)["q"]
    assert got == {"beir_ndcg@1": 0.0, "beir_precision@1": 1.0, "beir_mrr@1": 0.5}


@pytest.mark.parametrize("ties", ["trec_eval", "as_returned", "expected"])
@pytest.mark.parametrize("convention", ["trec_eval", "heta"])
def test_the_checkpoint_json_of_tie_metadata_is_pydantics(ties, convention):
    """The batch path writes metadata JSON by hand: with tie fields it must stay to_json's."""
    from pydantic_core import to_json

    from heta_notebook.evaluators._retrieval import beir_scores

    cases = [qrels_case({"a": 1, "b": 0}, case_id="t"), qrels_case({"c": 0}, case_id="none")]
    found = [response([chunk("a", score=1.0), chunk("b", score=1.0)]), response([])]
    metrics = [
        BeirRetrievalMetric(m, k, convention=convention, ties=ties) for m in TREC for k in (1, 5)
    ]
    for column in beir_scores(metrics, cases, found):
        assert column.metadata_json is not None
        for score, text in zip(column, column.metadata_json, strict=True):
            assert text == to_json(score.metadata).decode()
        assert column[0].metadata["tied"] is True


def test_tied_cases_carry_their_value_under_every_rule():
    cases, found = [], []
    for seed in range(15):
        qrels, scores = tied_run(seed, n_docs=10)
        cases.append(qrels_case(qrels, case_id=f"q{seed}"))
        found.append(response(ranked_chunks(scores, sorted(scores))))
    rules = ("trec_eval", "as_returned", "expected")
    by_rule = {
        rule: evaluate_batch(beir_default_metrics((1, 3, 10), ties=rule), cases, found)
        for rule in rules
    }
    tied = 0
    for rule in rules:
        for row, scores in enumerate(by_rule[rule]):
            for column, score in enumerate(scores):
                if not score.metadata.get("tied"):
                    assert "by_tie_rule" not in score.metadata
                    continue
                tied += 1
                for other in rules:
                    expected_value = by_rule[other][row][column].value
                    assert score.metadata["by_tie_rule"][other] == pytest.approx(expected_value)
    assert tied > 0


# --------------------------------------------------------------------------- trec_eval's own files

TREC_FILES = Path(__file__).parent / "fixtures" / "trec_eval"


def read_trec() -> tuple[dict, dict, dict]:
    """trec_eval's qrels.test, results.trunc and out.test.aqc (``-q -c``) as dicts."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (TREC_FILES / "qrels.test").read_text().splitlines():
        q, _, doc, grade = line.split()
        qrels.setdefault(q, {})[doc] = int(grade)
    run: dict[str, dict[str, float]] = {}
    for line in (TREC_FILES / "results.trunc").read_text().splitlines():
        q, _, doc, _, score = line.split()[:5]  # trec_eval ignores text after the run id
        run.setdefault(q, {})[doc] = float(score)
    out: dict[tuple[str, str], float] = {}
    for line in (TREC_FILES / "out.test.aqc").read_text().splitlines():
        measure, q, value = line.split()
        if measure.startswith(("ndcg_cut_", "P_", "recall_", "map_cut_")):
            out[(measure, q)] = float(value)
    return qrels, run, out


def test_missing_zero_reproduces_trec_eval_c_on_its_own_test_files():
    """``trec_eval -q -c qrels.test results.trunc``: query 302 has no results and counts 0."""
    qrels, run, out = read_trec()
    assert "302" in qrels and "302" not in run
    metrics = [BeirRetrievalMetric(m, k) for m in TREC for k in (5, 10, 15, 20, 30, 100, 200)]
    got = evaluate_run(qrels, run, metrics, missing="zero")
    assert sorted(got) == ["301", "302", "303"]
    for m in metrics:
        measure = TREC[m.metric].format(k=m.k)
        for q in got:
            assert got[q][m.name] == pytest.approx(out[(measure, q)], abs=5e-5), (measure, q)
        mean = sum(got[q][m.name] for q in got) / len(got)
        assert mean == pytest.approx(out[(measure, "all")], abs=5e-5), measure
    dropped = evaluate_run(qrels, run, metrics, missing="drop")
    assert sorted(dropped) == ["301", "303"]  # trec_eval without -c: 0.2576 for ndcg_cut_10
    ndcg = [dropped[q]["beir_ndcg@10"] for q in dropped]
    assert sum(ndcg) / 2 == pytest.approx((0.1518 + 0.3633) / 2, abs=1e-4)


def test_scores_apart_only_past_float32_are_ordered_as_float64_like_trec_eval():
    """trec_eval compares scores as doubles (since 2023); pytrec_eval's bundled trec_eval reads
    them as floats, so there the two tie and the larger id wins. Rounded to float32, our
    numbers are pytrec_eval's again (docs/metrics.md)."""
    import numpy as np

    low = 0.5
    high = float(np.nextafter(low, 1.0))  # the next double: the same float32
    assert np.float32(low) == np.float32(high) and high > low
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": high, "b": low}}  # "a" scores higher, "b" > "a" as bytes
    metric = [BeirRetrievalMetric("precision", 1)]
    ours = evaluate_run(qrels, run, metric)["q"]["beir_precision@1"]
    assert ours == 1.0  # "a" first, as trec_eval ranks doubles
    rounded = {"q": {d: float(np.float32(s)) for d, s in run["q"].items()}}
    ours_rounded = evaluate_run(qrels, rounded, metric)["q"]["beir_precision@1"]
    assert ours_rounded == pytrec(qrels, rounded)["q"]["P_1"] == 0.0  # a tie: "b" first
    # pytrec_eval 0.5 reads floats (0.0 here, as ours rounded); a later one may read doubles
    assert pytrec(qrels, run)["q"]["P_1"] in (ours_rounded, ours)


def test_the_trec_eval_order_is_score_then_id_as_bytes_both_descending():
    """``ranked_by_rule`` (triples sorted in C) ranks as a sort keyed by ``(score, id as
    UTF-8 bytes)``, descending, does: ties, repeated ids, non-ASCII ids, NaN, infinities."""
    rng = random.Random(7)
    for n in range(2000):
        ids = [rng.choice(["d1", "d2", "Z", "a", "é", "d10", "d1#0", ""]) + str(rng.randint(0, 30))
               for _ in range(rng.randint(2, 40))]  # fmt: skip
        if n % 3:
            ids = list(dict.fromkeys(ids))
        scores = [rng.choice([1.0, 2.0, 0.5, 3, rng.random(), math.nan, -math.inf]) for _ in ids]
        keyed = sorted(
            zip(ids, scores, strict=True), key=lambda it: (it[1], it[0].encode()), reverse=True
        )
        got_ids, got_scores = ranked_by_rule(ids, scores, "trec_eval")
        assert got_ids == [d for d, _ in keyed] or _decreasing(scores)
        assert list(map(repr, got_scores)) == [repr(v) for _, v in keyed] or _decreasing(scores)


def _first_tie_by_pairs(scores):
    """The first tie as the pair-by-pair loop found it (the reference for the C passes)."""
    return next((i for i, (a, b) in enumerate(itertools.pairwise(scores)) if a == b), None)


def _tie_groups_by_start(scores, depth):
    """Tied groups as the loop comparing each score with its group's first found them."""
    groups, start = [], 0
    for i in range(1, len(scores) + 1):
        if i == len(scores) or scores[i] != scores[start]:
            groups += [(start, i)] * (i - start)
            if i >= depth:
                break
            start = i
    return groups


@pytest.mark.parametrize("seed", range(40))
def test_tie_passes_equal_the_loops_they_replace(seed) -> None:
    rng = random.Random(seed)
    nan = float("nan")
    pool = [3.0, 2.0, 2, 1.0, 1.0, 0.5, nan, -0.0, 0.0]
    for _ in range(50):
        scores = [rng.choice(pool) for _ in range(rng.randrange(0, 12))]
        if rng.random() < 0.3:
            scores = [nan] * len(scores)  # the same NaN object: never tied
        assert _tie_rules._first_tie(scores) == _first_tie_by_pairs(scores)
        depth = rng.randrange(1, 14)
        assert _tie_rules._tie_groups(scores, depth) == _tie_groups_by_start(scores, depth)
    assert _tie_rules._first_tie(None) is None
    qrels = {"a": 2, "b": 0, "c": -1, "d": 1}
    judged = _retrieval._Judged(0, qrels, ["a", "b"])
    assert judged.n_relevant == 2 and type(judged.n_relevant) is int
