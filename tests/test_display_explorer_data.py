"""The explorers' data: columnar, texts stored once, long texts cut with their length, a cap
that keeps the most informative case results and says how many were left out."""

from __future__ import annotations

import pytest

from heta_notebook.analysis._misses import CLASSES
from heta_notebook.display._explorer_cells import StringTable
from heta_notebook.display._explorer_data import encode_report
from heta_notebook.display._widgets import (
    ExplorerWidget,
    pack,
    payload_of,
    report_data,
    unpack,
)
from tests._display_helpers import make_report, payload_size


def test_string_table_stores_each_text_once_and_cuts_long_ones():
    table = StringTable(limit=10)
    first = table.add("short")
    assert table.add("short") == first and table.add(None) == -1 and table.add("") == -1
    cut = table.add("x" * 25)
    assert table.texts[cut] == "x" * 9 + "…" and table.full_length[str(cut)] == 25


def test_payload_is_columnar_and_complete():
    report = make_report(10)
    payload = encode_report(report)
    n = len(report.case_results)
    assert payload["rows"] == list(range(n)) and payload["left_out"] == 0
    cases = payload["cases"]
    assert all(len(column) == n for column in cases.values())
    strings = payload["strings"]
    assert len(strings) == len(set(strings))  # every text once
    first = report.case_results[0]
    assert strings[cases["case_id"][0]] == first.case_id
    assert strings[cases["query"][0]] == first.query
    judge = payload["scores"]["judge_correctness"]
    reasons = {strings[i] for i in judge["r"] if i >= 0}
    assert {s.reason for r in report.case_results for s in r.scores if s.reason} <= reasons
    evidence = cases["evidence"][0]
    # label, matched, rank, result, grade, matched by + miss class, rank, document rank, stages
    assert evidence and all(len(item) == 10 for item in evidence)
    assert {strings[item[6]] for item in evidence} <= set(CLASSES)
    assert unpack(pack(payload)) == payload
    assert len(pack(payload)) < payload_size(payload)  # compressed


def test_cap_embeds_errors_and_failures_first_and_counts_the_rest():
    report = make_report(30)
    payload = encode_report(report, max_cases=12)
    assert len(payload["rows"]) == 12 and payload["left_out"] == len(report.case_results) - 12
    kept = [report.case_results[i] for i in payload["rows"]]
    errors = [r for r in report.case_results if r.error is not None]
    assert all(r in kept for r in errors)
    assert payload["rows"] == sorted(payload["rows"])  # report order among the kept
    last = report.case_results[-1].case_id  # e.g. the biggest change in a comparison
    pinned = encode_report(report, max_cases=5, priority=(last,))
    assert any(report.case_results[i].case_id == last for i in pinned["rows"])


def test_one_data_model_per_report_shared_by_explorers():
    report = make_report(5)
    first, second = report.explore(), report.explore(mode="dense")
    assert first.widget.data is second.widget.data is report_data(report)
    assert isinstance(first.widget, ExplorerWidget) and first.widget.kind == "report"


def test_text_valued_scores_are_kept():
    from heta_notebook.schema import EvaluationScore

    report = make_report(2)
    first = report.case_results[0]
    labelled = first.model_copy(
        update={"scores": (*first.scores, EvaluationScore(name="verdict_text", value="partly"))}
    )
    report = report.model_copy(update={"case_results": (labelled, *report.case_results[1:])})
    payload = encode_report(report)
    column = payload["scores"]["verdict_text"]
    assert payload["strings"][column["t"]["0"]] == "partly" and column["v"][0] is None


def test_an_abstention_is_told_apart_from_a_retrieval_only_case():
    from heta_notebook import EvaluationCaseResult, QueryResponse
    from heta_notebook.display._case_detail import case_detail_html
    from heta_notebook.schema import BenchmarkManifest, EvaluationReport

    def result(case_id, answer_meta, expected):
        return EvaluationCaseResult(
            case_id=case_id,
            query="Who?",
            query_mode="full_text_search",
            response=QueryResponse(mode="full_text_search", metadata=answer_meta),
            metadata={"expected": expected},
        )

    abstained = result("q1", {"answer": {"abstained": True}}, {"metadata": {"abstain": True}})
    plain = result("q2", {}, {"answers": ["Rollo"]})
    report = EvaluationReport(
        report_id="r",
        benchmark=BenchmarkManifest(name="squad"),
        knowledge_base_name="kb",
        case_results=(abstained, plain),
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:01Z",
    )
    cases = encode_report(report)["cases"]
    assert cases["abstained"] == [1, 0] and cases["expects_abstention"] == [1, 0]
    detail = case_detail_html(abstained)
    assert "abstained: the answer step found no answer" in detail
    assert "unanswerable: the right answer is to abstain" in detail
    assert "no answer (retrieval only)" in case_detail_html(plain)


def _columnar_copy(report, folder):
    """``report`` saved in the columnar store (small row groups) and opened lazily."""
    from heta_notebook.reports._folder import open_report, write_report
    from heta_notebook.reports._stored import LazyCaseResults

    write_report(folder, report, cases_per_group=7)  # many row groups
    reopened = open_report(folder)
    assert isinstance(reopened.case_results, LazyCaseResults)
    return reopened


def test_columnar_report_gives_the_same_payload_as_its_records(tmp_path):
    report = make_report(30)
    lazy = _columnar_copy(report, tmp_path / "rep")
    for cap in (None, 12, 40):
        assert encode_report(lazy, max_cases=cap) == encode_report(report, max_cases=cap)
    last = report.case_results[-1].case_id
    pinned = encode_report(lazy, max_cases=5, priority=(last,))
    assert pinned == encode_report(report, max_cases=5, priority=(last,))


def test_informative_order_from_frames_matches_the_records(tmp_path):
    """The vectorised order (frames) is the rule spelled out on records."""
    import math

    from heta_notebook.display._explorer_data import informative_order
    from heta_notebook.schema._headline import headline_score

    report = make_report(40)
    headline = headline_score(report.score_names)

    def key(row):
        r = report.case_results[row]
        score = r.score(headline)
        value = score.numeric if score is not None else None
        return (
            0 if r.case_id == "q0005" else 1,
            0 if r.error is not None else 1,
            0 if any(s.passed is False for s in r.scores) else 1,
            value if value is not None else math.inf,
            row,
        )

    expected = sorted(range(len(report.case_results)), key=key)
    assert informative_order(report, ("q0005",)).tolist() == expected
    lazy = _columnar_copy(report, tmp_path / "rep")
    assert informative_order(lazy, ("q0005",)).tolist() == expected


def test_take_builds_the_same_records_as_indexing(tmp_path):
    report = make_report(20)
    lazy = _columnar_copy(report, tmp_path / "rep").case_results
    rows = [0, 3, 6, 7, 8, 19, 50, 59]
    assert list(lazy.take(rows)) == [report.case_results[i] for i in rows]


# ------------------------------------------------------------- index + details (large reports)


def _case_view(payload, i):
    """Everything the page shows of embedded case ``i``, strings resolved (indexes differ
    between payloads, what they point to must not)."""
    strings = payload["strings"]

    def text(j):
        return None if j is None or j < 0 else strings[j]

    def deep(value):
        return [deep(v) for v in value] if isinstance(value, list) else value

    cases = payload["cases"]
    view = {
        "row": payload["rows"][i],
        "case_id": text(cases["case_id"][i]),
        "mode": text(cases["mode"][i]),
        "query": text(cases["query"][i]),
        "error": text(cases["error"][i]),
        "latency": cases["latency"][i],
        "labels": [text(j) for j in cases["labels"][i]],
        "scores": {
            name: (col["v"][i], col["s"][i], col["p"][i], text(col.get("t", {}).get(str(i))))
            for name, col in payload["scores"].items()
        },
    }
    if cases["evidence"][i] is not None:
        ev = cases["evidence"][i]
        view["details"] = {
            "answer": text(cases["answer"][i]),
            "expected": [text(j) for j in cases["expected"][i]],
            "evidence": [[text(e[0]), e[1], e[2], text(e[3]), e[4], text(e[5])] for e in ev],
            "results": [
                [text(r[0]), r[1], text(r[2]), text(r[3]), r[4], r[5], [text(m) for m in r[6]]]
                for r in cases["results"][i]
            ],
            "trace": text(cases["trace"][i]),
            "meta": text(cases["response_meta"][i]),
            "notes": {n: (text(c["r"][i]), text(c["m"][i])) for n, c in payload["scores"].items()},
            "flags": (cases["abstained"][i], cases["expects_abstention"][i]),
        }
    return deep(view)


def _labelled(report):
    """``report`` with labels on its cases (the label filter reads them)."""
    results = [
        r.model_copy(update={"metadata": {**r.metadata, "labels": {"topic": f"t{n % 3}"}}})
        for n, r in enumerate(report.case_results)
    ]
    return report.model_copy(update={"case_results": tuple(results)})


def test_partial_details_from_records_and_from_columns_are_identical(tmp_path):
    report = _labelled(make_report(30))
    lazy = _columnar_copy(report, tmp_path / "rep")
    for cap, details in ((None, [0, 5, 40]), (12, [1, 2, 3]), (40, [])):
        built = encode_report(lazy, max_cases=cap, details=details)
        assert built == encode_report(report, max_cases=cap, details=details)
        full = encode_report(report, max_cases=cap)
        wanted = set(details) & set(full["rows"])
        assert built["n_detailed"] == len(wanted) and full["n_detailed"] == len(full["rows"])
        for i, row in enumerate(full["rows"]):
            partial, complete = _case_view(built, i), _case_view(full, i)
            if row in wanted:
                assert partial == complete
            else:  # the index is all there, the details are not
                assert "details" not in partial
                assert {k: v for k, v in complete.items() if k != "details"} == partial


def test_fetched_details_are_the_embedded_ones(tmp_path):
    from heta_notebook.display._explorer_data import encode_details

    report = _labelled(make_report(20))
    full = encode_report(report)
    rows = [3, 0, 17, 17, 500]  # unsorted, repeated and out of range
    reply = encode_details(_columnar_copy(report, tmp_path / "rep"), rows)
    assert reply == encode_details(report, rows) and reply["rows"] == [0, 3, 17]
    for k, row in enumerate(reply["rows"]):  # as the page merges it: its own strings
        one = {
            "rows": [row],
            "strings": reply["strings"],
            "cases": {
                c: [reply["cases"][c][k] if c in reply["cases"] else v[row]]
                for c, v in full["cases"].items()
            },
            "scores": {
                n: {
                    **{f: [col[f][row]] for f in ("v", "s", "p")},
                    "r": [reply["scores"][n]["r"][k]],
                    "m": [reply["scores"][n]["m"][k]],
                }
                for n, col in full["scores"].items()
            },
        }
        assert _case_view(one, 0)["details"] == _case_view(full, row)["details"]


def test_preview_holds_the_first_page_index_of_a_columnar_report(tmp_path):
    from heta_notebook.display._explorer_data import encode_preview

    report = _labelled(make_report(30))
    lazy = _columnar_copy(report, tmp_path / "rep")
    first = [0, 1, 2, 20, 21, 44, 89]  # several row groups, an error case (row 21)
    preview = encode_preview(lazy, first)
    full = encode_report(report)
    assert preview["preview"] is True and preview["rows"] == first
    assert preview["n_detailed"] == 0 and preview["n_total"] == len(report.case_results)
    assert any(preview["cases"]["error"][i] >= 0 for i in range(len(first)))
    for k, row in enumerate(first):
        assert _case_view(preview, k) == {
            key: value for key, value in _case_view(full, row).items() if key != "details"
        }


def test_large_columnar_report_shows_a_preview_then_the_full_payload(tmp_path, monkeypatch):
    from heta_notebook.display import _widgets as widgets

    monkeypatch.setattr(widgets, "EAGER_RESULTS", 50)  # "large": more results than that
    report = _labelled(make_report(30))
    lazy = _columnar_copy(report, tmp_path / "rep")
    explorer = lazy.explore(max_cases=40)
    data = explorer.widget.data
    data.wait(60)
    payload = payload_of(data)
    first = list(range(15))
    assert payload["rows"][:15] == first and payload["n_detailed"] == 15  # the first page stays
    assert len(payload["rows"]) == 40 and payload["left_out"] == len(report.case_results) - 40
    full = encode_report(report, max_cases=40, priority=tuple(_ids(report, first)))
    for i in range(len(payload["rows"])):
        view = _case_view(payload, i)
        expected = _case_view(full, i)
        assert view == (
            expected if i < 15 else {k: v for k, v in expected.items() if k != "details"}
        )
    sent = []
    monkeypatch.setattr(data, "send", sent.append)
    data._on_msg(data, {"type": "details", "rows": [payload["rows"][20]]}, [])
    assert sent[0]["type"] == "details" and sent[0]["rows"] == [payload["rows"][20]]
    assert sent[0]["cases"]["results"][0]  # a case with retrieved results
    data._on_msg(data, {"type": "details", "rows": ["x"]}, [])  # bad request: an error reply
    data._on_msg(data, {"type": "other"}, [])
    assert len(sent) == 2
    # The fetched details stay in the widget's state (a saved notebook shows them offline),
    # the error reply does not; beyond KEEP_FETCHED_BYTES nothing more is kept.
    (kept,) = data.fetched
    assert unpack(kept) == {k: v for k, v in sent[0].items() if k != "type"}
    monkeypatch.setattr(widgets, "KEEP_FETCHED_BYTES", len(kept) + 10)
    data._on_msg(data, {"type": "details", "rows": [payload["rows"][21]]}, [])
    assert len(sent) == 3 and data.fetched == [kept]


def test_small_reports_embed_every_detail_at_once(tmp_path):
    report = make_report(10)
    data = report.explore().widget.data
    assert data.ready.is_set() and unpack(data.payload)["n_detailed"] == len(report.case_results)


def _ids(report, rows):
    return list(dict.fromkeys(report.case_results[r].case_id for r in rows))


def test_big_payloads_pack_and_unpack():
    payload = {"strings": [f"text {i} " * 20 for i in range(20_000)]}
    assert len(str(payload)) > (1 << 20) and unpack(pack(payload)) == payload


def _with_odd_evidence(report):
    """Evidence the fast rules do not decide (a text, a locator) on some cases."""
    results = []
    for n, r in enumerate(report.case_results):
        expected = dict(r.metadata.get("expected") or {})
        if n % 4 == 1 and expected.get("evidence"):
            first = dict(expected["evidence"][0])
            first["text"] = "the effect of"
            expected["evidence"] = [first, *expected["evidence"][1:]]
        elif n % 4 == 2 and expected.get("evidence"):
            expected["evidence"] = [{"locator": {"chunk_id": "nope"}}, *expected["evidence"]]
        results.append(r.model_copy(update={"metadata": {**r.metadata, "expected": expected}}))
    return report.model_copy(update={"case_results": tuple(results)})


@pytest.mark.parametrize(
    ("options", "column_path"),
    [
        ({"hostile": True}, "all"),
        ({"expected_metadata": False}, "some"),  # evidence only in score metadata: records
        ({"partial": True}, "all"),
        ({"judge": False, "errors": False}, "all"),
        ({"odd": True}, "some"),  # a text or a locator to match: those cases as records
    ],
)
def test_details_from_columns_equal_details_from_records(tmp_path, options, column_path):
    from heta_notebook.display import _explorer_data as explorer_data
    from heta_notebook.display import _explorer_details as explorer_details

    odd = options.pop("odd", False)
    report = make_report(14, **options)
    report = _with_odd_evidence(report) if odd else report
    lazy = _columnar_copy(report, tmp_path / "rep")
    fast = []
    original = explorer_details._RowDetails._fast
    rows = [0, 5, 6, 41]
    with pytest.MonkeyPatch.context() as patch:  # the reference: every case as a record
        patch.setattr(explorer_details._RowDetails, "_fast", lambda self, row, evidence: False)
        by_records = encode_report(report), explorer_data.encode_details(report, rows)

    def spy(self, row, evidence):
        fast.append(original(self, row, evidence))
        return fast[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(explorer_details._RowDetails, "_fast", spy)
        for source in (lazy, report):  # stored and in memory: the same columns
            assert encode_report(source) == by_records[0]
            assert explorer_data.encode_details(source, rows) == by_records[1]
    assert column_path == ("all" if all(fast) else "some" if any(fast) else "none")
    assert explorer_data.search_texts(lazy) == explorer_data.search_texts(report)


def test_preview_of_no_rows_and_of_failed_cases_only(tmp_path):
    from heta_notebook.display._explorer_data import encode_preview

    report = make_report(30)
    lazy = _columnar_copy(report, tmp_path / "rep")
    assert encode_preview(lazy, [])["rows"] == []
    failed = [i for i, r in enumerate(report.case_results) if r.error is not None]
    preview = encode_preview(lazy, failed)
    full = encode_report(report)
    for k, row in enumerate(failed):
        view = {key: v for key, v in _case_view(full, row).items() if key != "details"}
        assert _case_view(preview, k) == view


def test_large_columnar_comparison_fills_in_from_its_preview(tmp_path, monkeypatch):
    """A comparison of large columnar reports shows the current page's cases at once (a
    preview per report), then every embedded case's index with the page's details (the same
    case ids in every report); other details come on request."""
    import threading

    from heta_notebook.analysis._compare import compare
    from heta_notebook.display import _widgets as widgets
    from heta_notebook.display._comparison_explorer import report_rows

    monkeypatch.setattr(widgets, "EAGER_RESULTS", 50)  # "large": more results than that
    hold = threading.Event()  # the full payloads wait until the previews are checked
    real_encode = widgets.encode_report

    def held(*args, **kwargs):
        assert hold.wait(60)
        return real_encode(*args, **kwargs)

    monkeypatch.setattr(widgets, "encode_report", held)
    a = make_report(30, label="base", report_id="base")
    b = make_report(30, label="shifted", report_id="shifted", seed=1, quality_shift=-0.2)
    records = {"base": a, "shifted": b}
    comparison = compare(
        {k: _columnar_copy(r, tmp_path / k) for k, r in records.items()}, baseline="base"
    )
    explorer = comparison.explore(max_cases=60)  # the page: 15 cases × 3 modes embedded
    explorer.select(explorer.rows["case_id"].iloc[20])  # on page 2: that page comes first
    shown = list(explorer.page_rows()["case_id"])
    models = explorer.widget.data
    modes = {k: [v.mode for v in (explorer.a, explorer.b) if v.report == k] for k in records}
    first = {k: report_rows(records[k], shown, modes[k]) for k in records}
    assert all(first.values())
    for label, data in models.items():
        preview = unpack(data.payload)
        assert preview["preview"] is True and preview["rows"] == first[label]
        assert {preview["strings"][j] for j in preview["cases"]["case_id"]} == set(shown)
    static = explorer.static_html()  # no record read for the static view of a large one
    assert "explorer.detail_html()" in static and "hn-sides" not in static
    assert all(q in static for q in explorer.page_rows()["query"])
    hold.set()
    embedded = {}
    for label, data in models.items():
        assert data.wait(60)
        payload = payload_of(data)
        report = records[label]
        full = encode_report(report, max_cases=None)  # every case with its details, by row
        assert "preview" not in payload and len(payload["rows"]) == 60
        assert set(first[label]) <= set(payload["rows"])
        assert payload["n_detailed"] == len(first[label])
        for i, row in enumerate(payload["rows"]):
            view, expected = _case_view(payload, i), _case_view(full, row)
            if row not in first[label]:
                expected = {k: v for k, v in expected.items() if k != "details"}
            assert view == expected
        embedded[label] = {payload["strings"][j] for j in payload["cases"]["case_id"]}
        other = next(r for r in payload["rows"] if r not in first[label])
        sent = []
        monkeypatch.setattr(data, "send", sent.append)
        data._on_msg(data, {"type": "details", "rows": [other]}, [])
        reply = sent[0]
        assert reply["rows"] == [other] and "error" not in reply
        got = {
            "rows": [other],
            "strings": reply["strings"],
            "cases": {  # the index is not in a reply: blanks
                c: reply["cases"].get(c, [[] if c == "labels" else -1]) for c in full["cases"]
            },
            "scores": {
                n: {**{f: [col[f][other]] for f in ("v", "s", "p")}, **reply["scores"][n]}
                for n, col in full["scores"].items()
            },
        }
        assert _case_view(got, 0)["details"] == _case_view(full, other)["details"]
    assert embedded["base"] == embedded["shifted"]  # the same cases side by side


def test_small_comparison_embeds_every_detail_at_once():
    from heta_notebook.analysis._compare import compare

    a = make_report(10, label="base", report_id="base")
    b = make_report(10, label="shifted", report_id="shifted", seed=1)
    for data in compare({"base": a, "shifted": b}).explore().widget.data.values():
        payload = unpack(data.payload)
        assert data.ready.is_set() and payload["n_detailed"] == len(payload["rows"])
    assert "hn-sides" in compare({"base": a, "shifted": b}).explore().static_html()


def test_page_queries_read_from_codes_are_the_aligned_ones(tmp_path):
    from heta_notebook.analysis._compare import compare
    from heta_notebook.display._comparison_explorer import case_queries, case_rows

    a = make_report(12, label="base", report_id="base")
    b = make_report(14, label="more", report_id="more", seed=1)  # cases only B has
    lazy = {k: _columnar_copy(r, tmp_path / k) for k, r in {"base": a, "more": b}.items()}
    comparison = compare(lazy, baseline="base")
    x = comparison.explore()
    ids = x.rows["case_id"].to_numpy()
    got = case_queries(comparison, ids)  # before the aligned queries are built
    assert comparison.aligned.queries._data is None
    assert got == [comparison.aligned.queries.get(c, "") for c in ids]
    assert list(x.page_rows()["query"]) == got[:15]
    full = case_rows(comparison, x.a, x.b, x.score, "all")
    assert list(full.columns) == ["case_id", "query", "value_a", "value_b", "delta"]
    assert full.drop(columns="query").equals(x.rows) and list(full["query"]) == got


@pytest.mark.parametrize("per_part", [5_000, 2])
@pytest.mark.parametrize("odd", [False, True])
def test_misses_of_some_rows_are_the_whole_reports_rows_for_those_cases(
    tmp_path, odd, per_part, monkeypatch
):
    """``evidence_misses(rows=...)`` (an explorer's embedded rows of a large report) gives,
    for those cases, the very rows of the whole report's classification, stored or not, by
    the column rules and (``odd``: locators and texts) record by record, in one part or in
    parts of ``per_part`` rows."""
    import numpy as np
    import pandas as pd

    from heta_notebook.analysis import _misses
    from heta_notebook.analysis._misses import evidence_misses

    monkeypatch.setattr(_misses, "ROWS_PER_PART", per_part)

    report = make_report(14)
    report = _with_odd_evidence(report) if odd else report
    rows = np.asarray([1, 5, 6, 20, 41])
    for source in (report, _columnar_copy(report, tmp_path / "rep")):
        whole = evidence_misses(source)
        frames = source.frames()
        keys = set(
            zip(
                frames.case_column("case_id")[rows].tolist(),
                frames.case_column("query_mode")[rows].tolist(),
                strict=True,
            )
        )
        picked = [key in keys for key in zip(whole["case_id"], whole["query_mode"], strict=True)]
        expected = whole[picked].reset_index(drop=True)
        got = evidence_misses(source, rows=rows)
        assert len(got) and len(got) < len(whole)
        pd.testing.assert_frame_equal(got, expected)


def test_a_large_reports_explorer_classifies_only_its_embedded_rows(tmp_path, monkeypatch):
    """Past ``WHOLE_MISSES`` case results the explorer's miss and found indexes come from its
    embedded rows alone, equal to those of the whole report's classification."""
    from heta_notebook.display import _explorer_details as explorer_details

    report = make_report(30)
    lazy = _columnar_copy(report, tmp_path / "rep")
    whole = encode_report(lazy, max_cases=12, details=[0, 1, 2])
    monkeypatch.setattr(explorer_details, "WHOLE_MISSES", 10)
    asked = []
    original = explorer_details._miss_rows_of
    monkeypatch.setattr(
        explorer_details,
        "_miss_rows_of",
        lambda r, rows: asked.append(rows) or original(r, rows),
    )
    fresh = _columnar_copy(report, tmp_path / "again")
    assert encode_report(fresh, max_cases=12, details=[0, 1, 2]) == whole
    assert len(asked) == 1 and len(asked[0]) == 12  # once, for the embedded rows


def _without_saved_misses(folder):
    """The report saved in ``folder`` as a save before the ``misses`` table left it (no
    such table, a header that names none), opened again."""
    import json

    from heta_notebook.reports._folder import open_report
    from heta_notebook.reports._stored import _HEADER_DIGEST, header_digest

    header = json.loads((folder / "header.json").read_text())
    (folder / header["files"].pop("misses")["name"]).unlink()
    header[_HEADER_DIGEST] = header_digest(header)
    (folder / "header.json").write_text(json.dumps(header))
    return open_report(folder)


def _every_class_report():
    """The constructed cases of every miss class (stages, deep ranks, answer step, texts)."""
    from tests.test_misses import _report
    from tests.test_misses_fast import _every_class

    cases = [
        case.model_copy(update={"case_id": f"{case.case_id}-{copy}"})
        for copy in range(3)  # row groups of 7 cases: several, and a cap leaves some out
        for case in _every_class()
    ]
    return _report("every-class", cases)


@pytest.mark.parametrize("build", [make_report, _every_class_report])
def test_a_saved_report_keeps_its_miss_rows_and_its_explorer_reads_them(
    tmp_path, monkeypatch, build
):
    """A save keeps the miss rows it classified for the header's counts (the ``misses``
    table): they equal ``misses(level="evidence")``'s, and the explorer of the saved report
    reads them (nothing classified), whole or for a capped subset, giving the payload of
    the records."""
    import json

    import pandas as pd

    from heta_notebook.analysis import _misses
    from heta_notebook.display import _explorer_details as explorer_details
    from heta_notebook.reports._tables import SAVED_MISS_COLUMNS

    report = build()
    lazy = _columnar_copy(report, tmp_path / "rep")
    evidence = report.frames().misses(level="evidence")
    saved = lazy.frames().columns.saved_misses()
    assert saved is not None and len(saved["row"]) == len(evidence)
    for name in SAVED_MISS_COLUMNS:
        got = saved[name]
        if name == "stage_ranks":
            got = [None if v is None else json.loads(v) for v in got]
        assert got == [None if pd.isna(v) else v for v in evidence[name].astype(object)], name
    ids = report.frames().case_column("case_id")[saved["row"]].tolist()
    assert ids == evidence["case_id"].tolist()

    expected = {cap: encode_report(report, max_cases=cap) for cap in (None, 5, 12)}

    def refused(*_, **__):
        raise AssertionError("the explorer classified a report whose save kept its miss rows")

    monkeypatch.setattr(_misses, "_evidence_frame", refused)
    monkeypatch.setattr(explorer_details, "WHOLE_MISSES", 4)  # the subset path too
    for cap, payload in expected.items():
        fresh = _columnar_copy(report, tmp_path / f"cap{cap}")
        assert encode_report(fresh, max_cases=cap) == payload


def test_an_older_saved_report_without_miss_rows_explores_the_same(tmp_path, monkeypatch):
    """A report saved before the ``misses`` table (or by a save that had not classified)
    is classified when explored, with the same payload; saving it again keeps no rows
    (its header's counts spare the classification), saving a report that has them copies
    them."""
    from heta_notebook.display import _explorer_details as explorer_details
    from heta_notebook.reports._folder import open_report, write_report

    report = _every_class_report()
    monkeypatch.setattr(explorer_details, "WHOLE_MISSES", 4)
    for cap in (None, 12):
        _columnar_copy(report, tmp_path / f"old{cap}")
        old = _without_saved_misses(tmp_path / f"old{cap}")
        assert old.frames().columns.saved_misses() is None
        assert encode_report(old, max_cases=cap) == encode_report(report, max_cases=cap)
    write_report(tmp_path / "again", open_report(tmp_path / "oldNone"))
    assert open_report(tmp_path / "again").frames().columns.saved_misses() is None
    kept = _columnar_copy(report, tmp_path / "kept")
    write_report(tmp_path / "copied", kept)
    rows = kept.frames().columns.saved_misses()
    assert rows is not None
    assert open_report(tmp_path / "copied").frames().columns.saved_misses() == rows


def test_a_run_saved_by_its_store_keeps_its_miss_rows(tmp_path):
    """A run with a checkpointing store saves the rows (the save from the run's columns)."""
    from heta_notebook import BenchmarkRunConfig, BenchmarkRunner, ReportStore
    from tests._runner_helpers import MODES, AnswerMatch, ListBenchmark, TopHit, ToyKB, make_cases

    store = ReportStore(tmp_path / "store")
    benchmark = ListBenchmark(cases=make_cases(12), evaluators=(TopHit(), AnswerMatch()))
    run = BenchmarkRunner().run_sync(
        benchmark=benchmark,
        recipe=ToyKB(),
        knowledge_base_name="kb",
        query_modes=MODES,
        config=BenchmarkRunConfig(report_id="r", checkpoint_every=5),
        store=store,
        progress=False,
    )
    loaded = store.load("kb", "r")
    saved = loaded.frames().columns.saved_misses()
    assert saved is not None and len(saved["row"]) == len(run.report.frames().misses("evidence"))
    assert encode_report(loaded) == encode_report(run.report)
