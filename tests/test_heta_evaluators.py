"""Evaluators both ways, and where our metrics differ from heta-framework's (and how to match them).

- heta-framework's evaluators (EvidenceRecallAtK, BeirRetrievalMetric, AnswerContains,
  AnswerExactMatch) run in our runner;
- ours (built-in and ``@evaluator``-made) run inside heta-framework's own BenchmarkRunner,
  whose report serialises and loads back;
- on graded qrels our nDCG/MAP follow trec_eval (pytrec_eval is the oracle) while
  heta-framework 0.1.2 uses gain 2**grade - 1 and divides MAP@k by min(R, k);
  ``convention="heta"`` reproduces heta's numbers exactly.
"""

from __future__ import annotations

import json

import pytest

from heta_notebook import BenchmarkRunner, EvaluatorSettings, evaluator
from heta_notebook.evaluators._answer import AnswerContains
from heta_notebook.evaluators._matching import ranked_document_ids
from heta_notebook.evaluators._retrieval import (
    BeirRetrievalMetric,
    EvidenceRecallAtK,
    beir_default_metrics,
)
from heta_notebook.integrations.heta import (
    HetaEvaluatorAdapter,
    adapt_benchmark,
    adapt_evaluator,
    as_heta_evaluator,
    from_heta_report,
)
from heta_notebook.integrations.heta._records import case_to_heta, response_to_heta
from heta_notebook.schema import (
    BenchmarkCase,
    BenchmarkEvidence,
    BenchmarkExpected,
    EvaluationScore,
    QueryResponse,
    QueryResult,
)
from tests._heta_helpers import (
    heta,
    heta_beir,
    heta_jsonl,
    heta_workspace,
    offline_recipe,
    offline_tiktoken,
    raw_fixture,
)

pytrec_eval = pytest.importorskip("pytrec_eval")


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    offline_tiktoken(monkeypatch)


def _chunk(doc: str, rank: int) -> QueryResult:
    key = f"raw/benchmarks/graded/test/{doc}/{doc}.txt"
    return QueryResult(
        id=f"{doc}-c{rank}",
        text=f"text of {doc}",
        score=10.0 - rank,
        source={"object_key": key, "document_id": f"heta-internal-{doc}"},
    )


GRADED = BenchmarkCase(
    case_id="g1",
    query="graded query",
    expected=BenchmarkExpected(
        answers=("Mach 2",),
        evidence=tuple(
            BenchmarkEvidence(reference_id=doc, metadata={"relevance": grade})
            for doc, grade in {"d1": 3, "d2": 1, "d3": 2, "d4": 1, "d5": 4}.items()
        ),
    ),
)
RANKING = ["d2", "x1", "d1", "d4", "x2", "d3"]  # d5 (grade 4) is never retrieved
RESPONSE = QueryResponse(
    mode="full_text_search",
    results=tuple(_chunk(doc, rank) for rank, doc in enumerate(RANKING)),
    answer="It flies at mach 2.",
)


def _pytrec(case: BenchmarkCase, ranking: list[str], measures: set[str]) -> dict[str, float]:
    qrels = {case.case_id: {e.reference_id: e.relevance for e in case.expected.evidence}}
    run = {case.case_id: {doc: float(len(ranking) - i) for i, doc in enumerate(ranking)}}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)[case.case_id]


async def _heta_value(metric: str, k: int) -> float:
    score = await heta.BeirRetrievalMetric(metric=metric, k=k).evaluate(
        case=case_to_heta(GRADED), response=response_to_heta(RESPONSE)
    )
    return score.value


# --------------------------------------------------------------------------- the differences


@pytest.mark.parametrize("k", [3, 5, 10])
async def test_graded_ndcg_and_map_differ_from_heta_and_the_compat_option_matches_it(k) -> None:
    oracle = _pytrec(GRADED, RANKING, {f"ndcg_cut.{k}", f"map_cut.{k}"})
    for metric, trec_name in (("ndcg", f"ndcg_cut_{k}"), ("map", f"map_cut_{k}")):
        ours = (await BeirRetrievalMetric(metric, k).evaluate(case=GRADED, response=RESPONSE)).value
        theirs = await _heta_value(metric, k)
        compat = BeirRetrievalMetric(metric, k, convention="heta")
        matched = (await compat.evaluate(case=GRADED, response=RESPONSE)).value
        assert ours == pytest.approx(oracle[trec_name], abs=1e-12)  # trec_eval by default
        assert matched == pytest.approx(theirs, abs=1e-12)  # heta's numbers when asked
        if metric == "ndcg" or k < 5:  # the conventions differ: gain always, MAP when k < R
            assert abs(ours - theirs) > 0.01
        else:  # MAP@k with k >= R = 5: min(R, k) = R, the same number
            assert ours == pytest.approx(theirs, abs=1e-12)


async def test_the_difference_worked_out_by_hand_at_k_3() -> None:
    """Ranks 1..3 hold d2 (grade 1), an unjudged doc, d1 (grade 3); R = 5 relevant docs."""
    from math import log2

    dcg_trec = 1 / log2(2) + 3 / log2(4)  # gain = grade
    idcg_trec = 4 / log2(2) + 3 / log2(3) + 2 / log2(4)  # ideal: grades 4, 3, 2
    dcg_heta = 1 / log2(2) + 7 / log2(4)  # gain = 2**grade - 1
    idcg_heta = 15 / log2(2) + 7 / log2(3) + 3 / log2(4)
    ap_sum = 1 / 1 + 2 / 3  # precision at the two relevant ranks
    assert (
        await BeirRetrievalMetric("ndcg", 3).evaluate(case=GRADED, response=RESPONSE)
    ).value == pytest.approx(dcg_trec / idcg_trec)
    assert await _heta_value("ndcg", 3) == pytest.approx(dcg_heta / idcg_heta)
    assert (
        await BeirRetrievalMetric("map", 3).evaluate(case=GRADED, response=RESPONSE)
    ).value == pytest.approx(ap_sum / 5)  # trec_eval: divide by R
    assert await _heta_value("map", 3) == pytest.approx(ap_sum / 3)  # heta: by min(R, k)


async def test_compat_option_reproduces_every_heta_number_of_the_committed_report(tmp_path) -> None:
    """Re-score heta's own responses: convention="heta" gives its 16 x 8 values exactly."""
    report = from_heta_report(raw_fixture())
    adapter = adapt_benchmark(heta_beir())
    prepared = await adapter.prepare(tmp_path)
    cases = {c.case_id: c async for c in adapter.cases(prepared)}
    metrics = beir_default_metrics((1, 3, 5, 10), convention="heta")
    trec = beir_default_metrics((1, 3, 5, 10))
    checked = 0
    for result in report.case_results:
        if result.response is None:
            continue
        case = cases[result.case_id]
        ranking = ranked_document_ids(result.response.results)
        oracle = _pytrec(case, ranking, {"ndcg_cut.10", "map_cut.10", "P.10", "recall.10"})
        for ours_heta, ours_trec in zip(metrics, trec, strict=True):
            recorded = result.score(ours_heta.name).value
            mine = await ours_heta.evaluate(case=case, response=result.response)
            assert mine.value == pytest.approx(recorded, abs=1e-12), ours_heta.name
            checked += 1
            if ours_trec.k == 10 and ours_trec.metric != "mrr":
                name = {
                    "ndcg": "ndcg_cut_10",
                    "map": "map_cut_10",
                    "precision": "P_10",
                    "recall": "recall_10",
                }[ours_trec.metric]
                value = (await ours_trec.evaluate(case=case, response=result.response)).value
                assert value == pytest.approx(oracle[name], abs=1e-12)
    assert checked == 8 * 20


async def test_heta_evidence_recall_misses_reference_ids_that_ours_maps_through_raw_keys() -> None:
    """heta matches reference_id against its internal document_id; ours maps the raw key."""
    heta_score = await adapt_evaluator(heta.EvidenceRecallAtK(k=5)).evaluate(
        case=GRADED, response=RESPONSE
    )
    ours = await EvidenceRecallAtK(k=5).evaluate(case=GRADED, response=RESPONSE)
    assert heta_score.value == 0.0 and heta_score.metadata["matched"] == 0
    assert ours.value == pytest.approx(3 / 5)  # d2, d1, d4 in the top 5
    assert ours.metadata["matched"] == 3 and ours.metadata["expected"] == 5


# --------------------------------------------------------------------------- heta's in our runner


class _AnsweringKB:
    """A tiny KB of ours: returns the graded ranking and answers "It flies at mach 2."."""

    query_modes = ("full_text_search",)

    async def query(self, text, *, mode, top_k=10, options=None):
        return RESPONSE

    def manifest(self):
        return {"name": "answering"}


class _Cases:
    """A benchmark of ours: the graded case and one without any expectation."""

    def __init__(self) -> None:
        from heta_notebook.schema import BenchmarkManifest

        self.manifest = BenchmarkManifest(name="graded")

    async def documents(self, prepared):
        return
        yield

    async def cases(self, prepared):
        yield GRADED
        yield BenchmarkCase(case_id="empty", query="nothing expected")

    def evaluators(self):
        return ()


async def test_heta_evaluators_run_in_our_runner_with_our_skip_conventions() -> None:
    evaluators = (
        heta.AnswerContains(),
        heta.AnswerExactMatch(),
        heta.EvidenceRecallAtK(k=3),
        heta.BeirRetrievalMetric(metric="ndcg", k=3),
    )
    result = await BenchmarkRunner().run(
        benchmark=_Cases(), recipe=_AnsweringKB(), evaluators=evaluators, progress=False
    )
    graded, empty = result.report.case_results
    assert graded.score("answer_contains").value is True
    assert graded.score("answer_exact_match").value is False
    assert graded.score("beir_ndcg@3").value == pytest.approx(await _heta_value("ndcg", 3))
    for name in ("answer_contains", "evidence_recall@3", "beir_ndcg@3"):
        score = empty.score(name)
        assert score.status == "skipped" and score.metadata["skip_reason"]
    assert "full_text_search.beir_ndcg@3" in result.report.score_summary
    assert isinstance(adapt_evaluator(heta.AnswerContains()), HetaEvaluatorAdapter)


# --------------------------------------------------------------------------- ours in heta's runner


@evaluator(name="has_results", settings=EvaluatorSettings(threshold=1))
def has_results(outputs, inputs, ground_truth):
    """A HoneyHive-style function evaluator with a reason."""
    n = len(outputs["results"])
    return {"score": float(n > 0), "reason": f"{n} results for {inputs['query'][:20]!r}"}


class _Broken:
    name = "broken"

    async def evaluate(self, *, case, response) -> EvaluationScore:
        raise RuntimeError("evaluator bug")


async def test_our_evaluators_inside_heta_runner_and_its_report_serialises(tmp_path) -> None:
    ours = (
        BeirRetrievalMetric("ndcg", 10),
        EvidenceRecallAtK(k=5),
        AnswerContains(),
        has_results,
        _Broken(),
    )
    result = await heta.BenchmarkRunner().run(
        benchmark=heta_jsonl(),
        recipe=offline_recipe(tmp_path / "objects"),
        knowledge_base_name="inside-heta",
        query_modes=("full_text_search",),
        workspace=heta_workspace(tmp_path / "ws"),
        evaluators=tuple(as_heta_evaluator(ev) for ev in ours),
        config=heta.BenchmarkRunConfig(persist_report=False),
    )
    text = json.dumps(result.report.to_dict())  # heta's report serialises ...
    report = from_heta_report(text)  # ... and loads as ours
    assert all(r.error is None for r in report.case_results)  # a broken evaluator != broken case
    first = report.case_results[0]
    assert first.score("broken").status == "error"
    assert first.score("has_results").metadata["reason"].startswith("10 results")
    assert first.score("has_results").passed is True
    assert first.score("evidence_recall@5").metadata["matched_evidence"] is not None
    no_evidence = next(r for r in report.case_results if r.case_id == "no-evidence")
    assert no_evidence.score("beir_ndcg@10").status == "skipped"
    assert 0 < report.score_summary["full_text_search.beir_ndcg@10"] <= 1


async def test_our_wrapper_applies_timeout_and_retries_for_plain_evaluators() -> None:
    import asyncio

    class Flaky:
        name = "flaky"
        settings = EvaluatorSettings(retry_count=2, retry_backoff=0, timeout=0.5)
        calls = 0

        async def evaluate(self, *, case, response):
            Flaky.calls += 1
            if Flaky.calls < 3:
                raise ConnectionError("try again")
            return EvaluationScore(name="flaky", value=1.0)

    class Slow:
        name = "slow"
        settings = EvaluatorSettings(timeout=0.01)

        async def evaluate(self, *, case, response):
            await asyncio.sleep(5)

    case, response = case_to_heta(GRADED), response_to_heta(RESPONSE)
    assert (await as_heta_evaluator(Flaky()).evaluate(case=case, response=response)).value == 1.0
    slow = await as_heta_evaluator(Slow()).evaluate(case=case, response=response)
    assert slow.metadata["error"]["error_type"] == "TimeoutError"
    with pytest.raises(TypeError, match="not an evaluator"):
        as_heta_evaluator(object())
