"""One explorer API: explicit options help() shows, shared filter names and methods, clear
errors on options the data does not have, and case details that say only what applies."""

from __future__ import annotations

import inspect

import pytest

from heta_notebook import EvaluationReport, compare
from heta_notebook.analysis._compare import Comparison
from heta_notebook.display._case_detail import case_detail_html
from heta_notebook.display._comparison_explorer import ComparisonExplorer
from heta_notebook.display._explorer import ReportExplorer
from heta_notebook.display._explorer_data import encode_report
from heta_notebook.display._explorer_options import ExplorerOptionError
from heta_notebook.schema import EvaluationScore
from tests._display_helpers import make_report


@pytest.fixture(scope="module")
def report():
    return make_report(n_cases=24, label="base")


@pytest.fixture(scope="module")
def comparison(report):
    better = make_report(n_cases=24, label="better", quality_shift=0.2, report_id="better-run")
    return compare([report, better], baseline="base")


def _options(function, skip):
    params = inspect.signature(function).parameters.values()
    return {p.name: p.default for p in params if p.name not in skip}


def test_both_doors_list_their_options_as_the_explorers_take_them():
    door = _options(EvaluationReport.explore, {"self"})
    assert door == _options(ReportExplorer.__init__, {"self", "report"})
    assert {"mode", "label", "score", "verdict", "search", "sort_by"} <= set(door)
    cmp_door = _options(Comparison.explore, {"self"})
    assert cmp_door == _options(ComparisonExplorer.__init__, {"self", "comparison"})
    assert {"a", "b", "score", "filter", "label", "search", "scope"} <= set(cmp_door)
    for shared in ("label", "score", "search"):  # one name for one meaning
        assert shared in door and shared in cmp_door
    for method in ("set_filters", "select", "page_rows"):
        assert callable(getattr(ReportExplorer, method, None)) or method == "page_rows"
        assert callable(getattr(ComparisonExplorer, method))


def test_unknown_mode_score_or_label_names_what_the_report_has(report):
    with pytest.raises(ValueError, match=r"unknown mode 'unknown'.* bm25, dense, hybrid"):
        report.explore(mode="unknown")
    with pytest.raises(ExplorerOptionError, match=r"unknown score 'ndcg@11'.*ndcg@10"):
        report.explore(score="ndcg@11")
    with pytest.raises(ValueError, match=r"unknown label 'difficulty=extreme'.*difficulty=easy"):
        report.explore().set_filters(label="difficulty=extreme")
    with pytest.raises(TypeError, match="unknown option.*show"):
        report.explore().set_filters(show="lost")
    with pytest.raises(TypeError):
        report.explore(show="lost")  # an explicit signature: no silent **options


def test_the_verdict_filter_applies_only_to_scores_with_a_threshold(report):
    explorer = report.explore(score="judge_correctness", verdict="failed")
    assert explorer.n_matching > 0
    assert "judge_correctness" in explorer.verdict_scores()
    assert "ndcg@10" not in explorer.verdict_scores()
    with pytest.raises(ValueError, match=r"verdict='passed' needs a score with pass/fail"):
        report.explore(score="ndcg@10", verdict="passed")
    with pytest.raises(ValueError, match="unknown verdict"):
        report.explore(score="judge_correctness", verdict="maybe")


def test_page_rows_have_a_value_column_only_when_sorted_by_a_score(report):
    plain = report.explore().page_rows()
    assert "value" not in plain.columns and {"case_id", "query_mode", "query"} <= set(plain)
    sorted_rows = report.explore(sort_by="ndcg@10").page_rows()
    assert sorted_rows["value"].notna().any()


def test_the_comparison_explorer_takes_filter_label_and_search_as_options(comparison):
    explorer = comparison.explore(filter="better", label="difficulty=hard")
    rows = explorer.page_rows()
    assert len(explorer.rows) > 0 and (rows["delta"] > 0).all()
    hard = {f"q{i:04d}" for i in range(24) if i % 3 == 2}
    assert set(explorer.rows["case_id"]) <= hard
    assert explorer.state["label"] == "difficulty=hard"
    everything = len(comparison.explore(filter="better").rows)
    assert len(explorer.rows) < everything
    explorer.set_filters(label=None, search="expected relationship", scope="b_not_a")
    assert explorer.label is None and explorer.scope == "b_not_a"


def test_unknown_comparison_options_fail_clearly(comparison):
    with pytest.raises(ValueError, match=r"unknown filter 'bogus'.*lost"):
        comparison.explore(filter="bogus")
    with pytest.raises(KeyError):  # what set_filter raised before; still caught as a KeyError
        comparison.explore().set_filter("bogus")
    with pytest.raises(ValueError, match=r"unknown label 'topic=nothing'"):
        comparison.explore(label="topic=nothing")
    with pytest.raises(ValueError, match="unknown score"):
        comparison.explore(score="nope")
    with pytest.raises(TypeError, match="unknown option"):
        comparison.explore().set_filters(show="lost")


def test_the_comparison_explorer_names_a_before_b(comparison):
    explorer = comparison.explore()
    text = repr(explorer)
    assert text.index(explorer.a.name) < text.index(explorer.b.name)
    assert text.startswith(f"<ComparisonExplorer A {explorer.a.name} vs B {explorer.b.name}")


def test_case_details_show_answers_only_against_expectations_and_name_who_gave_reasons(report):
    result = report.case_results[1]
    retrieval_only = result.model_copy(
        update={
            "metadata": {},
            "response": result.response.model_copy(update={"answer": None}),
            "scores": (
                *result.scores,
                EvaluationScore(name="enough", value=1.0, metadata={"reason": "3 contexts"}),
            ),
        }
    )
    html = case_detail_html(retrieval_only)
    assert "Answer vs expected" not in html and "abstained" not in html
    assert "Evaluator reasons" in html and "3 contexts" in html
    assert "Judge reasons" in html  # judge_correctness names its prompt version
    assert html.index("Judge reasons") < html.index("Evaluator reasons")
    assert "Answer vs expected" in case_detail_html(result)  # expected answers: compared


def test_the_payload_names_judges_and_the_report_so_titles_differ(report):
    payload = encode_report(report)
    assert payload["judges"] == ["judge_correctness"]
    other = make_report(n_cases=6, label="base", report_id="another-run")
    assert encode_report(other)["report_id"] != payload["report_id"]
    described = report.model_copy(
        update={"metadata": {"evaluators": [{"name": "x", "type": "pkg.MyJudge"}]}}
    )
    assert encode_report(described)["judges"] == ["x"]
