"""A comparison counts abstentions per variant (count and share) as the card does, and on a
benchmark that expects abstentions (SQuAD 2.0's unanswerable questions) how many were right;
the same from saved (columnar) reports, in the table HTML, pivoted and in the text repr."""

from __future__ import annotations

import pytest

import heta_notebook as hn
from heta_notebook import Abstain, AbstentionAccuracy
from heta_notebook.benchmarks._squad import SquadBenchmark, squad2_sample_path
from heta_notebook.evaluators._squad import SquadExactMatch

_SAMPLE = SquadBenchmark(squad2_sample_path())
_CASES = _SAMPLE.load().cases[:30]
_UNANSWERABLE = {c.query for c in _CASES if c.expected.metadata.get("abstain")}
_ANSWERS = {c.query: (c.expected.answers or ("",))[0] for c in _CASES}
_TIMID = {c.query for c in _CASES[::3]}  # abstains on every third question, answerable or not


def oracle(question: str) -> object:
    """Abstains exactly on the unanswerable questions, answers the rest right."""
    if question in _UNANSWERABLE:
        return Abstain("no passage answers it")
    return {"answer": _ANSWERS[question], "results": []}


def timid(question: str) -> object:
    """Abstains on every third question; answers the others like the oracle."""
    return Abstain("not sure") if question in _TIMID else oracle(question)


def _run(system) -> hn.EvaluationReport:
    return hn.run_benchmark(
        benchmark=_SAMPLE,
        recipe=system,
        case_ids=[c.case_id for c in _CASES],
        evaluators=[SquadExactMatch(), AbstentionAccuracy()],
        progress=False,
    ).report


@pytest.fixture(scope="module")
def reports() -> dict[str, hn.EvaluationReport]:
    return {"oracle": _run(oracle), "timid": _run(timid)}


def _expected_counts(abstains: set[str]) -> dict[str, int]:
    return {
        "abstained": len(abstains),
        "correct": len(abstains & _UNANSWERABLE),
        "on_answerable": len(abstains - _UNANSWERABLE),
    }


def test_abstentions_per_variant(reports) -> None:
    table = hn.compare(reports).abstentions().set_index("report")
    timid_abstains = _UNANSWERABLE | _TIMID
    assert 0 < len(_UNANSWERABLE) < len(_CASES) and _TIMID - _UNANSWERABLE  # both kinds
    for label, abstains in (("oracle", _UNANSWERABLE), ("timid", timid_abstains)):
        row = table.loc[label]
        assert {k: row[k] for k in ("abstained", "correct", "on_answerable")} == (
            _expected_counts(abstains)
        )
        assert row["n"] == len(_CASES) and row["n_expected"] == len(_UNANSWERABLE)
        assert row["share"] == pytest.approx(len(abstains) / len(_CASES))


def test_saved_reports_count_the_same(reports, tmp_path) -> None:
    store = hn.ReportStore(tmp_path)
    loaded = {}
    for label, report in reports.items():
        store.save(report)
        loaded[label] = store.load(report.knowledge_base_name, report.report_id)
    assert loaded["oracle"].frames().columns.folder is not None  # read from the saved tables
    mine, theirs = hn.compare(reports).abstentions(), hn.compare(loaded).abstentions()
    assert mine.equals(theirs)


def test_the_table_and_repr_say_it(reports) -> None:
    comparison = hn.compare(reports)
    n_un, n = len(_UNANSWERABLE), len(_CASES)
    timid_n = len(_UNANSWERABLE | _TIMID)
    for html in (comparison._repr_html_(), comparison.pivot()._repr_html_()):
        assert "<i>abstained</i>" in html
        assert f"{n_un} ({n_un / n:.0%})" in html and f"{timid_n} ({timid_n / n:.0%})" in html
        wrong = len(_TIMID - _UNANSWERABLE)
        assert (
            f"{n_un}/{n_un} right</span>" in html and f"{n_un}/{n_un} right · {wrong} wrong" in html
        )
    assert f"timid · default: abstained on {timid_n} of {n}" in repr(comparison)
    assert f"{n_un} of {n_un} expected abstentions right, {wrong} on answerable" in repr(comparison)


def test_no_abstention_no_row() -> None:
    answers = _run(lambda q: {"answer": _ANSWERS[q], "results": []})
    comparison = hn.compare({"a": answers, "b": answers})
    assert comparison.abstentions()["abstained"].sum() == 0
    assert "<i>abstained</i>" not in comparison._repr_html_()
    assert "abstained on" not in repr(comparison)
