"""The report card: content (benchmark, modes, metrics table, best per row, errors, latency)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from heta_notebook.display._card import report_card_html
from tests._display_helpers import make_report


class Cells(HTMLParser):
    """Collect table rows as lists of (text, class, title) cells."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[tuple[str, str, str]]] = []
        self._cell: list | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        if tag in {"td", "th"}:
            a = dict(attrs)
            self._cell = ["", a.get("class") or "", a.get("title") or ""]

    def handle_endtag(self, tag):
        if tag in {"td", "th"} and self._cell is not None:
            self.rows[-1].append(tuple(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None and not self._cell[0]:
            self._cell[0] = data.strip()


@pytest.fixture(scope="module")
def report():
    return make_report(30, partial=True)


@pytest.fixture(scope="module")
def card(report):
    return report._repr_html_()


def _table(card: str) -> dict[str, list[tuple[str, str, str]]]:
    parser = Cells()
    parser.feed(card)
    return {row[0][0]: row[1:] for row in parser.rows if row}


def test_card_shows_benchmark_kb_recipe_modes_and_partial(card):
    for text in (
        "cranfield-synthetic",
        "v1",
        "test",
        "kb-synthetic",
        "bm25-chunks",
        "chunk_size=200",
        "PARTIAL",
        "bm25",
        "dense",
        "hybrid",
        "42.5 s",
    ):
        assert text in card, text
    assert "30 (90 case × mode)" in card


def test_metrics_table_has_modes_as_columns_scores_as_rows(report, card):
    table = _table(card)
    assert [c[0] for c in table["score"]] == list(report.query_modes)
    for name in report.score_names:
        assert name in table, name
    summary = report.summary().set_index(["query_mode", "score"])
    value, _, title = table["ndcg@10"][1]
    assert value == f"{summary.loc[('dense', 'ndcg@10'), 'mean']:.3f}"
    assert "95% CI" in title and "n scored" in title


def test_best_value_per_row_is_highlighted(report, card):
    table = _table(card)
    means = report.frames().metrics_table()
    for name in ("ndcg@10", "map@10", "judge_correctness"):
        best_mode = means.loc[name].idxmax()
        cells = dict(zip(report.query_modes, table[name], strict=True))
        assert "hn-best" in cells[best_mode][1]
        assert sum("hn-best" in c[1] for c in cells.values()) == 1


def test_error_counts_latency_and_small_print(report, card):
    table = _table(card)
    assert [c[0] for c in table["query errors"]] == ["2", "0", "0"]
    assert table["latency p50"][0][0].endswith("ms") or table["latency p50"][0][0].endswith("s")
    assert "skipped" in card and "errors" in card and "n=" in card


def test_card_without_case_results_uses_stored_summary():
    empty = make_report(2).model_copy(
        update={"case_results": (), "score_summary": {"bm25.ndcg@10": 0.5}}
    )
    html = report_card_html(empty)
    assert "bm25.ndcg@10" in html and "0.500" in html and "no case results" in html


def test_plain_repr_stays_short(report):
    text = repr(report)
    assert "PARTIAL" in text and "\n" not in text and len(text) < 400


def test_text_scores_are_counted_not_averaged():
    from heta_notebook.schema import EvaluationScore

    base = make_report(4, errors=False)
    results = tuple(
        r.model_copy(update={"scores": (EvaluationScore(name="verdict", value=v),)})
        for r, v in zip(base.case_results, ["good", "good", "bad"] * 4, strict=True)
    )
    html = base.model_copy(update={"case_results": results})._repr_html_()
    assert "good ×4" in html and "bad ×4" in html
